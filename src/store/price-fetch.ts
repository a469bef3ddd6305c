// Backfill bookkeeping in SQLite: closed chunks recorded complete (price_fetch_chunks,
// never fetched again) and chunks still incomplete with their next retry
// (price_fetch_pending).
import type { Db } from './db.js';

/** A chunk's identity: market, source and its [fromMs, toMs) (a local month). */
export interface ChunkKey {
  readonly marketArea: string;
  readonly source: string;
  readonly fromMs: number;
  readonly toMs: number;
}

export interface PendingChunk extends ChunkKey {
  readonly attempts: number;
  /** Time without a price in the chunk after the last attempt, seconds. */
  readonly missingS: number;
  readonly firstGapMs: number | null;
  /** Why the last attempt left it incomplete. */
  readonly problem: string;
  readonly lastAttemptAtMs: number;
  /** No run fetches it again before this instant. */
  readonly nextAttemptAtMs: number;
}

interface PendingRow {
  market_area: string;
  source: string;
  from_ms: number;
  to_ms: number;
  attempts: number;
  missing_s: number;
  first_gap_ms: number | null;
  problem: string;
  last_attempt_at_ms: number;
  next_attempt_at_ms: number;
}

const toPending = (r: PendingRow): PendingChunk => ({
  marketArea: r.market_area,
  source: r.source,
  fromMs: r.from_ms,
  toMs: r.to_ms,
  attempts: r.attempts,
  missingS: r.missing_s,
  firstGapMs: r.first_gap_ms,
  problem: r.problem,
  lastAttemptAtMs: r.last_attempt_at_ms,
  nextAttemptAtMs: r.next_attempt_at_ms,
});

export class PriceFetchProgress {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      isDone: db.prepare<[string, string, number, number]>('SELECT 1 FROM price_fetch_chunks WHERE market_area = ? AND source = ? AND from_ms = ? AND to_ms = ?').pluck(),
      markDone: db.prepare('INSERT OR REPLACE INTO price_fetch_chunks (market_area, source, from_ms, to_ms, periods, fetched_at_ms) VALUES (?, ?, ?, ?, ?, ?)'),
      undoDone: db.prepare<[string, string, number, number]>('DELETE FROM price_fetch_chunks WHERE market_area = ? AND source = ? AND from_ms = ? AND to_ms = ?'),
      pending: db.prepare<[string, string, number, number]>('SELECT * FROM price_fetch_pending WHERE market_area = ? AND source = ? AND from_ms = ? AND to_ms = ?'),
      clearPending: db.prepare<[string, string, number, number]>('DELETE FROM price_fetch_pending WHERE market_area = ? AND source = ? AND from_ms = ? AND to_ms = ?'),
      recordPending: db.prepare(
        `INSERT OR REPLACE INTO price_fetch_pending (market_area, source, from_ms, to_ms, attempts, missing_s, first_gap_ms, problem, last_attempt_at_ms, next_attempt_at_ms)
         VALUES (@marketArea, @source, @fromMs, @toMs, @attempts, @missingS, @firstGapMs, @problem, @lastAttemptAtMs, @nextAttemptAtMs)`,
      ),
      pendingOf: db.prepare<[string]>('SELECT * FROM price_fetch_pending WHERE market_area = ? ORDER BY from_ms, source'),
    };
  }

  isDone(k: ChunkKey): boolean {
    return this.stmts.isDone.get(k.marketArea, k.source, k.fromMs, k.toMs) !== undefined;
  }

  /** Records the chunk complete (it is never fetched again) and drops its pending retry. */
  markDone(k: ChunkKey, periods: number, nowMs: number): void {
    this.stmts.markDone.run(k.marketArea, k.source, k.fromMs, k.toMs, periods, nowMs);
    this.stmts.clearPending.run(k.marketArea, k.source, k.fromMs, k.toMs);
  }

  /** A chunk recorded complete that has holes after all (recorded before completeness was checked). */
  undoDone(k: ChunkKey): void {
    this.stmts.undoDone.run(k.marketArea, k.source, k.fromMs, k.toMs);
  }

  pending(k: ChunkKey): PendingChunk | null {
    const row = this.stmts.pending.get(k.marketArea, k.source, k.fromMs, k.toMs) as PendingRow | undefined;
    return row ? toPending(row) : null;
  }

  recordPending(p: PendingChunk): void {
    this.stmts.recordPending.run(p);
  }

  /** Every incomplete chunk of a market, oldest first. */
  pendingOf(marketArea: string): PendingChunk[] {
    return (this.stmts.pendingOf.all(marketArea) as PendingRow[]).map(toPending);
  }
}
