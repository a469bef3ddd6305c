// Held messages (table outbox_held, migration 010): out of the outbox's sending order, never
// deleted before delivery. Rows move back into the outbox with the id they had, so they go
// out before every later message. The statements live here; the Outbox moves rows between the two
// tables so that its bound (rows and bytes, over both tables) stays exact.
import type { Db } from './db.js';

/** Why a message is held: the broker refused it for good, or its time lies ahead of the trusted clock. */
export type HoldReason = 'refused' | 'clock';

/** One group of held messages, for /healthz, /metrics, the status page and doctor. */
export interface HeldGroup {
  readonly reason: HoldReason;
  readonly topic: string;
  /** The MQTT 5 PUBACK reason code (reason 'refused'). */
  readonly reasonCode: number | null;
  readonly count: number;
  /** When the oldest of the group was held. */
  readonly sinceMs: number;
}

const COLUMNS = 'id, message_id, topic, payload, bytes, qos, retain, stamped_at_ms, created_at_ms';

export function heldStatements(db: Db) {
  return {
    insert: db.prepare(`INSERT OR IGNORE INTO outbox_held (${COLUMNS}, reason, reason_code, held_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    totals: db.prepare<[], { n: number; b: number }>('SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS b FROM outbox_held'),
    oldestIds: db.prepare<[number], { id: number; bytes: number }>('SELECT id, bytes FROM outbox_held ORDER BY id LIMIT ?'),
    maxId: db.prepare<[], number>('SELECT COALESCE(MAX(id), 0) FROM outbox_held').pluck(),
    deleteUpTo: db.prepare('DELETE FROM outbox_held WHERE id <= ?'),
    oldestOfTopic: db.prepare<[string], { id: number; bytes: number }>("SELECT id, bytes FROM outbox_held WHERE reason = 'refused' AND topic = ? ORDER BY id LIMIT 1"),
    sizeOfTopic: db.prepare<[string], { n: number; b: number; maxId: number | null }>(
      "SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS b, MAX(id) AS maxId FROM outbox_held WHERE reason = 'refused' AND topic = ?",
    ),
    sizeOfClock: db.prepare<[], { n: number; b: number }>("SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS b FROM outbox_held WHERE reason = 'clock'"),
    // A copy: the probe stays held too until the broker takes it, so a restart or a lost link
    // in between finds it in its place (the outbox copy is then held again, a no-op).
    copyOne: db.prepare(`INSERT OR IGNORE INTO outbox (${COLUMNS}) SELECT ${COLUMNS} FROM outbox_held WHERE id = ?`),
    deleteOne: db.prepare<[number]>('DELETE FROM outbox_held WHERE id = ? RETURNING bytes').pluck(),
    releaseTopic: db.prepare(`INSERT OR IGNORE INTO outbox (${COLUMNS}) SELECT ${COLUMNS} FROM outbox_held WHERE reason = 'refused' AND topic = ?`),
    deleteTopic: db.prepare("DELETE FROM outbox_held WHERE reason = 'refused' AND topic = ?"),
    releaseClock: db.prepare(`INSERT OR IGNORE INTO outbox (${COLUMNS}) SELECT ${COLUMNS} FROM outbox_held WHERE reason = 'clock'`),
    deleteClock: db.prepare("DELETE FROM outbox_held WHERE reason = 'clock'"),
    refusedTopics: db.prepare<[], { topic: string; code: number | null }>("SELECT topic, MAX(reason_code) AS code FROM outbox_held WHERE reason = 'refused' GROUP BY topic"),
    summary: summaryStatement(db),
    takeRetry: db.prepare<[], { include_clock: number }>('DELETE FROM outbox_retry_requests RETURNING include_clock'),
  };
}

/** Asks the running daemon to retry held messages (it looks every few seconds; after every reconnect it does anyway). */
export function requestRetry(db: Db, nowMs: number, includeClock: boolean): void {
  db.prepare('INSERT INTO outbox_retry_requests (requested_at_ms, include_clock) VALUES (?, ?)').run(nowMs, includeClock ? 1 : 0);
}

/** The held messages by reason, topic and code, read from a database the daemon may be using (doctor, CLI). */
export function readHeldGroups(db: Db): HeldGroup[] {
  return summaryStatement(db).all().map(toHeldGroup);
}

interface SummaryRow {
  reason: HoldReason;
  topic: string;
  code: number | null;
  n: number;
  since: number;
}

const summaryStatement = (db: Db) =>
  db.prepare<[], SummaryRow>(
    'SELECT reason, topic, reason_code AS code, COUNT(*) AS n, MIN(held_at_ms) AS since FROM outbox_held GROUP BY reason, topic, reason_code ORDER BY MIN(id)',
  );

export const toHeldGroup = (r: SummaryRow): HeldGroup => ({ reason: r.reason, topic: r.topic, reasonCode: r.code, count: r.n, sinceMs: r.since });

/** MQTT 5 reason codes a PUBACK may carry, in words (OASIS MQTT 5.0, 3.4.2.1). */
export const PUBACK_REASONS: Readonly<Record<number, string>> = {
  0x80: 'unspecified error',
  0x83: 'implementation specific error',
  0x87: 'not authorized',
  0x90: 'topic name invalid',
  0x91: 'packet identifier in use',
  0x97: 'quota exceeded',
  0x99: 'payload format invalid',
};

export const describeReasonCode = (code: number | null): string =>
  code === null ? 'no code' : `0x${code.toString(16).padStart(2, '0')} ${PUBACK_REASONS[code] ?? 'refused'}`;
