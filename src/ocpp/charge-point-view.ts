// What the status page, /metrics and the API show of one charge point from the store: its
// boot info, connector states, and each open transaction under its session id
// (charger-session-id.ts) with the energy delivered so far (register-readings.ts
// energySoFarWh, from the newest connector-total register value the store holds).
import type { ChargerView } from '../ops/observability/views.js';
import type { OcppStore } from '../store/ocpp.js';
import { chargerSessionId } from './charger-session-id.js';
import { ENERGY_REGISTER, energySoFarWh } from './register-readings.js';

export type ChargePointView = Pick<ChargerView, 'vendor' | 'model' | 'firmwareVersion' | 'connectors' | 'openTransactions'>;

export function chargePointView(store: OcppStore, chargePointId: string): ChargePointView {
  const { vendor, model, firmwareVersion, connectors } = store.chargePointView(chargePointId);
  return {
    vendor,
    model,
    firmwareVersion,
    connectors,
    // '': the connector's total, not one phase's.
    openTransactions: store.openWithNewestValue(chargePointId, ENERGY_REGISTER, '').map((t) => ({
      transactionId: t.transactionId,
      connectorId: t.connectorId,
      session: chargerSessionId(chargePointId, t.transactionId),
      startedAtMs: t.startedAtMs,
      energyWh: energySoFarWh(t.meterStartWh, t.newest),
    })),
  };
}
