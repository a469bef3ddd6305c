// Chunked, resumable backfill of day-ahead prices. Chunks are local calendar months of
// each market. A chunk that lies wholly before today (local) is "closed": once its prices
// are complete (no hole from the backfill's first day in it to its end), they and a
// progress row are written in ONE transaction, so after a crash (kill -9 included) the
// chunk is either recorded complete or fetched again, and a recorded chunk is never
// fetched again. A closed chunk still incomplete after a fetch ("no matching data", a
// partial answer, a failed request) is recorded pending and retried with backoff
// (retryDelayMs) on later runs. The open chunk (this month, through tomorrow) is fetched
// from its first missing period on every run and never recorded.
//
// repair() checks the whole stored history (one coverage query per market, from the
// earlier of the first stored price and the backfill start) and fetches again every closed
// chunk with a hole whose retry is due, including chunks recorded complete by older
// versions that recorded whatever came back.
import type { PricePeriod } from '../domain.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { PriceFetchProgress, type ChunkKey, type PendingChunk } from '../store/price-fetch.js';
import type { PriceGap } from '../store/prices.js';
import { requireMarket, type Market } from './markets.js';
import { silentProgress, type ProgressSink } from './progress.js';
import { addLocalDays, localDate, localDayStartMs, startOfLocalDayMs } from './timezone.js';
import type { PricesUpdated } from './updates.js';

/**
 * A source of day-ahead prices (ENTSO-E, or a stand-in in tests); with another period type
 * `P`, of another day-ahead series (exogenous/: load, wind and solar forecasts).
 */
export interface PriceFetcher<P = PricePeriod> {
  readonly name: string;
  fetchDayAhead(market: Market, fromMs: number, toMs: number, signal?: AbortSignal): Promise<{ periods: P[]; requests: number; noDataChunks: number }>;
}

/** What the backfill needs of a store (PriceStore for prices, ExogenousStore for exogenous series). */
export interface BackfillStore<P = PricePeriod> {
  gapsIn(marketArea: string, fromMs: number, toMs: number): PriceGap[];
  merge(periods: readonly P[], provenance: { source: string; fetchedAtMs: number }): { written: number };
  transaction<T>(fn: () => T): T;
  firstStartMs(marketArea: string): number | null;
}

export interface BackfillDeps<P = PricePeriod> {
  readonly db: Db;
  readonly store: BackfillStore<P>;
  readonly source: PriceFetcher<P>;
  /** What is filled, for log lines: `price` (default) or `exogenous`. */
  readonly what?: string;
  readonly logger: Logger;
  readonly now: () => number;
  readonly progress?: ProgressSink;
  readonly onUpdated?: (event: PricesUpdated) => void | Promise<void>;
}

export interface BackfillRequest {
  readonly regions: readonly string[];
  /** First local delivery date, YYYY-MM-DD. */
  readonly fromDate: string;
  readonly signal?: AbortSignal;
}

export interface Chunk {
  readonly marketArea: string;
  /** Start of the local month: with toMs, the chunk's identity in the progress tables. */
  readonly fromMs: number;
  readonly toMs: number;
  /** Prices are wanted from here: the month start, or the backfill's first day inside the month. */
  readonly wantFromMs: number;
  /** Wholly before today's local start: recorded once complete. */
  readonly closed: boolean;
  readonly label: string;
}

export interface BackfillSummary {
  readonly chunks: number;
  /** Recorded complete before, or complete in the store already. */
  readonly skipped: number;
  readonly fetched: number;
  /** Incomplete chunks whose next retry is not due yet. */
  readonly deferred: number;
  /** Closed chunks still incomplete after this run (pending, with their next retry). */
  readonly incomplete: number;
  readonly periods: number;
  readonly requests: number;
}

export interface RepairSummary {
  /** Closed chunks with a hole in the stored history. */
  readonly chunksWithGaps: number;
  readonly fetched: number;
  readonly deferred: number;
  readonly completed: number;
  readonly periods: number;
}

const HOUR_MS = 3_600_000;
/** First retry of an incomplete chunk an hour later, doubling per attempt, at most weekly. */
const RETRY_BASE_MS = HOUR_MS;
const RETRY_MAX_MS = 7 * 24 * HOUR_MS;

/** How long after its `attempts`-th incomplete fetch a chunk is tried again. */
export function retryDelayMs(attempts: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, Math.min(attempts - 1, 30)));
}

function nextMonthDate(localDay: string): string {
  const [y, m] = [Number(localDay.slice(0, 4)), Number(localDay.slice(5, 7))];
  return `${m === 12 ? y + 1 : y}-${String(m === 12 ? 1 : m + 1).padStart(2, '0')}-01`;
}

