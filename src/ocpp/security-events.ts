// The security events charging stations report (OCPP 2.0.1 SecurityEventNotification, use
// case A04; the 1.6 security extension sends the same message, so one log serves both
// versions): each stored (store/security-events.ts, bounded per charger, kept as long as
// sessions), counted on /metrics, logged as a warning, and the charger's last one shown on
// the status page. The HTTP API reads the store (GET /api/v1/chargers/{id}/security_events).
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../log.js';
import { SecurityEventStore, type SecurityEvent } from '../store/security-events.js';
import type { Db } from '../store/db.js';

export interface ReportedSecurityEvent {
  readonly type: string;
  readonly timestamp: string;
  readonly techInfo?: string;
}

export class SecurityEventLog {
  readonly store: SecurityEventStore;
  private readonly reported: Counter<'charge_point_id'>;
  private readonly dropped: Counter<'charge_point_id'>;

  constructor(db: Db, metrics: Registry, chargePointIds: readonly string[]) {
    this.store = new SecurityEventStore(db);
    this.reported = new Counter({
      name: 'metergate_ocpp_security_events_total',
      help: 'Security events the charging stations reported (SecurityEventNotification), stored: GET /api/v1/chargers/{id}/security_events (docs/chargers.md "Security events")',
      labelNames: ['charge_point_id'] as const,
      registers: [metrics],
    });
    this.dropped = new Counter({
      name: 'metergate_ocpp_security_events_dropped_total',
      help: 'Stored security events dropped because the charger holds the most kept per charger (the oldest go)',
      labelNames: ['charge_point_id'] as const,
      registers: [metrics],
    });
    // Every configured charger at 0, so a first event is an increase a rule can see.
    for (const id of chargePointIds) this.reported.inc({ charge_point_id: id }, 0);
  }

  /** Stores the event (inside the handler's unit); what to do once it committed. */
  record(chargePointId: string, ocppVersion: '1.6' | '2.0.1', e: ReportedSecurityEvent, nowMs: number, log: Logger): () => void {
    const atMs = Date.parse(e.timestamp);
    // A stamp that does not parse (the schema checked its form) is stored as received.
    const occurredAtMs = Number.isFinite(atMs) ? atMs : nowMs;
    const { id, dropped } = this.store.insert({ chargePointId, ocppVersion, type: e.type, occurredAtMs, receivedAtMs: nowMs, techInfo: e.techInfo ?? null });
    return () => {
      this.reported.inc({ charge_point_id: chargePointId });
      if (dropped > 0) this.dropped.inc({ charge_point_id: chargePointId }, dropped);
      // What the station said, bounded by the schema (50 and 255 characters): for the operator.
      log.warn({ security_event: e.type, security_event_id: id, at: e.timestamp, tech_info: e.techInfo }, 'security event reported by the station');
    };
  }

  last(chargePointId: string): SecurityEvent | null {
    return this.store.last(chargePointId);
  }
}
