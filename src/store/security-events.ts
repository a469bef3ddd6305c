// The security events charging stations report (migration 265): persistence only. Bounded
// per charger (the oldest go first once MAX_SECURITY_EVENTS_PER_CHARGER are kept) and purged
// with the charger's sessions (ops/retention). What reads them: the HTTP API's
// GET /api/v1/chargers/{id}/security_events, the status page, /metrics.
import type { Db } from './db.js';

/** Per charger: a station that reports every second for a day still keeps its last ones. */
export const MAX_SECURITY_EVENTS_PER_CHARGER = 1_000;

export interface SecurityEvent {
  readonly id: number;
  readonly chargePointId: string;
  readonly ocppVersion: '1.6' | '2.0.1';
  readonly type: string;
  readonly occurredAtMs: number;
  readonly receivedAtMs: number;
  readonly techInfo: string | null;
}

interface Row {
  id: number;
  charge_point_id: string;
  ocpp_version: string;
  type: string;
  occurred_at_ms: number;
  received_at_ms: number;
  tech_info: string | null;
}

const fromRow = (r: Row): SecurityEvent => ({
  id: r.id,
  chargePointId: r.charge_point_id,
  ocppVersion: r.ocpp_version === '1.6' ? '1.6' : '2.0.1',
  type: r.type,
  occurredAtMs: r.occurred_at_ms,
  receivedAtMs: r.received_at_ms,
  techInfo: r.tech_info,
});

export class SecurityEventStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      insert: db.prepare(
        `INSERT INTO ocpp_security_events (charge_point_id, ocpp_version, type, occurred_at_ms, received_at_ms, tech_info)
         VALUES (@chargePointId, @ocppVersion, @type, @occurredAtMs, @receivedAtMs, @techInfo)`,
      ),
      // The charger's oldest beyond the bound (index ocpp_security_events_charger).
      trim: db.prepare<[string, string, number]>(
        'DELETE FROM ocpp_security_events WHERE charge_point_id = ? AND id <= (SELECT id FROM ocpp_security_events WHERE charge_point_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)',
      ),
      page: db.prepare<[string, number, number], Row>('SELECT * FROM ocpp_security_events WHERE charge_point_id = ? AND id < ? ORDER BY id DESC LIMIT ?'),
      last: db.prepare<[string], Row>('SELECT * FROM ocpp_security_events WHERE charge_point_id = ? ORDER BY id DESC LIMIT 1'),
      count: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM ocpp_security_events WHERE charge_point_id = ?'),
    };
  }

  /** Stores the event, dropping the charger's oldest beyond the bound; its id and how many were dropped. */
  insert(e: Omit<SecurityEvent, 'id'>): { id: number; dropped: number } {
    return this.db.transaction(() => {
      const id = Number(this.stmts.insert.run(e).lastInsertRowid);
      const dropped = this.stmts.trim.run(e.chargePointId, e.chargePointId, MAX_SECURITY_EVENTS_PER_CHARGER).changes;
      return { id, dropped };
    })();
  }

  /** The charger's events newest first, those with an id below `beforeId` (paging), at most `limit`. */
  list(chargePointId: string, limit: number, beforeId = Number.MAX_SAFE_INTEGER): SecurityEvent[] {
    return this.stmts.page.all(chargePointId, beforeId, limit).map(fromRow);
  }

  last(chargePointId: string): SecurityEvent | null {
    const r = this.stmts.last.get(chargePointId);
    return r ? fromRow(r) : null;
  }

  count(chargePointId: string): number {
    return this.stmts.count.get(chargePointId)!.n;
  }
}