/** Monthly chunks from `fromDate` through tomorrow (local) for one market. */
export function planChunks(market: Market, fromDate: string, nowMs: number): Chunk[] {
  const tz = market.timeZone;
  const today = startOfLocalDayMs(tz, nowMs);
  let end = addLocalDays(tz, today, 2); // through tomorrow
  if (market.untilDate) end = Math.min(end, localDayStartMs(tz, market.untilDate));
  const chunks: Chunk[] = [];
  let want = localDayStartMs(tz, fromDate);
  while (want < end) {
    const d = localDate(tz, want);
    const monthStart = localDayStartMs(tz, `${d.slice(0, 7)}-01`);
    const monthEnd = localDayStartMs(tz, nextMonthDate(d));
    const to = Math.min(monthEnd, end);
    // A month cut short by the market's end (DE-AT-LU) is closed too once it is past.
    chunks.push({ marketArea: market.code, fromMs: monthStart, toMs: to, wantFromMs: want, closed: to <= today, label: `${market.code} ${d.slice(0, 7)}` });
    want = to;
  }
  return chunks;
}

const hours = (ms: number) => `${Math.round((ms / HOUR_MS) * 100) / 100} h`;
const missingMs = (gaps: readonly PriceGap[]) => gaps.reduce((sum, g) => sum + g.toMs - g.fromMs, 0);

type ClosedOutcome = { kind: 'complete' } | { kind: 'deferred' } | { kind: 'fetched'; periods: number; requests: number; pending: boolean };

export class Backfill<P = PricePeriod> {
  private readonly fetchProgress: PriceFetchProgress;

  constructor(private readonly deps: BackfillDeps<P>) {
    this.fetchProgress = new PriceFetchProgress(deps.db);
  }

  async run(req: BackfillRequest): Promise<BackfillSummary> {
    const { store, source, logger } = this.deps;
    const progress = this.deps.progress ?? silentProgress;
    const now = this.deps.now();
    const chunks = req.regions.flatMap((r) => planChunks(requireMarket(r), req.fromDate, now));
    progress.start(chunks.length, `backfill ${req.regions.join(',')} from ${req.fromDate}`);
    const totals = { skipped: 0, fetched: 0, deferred: 0, incomplete: 0, periods: 0, requests: 0 };
    for (const chunk of chunks) {
      if (req.signal?.aborted) break;
      if (chunk.closed && this.fetchProgress.isDone(this.keyOf(chunk))) {
        totals.skipped++;
        progress.advance(chunk.label, { periods: 0, fetched: false });
        continue;
      }
      const gaps = store.gapsIn(chunk.marketArea, chunk.wantFromMs, chunk.toMs);
      if (chunk.closed) {
        const outcome = await this.fillClosed(chunk, gaps, req.signal);
        if (outcome.kind === 'complete') totals.skipped++;
        else if (outcome.kind === 'deferred') totals.deferred++;
        else {
          totals.fetched++;
          totals.periods += outcome.periods;
          totals.requests += outcome.requests;
          if (outcome.pending) totals.incomplete++;
        }
        progress.advance(chunk.label, { periods: outcome.kind === 'fetched' ? outcome.periods : 0, fetched: outcome.kind === 'fetched' });
        continue;
      }
      if (gaps.length === 0) {
        totals.skipped++;
        progress.advance(chunk.label, { periods: 0, fetched: false });
        continue;
      }
      // Open chunk: only from the day of its first hole on; never recorded.
      const market = requireMarket(chunk.marketArea);
      const fetchFrom = Math.max(chunk.wantFromMs, startOfLocalDayMs(market.timeZone, gaps[0].fromMs));
      const result = await source.fetchDayAhead(market, fetchFrom, chunk.toMs, req.signal);
      totals.requests += result.requests;
      totals.fetched++;
      const stored = result.periods.length > 0 ? store.merge(result.periods, { source: source.name, fetchedAtMs: this.deps.now() }).written : 0;
      totals.periods += stored;
      progress.advance(chunk.label, { periods: stored, fetched: true });
      if (stored > 0) await this.deps.onUpdated?.({ marketArea: market.code, fromMs: fetchFrom, toMs: chunk.toMs, periods: stored });
    }
    const summary = { chunks: chunks.length, ...totals };
    progress.finish(
      `backfill: ${totals.fetched} chunk(s) fetched, ${totals.skipped} already complete, ${totals.deferred} waiting for their retry, ${totals.incomplete} still incomplete (retried later), ${totals.periods} periods stored, ${totals.requests} request(s)`,
    );
    logger.debug(summary, 'backfill finished');
    return summary;
  }

