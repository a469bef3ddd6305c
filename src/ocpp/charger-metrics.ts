// /metrics per charger (issue 22 item 4), read from the same views as the status page
// (central-system.ts chargerViews), so the two never disagree: what it is (firmware,
// supported feature profiles), when it was last heard, each connector's status and open
// transaction (the strategy in force is metergate_ocpp_charging_strategy, registered with
// the strategies). Series of a state that changed are dropped (reset on each
// scrape), so a connector has one status series at a time.
import { Gauge, type Registry } from 'prom-client';
import type { ChargerView } from '../ops/observability/views.js';

export function registerChargerMetrics(metrics: Registry, views: () => readonly ChargerView[]): void {
  new Gauge({
    name: 'metergate_ocpp_charger_info',
    help: 'A charge point as it last booted: vendor, model and firmware from its BootNotification, the OCPP version of its current or last connection (always 1; absent before its first boot)',
    labelNames: ['charge_point_id', 'vendor', 'model', 'firmware', 'ocpp_version'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const c of views()) if (c.vendor !== null) this.set({ charge_point_id: c.chargePointId, vendor: c.vendor, model: c.model ?? '', firmware: c.firmwareVersion ?? '', ocpp_version: c.ocppVersion ?? '' }, 1);
    },
  });
  new Gauge({
    name: 'metergate_ocpp_charger_supported_profile',
    help: 'A feature profile the charge point declared in SupportedFeatureProfiles (1 per profile; none while not read)',
    labelNames: ['charge_point_id', 'profile'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const c of views()) for (const profile of c.supportedProfiles ?? []) this.set({ charge_point_id: c.chargePointId, profile }, 1);
    },
  });
  new Gauge({
    name: 'metergate_ocpp_charger_last_message_timestamp_seconds',
    help: 'When the charge point last sent a call (Unix time; absent before its first since the gateway started)',
    labelNames: ['charge_point_id'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const c of views()) if (c.lastMessageAtMs !== null) this.set({ charge_point_id: c.chargePointId }, Math.round(c.lastMessageAtMs / 1000));
    },
  });
  new Gauge({
    name: 'metergate_ocpp_connector_status',
    help: 'Each connector\'s last reported status (StatusNotification; 1, one series per connector)',
    labelNames: ['charge_point_id', 'connector_id', 'status', 'error_code'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const c of views()) for (const k of c.connectors) this.set({ charge_point_id: c.chargePointId, connector_id: String(k.connectorId), status: k.status, error_code: k.errorCode }, 1);
    },
  });
  new Gauge({
    name: 'metergate_ocpp_connector_open_transaction_id',
    help: 'The transaction open on a connector (its transactionId; 0: none)',
    labelNames: ['charge_point_id', 'connector_id'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const c of views()) {
        const ids = new Set([...c.connectors.map((k) => k.connectorId).filter((id) => id > 0), ...c.openTransactions.map((t) => t.connectorId)]);
        for (const connectorId of ids) {
          const open = c.openTransactions.filter((t) => t.connectorId === connectorId).at(-1);
          this.set({ charge_point_id: c.chargePointId, connector_id: String(connectorId) }, open?.transactionId ?? 0);
        }
      }
    },
  });
}
