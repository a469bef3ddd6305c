// The security events charging stations report (OCPP 2.0.1 SecurityEventNotification, use
// case A04; the 1.6 security extension sends the same message, so one log serves both
// versions): each stored (store/security-events.ts, bounded per charger, kept as long as
// sessions), counted on /metrics by severity, and the charger's last one shown on the status
// page. Severity is the specification's (security-event-severity.ts): a critical event is a
// warning, a listed non-critical one information, a vendor's own type shown as it is. The HTTP API reads the store (GET /api/v1/chargers/{id}/security_events).
import { Counter, type Registry } from 'prom-client';
import { SECURITY_EVENT_SEVERITIES, securityEventSeverity } from './security-event-severity.js';
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
  private readonly reported: Counter<'charge_point_id' | 'severity'>;
  private readonly dropped: Counter<'charge_point_id'>;

  constructor(db: Db, metrics: Registry, chargePointIds: readonly string[]) {
    this.store = new SecurityEventStore(db);
    this.reported = new Counter({
      name: 'metergate_ocpp_security_events_total',
      help: 'Security events the charging stations reported (SecurityEventNotification), stored: GET /api/v1/chargers/{id}/security_events; severity critical, routine or unknown (a type the specification does not list) (docs/chargers.md "Security events")',
      labelNames: ['charge_point_id', 'severity'] as const,
      registers: [metrics],
    });
    this.dropped = new Counter({
      name: 'metergate_ocpp_security_events_dropped_total',
      help: 'Stored security events dropped because the charger holds the most kept per charger (the oldest go)',
      labelNames: ['charge_point_id'] as const,
      registers: [metrics],
    });
    // Every configured charger at 0, so a first event is an increase a rule can see.
    for (const id of chargePointIds) for (const severity of SECURITY_EVENT_SEVERITIES) this.reported.inc({ charge_point_id: id, severity }, 0);
  }

  /** Stores the event (inside the handler's unit); what to do once it committed. */
  record(chargePointId: string, ocppVersion: '1.6' | '2.0.1', e: ReportedSecurityEvent, nowMs: number, log: Logger): () => void {
    const atMs = Date.parse(e.timestamp);
    // A stamp that does not parse (the schema checked its form) is stored as received.
    const occurredAtMs = Number.isFinite(atMs) ? atMs : nowMs;
    const { id, dropped } = this.store.insert({ chargePointId, ocppVersion, type: e.type, occurredAtMs, receivedAtMs: nowMs, techInfo: e.techInfo ?? null });
    const severity = securityEventSeverity(ocppVersion, e.type);
    return () => {
      this.reported.inc({ charge_point_id: chargePointId, severity });
      if (dropped > 0) this.dropped.inc({ charge_point_id: chargePointId }, dropped);
      // What the station said, bounded by the schema (50 and 255 characters): for the operator.
      const fields = { security_event: e.type, severity, security_event_id: id, at: e.timestamp, tech_info: e.techInfo };
      if (severity === 'critical') log.warn(fields, 'critical security event reported by the station');
      else log.info(fields, 'security event reported by the station');
    };
  }

  last(chargePointId: string): SecurityEvent | null {
    return this.store.last(chargePointId);
  }
}