  /**
   * Checks the stored history of each region, from the earlier of `fromDate` and its first
   * stored price through the last closed month, with one coverage query, and fetches again
   * every closed chunk with a hole whose retry is due (also chunks recorded complete).
   */
  async repair(regions: readonly string[], fromDate: string, signal?: AbortSignal): Promise<RepairSummary> {
    const { store, logger } = this.deps;
    const totals = { chunksWithGaps: 0, fetched: 0, deferred: 0, completed: 0, periods: 0 };
    for (const region of regions) {
      const market = requireMarket(region);
      const first = store.firstStartMs(market.code);
      const fromMs = Math.min(localDayStartMs(market.timeZone, fromDate), first ?? Number.POSITIVE_INFINITY);
      const closed = planChunks(market, localDate(market.timeZone, fromMs), this.deps.now()).filter((c) => c.closed);
      if (closed.length === 0) continue;
      const gaps = store.gapsIn(market.code, closed[0].wantFromMs, closed[closed.length - 1].toMs);
      for (const chunk of closed) {
        if (signal?.aborted) return totals;
        const inChunk = clip(gaps, chunk.wantFromMs, chunk.toMs);
        if (inChunk.length === 0) continue;
        totals.chunksWithGaps++;
        const key = this.keyOf(chunk);
        if (this.fetchProgress.isDone(key)) {
          logger.warn({ chunk: chunk.label, missing: hours(missingMs(inChunk)) }, `${this.deps.what ?? 'price'} chunk recorded complete has holes; fetching it again`);
          this.fetchProgress.undoDone(key);
        }
        const outcome = await this.fillClosed(chunk, inChunk, signal);
        if (outcome.kind === 'deferred') totals.deferred++;
        if (outcome.kind === 'fetched') {
          totals.fetched++;
          totals.periods += outcome.periods;
          if (!outcome.pending) totals.completed++;
        }
      }
    }
    logger.info(totals, `${this.deps.what ?? 'price'} repair finished`);
    return totals;
  }

  private keyOf(chunk: Chunk): ChunkKey {
    return { marketArea: chunk.marketArea, source: this.deps.source.name, fromMs: chunk.fromMs, toMs: chunk.toMs };
  }

  /**
   * One closed chunk with the holes it has now: recorded complete when it has none; else,
   * once its retry is due, the local days around its holes are fetched and merged, and the
   * chunk is recorded complete or pending (with its next retry) in the same transaction.
   */
  private async fillClosed(chunk: Chunk, gaps: readonly PriceGap[], signal?: AbortSignal): Promise<ClosedOutcome> {
    const { store, source, logger } = this.deps;
    const key = this.keyOf(chunk);
    if (gaps.length === 0) {
      // Complete already (e.g. from a CSV import): nothing to fetch.
      this.fetchProgress.markDone(key, 0, this.deps.now());
      return { kind: 'complete' };
    }
    const before = this.fetchProgress.pending(key);
    if (before && before.nextAttemptAtMs > this.deps.now()) return { kind: 'deferred' };
    const market = requireMarket(chunk.marketArea);
    const tz = market.timeZone;
    const fetchFrom = Math.max(chunk.wantFromMs, startOfLocalDayMs(tz, gaps[0].fromMs));
    const fetchTo = Math.min(chunk.toMs, addLocalDays(tz, startOfLocalDayMs(tz, gaps[gaps.length - 1].toMs - 1), 1));
    const pendingAfter = (remaining: readonly PriceGap[], problem: string): PendingChunk => {
      const attempts = (before?.attempts ?? 0) + 1;
      const nowMs = this.deps.now();
      return { ...key, attempts, missingS: missingMs(remaining) / 1000, firstGapMs: remaining[0]?.fromMs ?? null, problem, lastAttemptAtMs: nowMs, nextAttemptAtMs: nowMs + retryDelayMs(attempts) };
    };
    let result: Awaited<ReturnType<PriceFetcher<P>['fetchDayAhead']>>;
    try {
      result = await source.fetchDayAhead(market, fetchFrom, fetchTo, signal);
    } catch (err) {
      // Stopping is not an attempt; anything else is, so later runs do not hammer a failing chunk.
      if (!signal?.aborted) this.fetchProgress.recordPending(pendingAfter(gaps, `request failed: ${(err as Error).message}`));
      throw err;
    }
    const done = store.transaction(() => {
      const written = result.periods.length > 0 ? store.merge(result.periods, { source: source.name, fetchedAtMs: this.deps.now() }).written : 0;
      const remaining = store.gapsIn(chunk.marketArea, chunk.wantFromMs, chunk.toMs);
      if (remaining.length === 0) {
        this.fetchProgress.markDone(key, written, this.deps.now());
        return { written, pending: null };
      }
      const problem =
        result.periods.length === 0 && result.noDataChunks > 0
          ? 'the platform answered "no matching data"'
          : `${hours(missingMs(remaining))} still without a price after ${result.periods.length} period(s) came back`;
      const pending = pendingAfter(remaining, problem);
      this.fetchProgress.recordPending(pending);
      return { written, pending };
    });
    if (done.pending) {
      const p = done.pending;
      logger.warn({ chunk: chunk.label, missing: hours(p.missingS * 1000), attempt: p.attempts, problem: p.problem, nextAttemptAt: new Date(p.nextAttemptAtMs).toISOString() }, `${this.deps.what ?? 'price'} chunk incomplete; retried later`);
    }
    if (done.written > 0) await this.deps.onUpdated?.({ marketArea: market.code, fromMs: fetchFrom, toMs: fetchTo, periods: done.written });
    return { kind: 'fetched', periods: done.written, requests: result.requests, pending: done.pending !== null };
  }
}

/** The parts of `gaps` inside [fromMs, toMs). */
function clip(gaps: readonly PriceGap[], fromMs: number, toMs: number): PriceGap[] {
  const out: PriceGap[] = [];
  for (const g of gaps) {
    const from = Math.max(g.fromMs, fromMs);
    const to = Math.min(g.toMs, toMs);
    if (from < to) out.push({ fromMs: from, toMs: to });
  }
  return out;
}
