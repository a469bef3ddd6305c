// The grid operator's dimming events as stored (migration 250): written by grid/grid-control.ts,
// read by the export route and the status page. Holds no rule.
import type { Db } from './db.js';

export interface DimmingConnector {
  readonly charge_point_id: string;
  readonly connector_id: number;
  /** Its share of the dimmed limit (A per phase) when last seen. */
  readonly share_a: number | null;
  /** The limit the charger confirmed (A); null while unknown. */
  readonly in_force_a: number | null;
  /** When it was first seen confirmed within its share (ms), null until then. */
  readonly confirmed_at_ms: number | null;
}

export interface DimmingEvent {
  readonly id: number;
  readonly startedAtMs: number;
  readonly endedAtMs: number | null;
  readonly limitW: number;
  readonly cause: 'signal' | 'signal-lost';
  readonly contacts: readonly boolean[] | null;
  readonly confirmedAtMs: number | null;
  readonly late: boolean;
  readonly connectors: readonly DimmingConnector[];
}

interface Row {
  id: number;
  started_at_ms: number;
  ended_at_ms: number | null;
  limit_w: number;
  cause: 'signal' | 'signal-lost';
  contacts: string | null;
  confirmed_at_ms: number | null;
  late: number;
  connectors: string;
}

const toEvent = (r: Row): DimmingEvent => ({
  id: r.id,
  startedAtMs: r.started_at_ms,
  endedAtMs: r.ended_at_ms,
  limitW: r.limit_w,
  cause: r.cause,
  contacts: r.contacts === null ? null : (JSON.parse(r.contacts) as boolean[]),
  confirmedAtMs: r.confirmed_at_ms,
  late: r.late === 1,
  connectors: JSON.parse(r.connectors) as DimmingConnector[],
});

export class DimmingStore {
  constructor(private readonly db: Db) {}

  start(e: { startedAtMs: number; limitW: number; cause: DimmingEvent['cause']; contacts: readonly boolean[] | null }): number {
    const r = this.db
      .prepare('INSERT INTO grid_dimming_events (started_at_ms, limit_w, cause, contacts) VALUES (?, ?, ?, ?)')
      .run(e.startedAtMs, Math.round(e.limitW), e.cause, e.contacts === null ? null : JSON.stringify(e.contacts));
    return Number(r.lastInsertRowid);
  }

  end(id: number, endedAtMs: number): void {
    this.db.prepare('UPDATE grid_dimming_events SET ended_at_ms = ? WHERE id = ? AND ended_at_ms IS NULL').run(endedAtMs, id);
  }

  progress(id: number, p: { connectors: readonly DimmingConnector[]; confirmedAtMs: number | null; late: boolean }): void {
    this.db.prepare('UPDATE grid_dimming_events SET connectors = ?, confirmed_at_ms = ?, late = ? WHERE id = ?').run(JSON.stringify(p.connectors), p.confirmedAtMs, p.late ? 1 : 0, id);
  }

  /** The event still open (not ended), if any: the newest. */
  open(): DimmingEvent | null {
    const r = this.db.prepare('SELECT * FROM grid_dimming_events WHERE ended_at_ms IS NULL ORDER BY id DESC LIMIT 1').get() as Row | undefined;
    return r ? toEvent(r) : null;
  }

  /** Events that were in force at some time in [fromMs, toMs), oldest first, at most `limit`. */
  between(fromMs: number, toMs: number, limit: number): DimmingEvent[] {
    const rows = this.db
      .prepare('SELECT * FROM grid_dimming_events WHERE started_at_ms < ? AND (ended_at_ms IS NULL OR ended_at_ms > ?) ORDER BY started_at_ms, id LIMIT ?')
      .all(toMs, fromMs, limit) as Row[];
    return rows.map(toEvent);
  }
}
