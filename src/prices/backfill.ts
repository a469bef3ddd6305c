// Chunked, resumable backfill of day-ahead prices. Chunks are local calendar months of
// each market. A chunk that lies wholly before today (local) is "closed": once fetched,
// its prices and a progress row are written in ONE transaction, so after a crash
// (kill -9 included) the chunk is either fully recorded or refetched, and a recorded
// chunk is never fetched again. The open chunk (this month, through tomorrow) is
// fetched from its first missing period on every run and never recorded as done.
import type { PricePeriod } from '../domain.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import type { PriceStore } from '../store/prices.js';
import { requireMarket, type Market } from './markets.js';
import { silentProgress, type ProgressSink } from './progress.js';
import { addLocalDays, localDate, localDayStartMs, startOfLocalDayMs } from './timezone.js';
import type { PricesUpdated } from './updates.js';

/** A source of day-ahead prices (ENTSO-E, or a stand-in in tests). */
export interface PriceFetcher {
  readonly name: string;
  fetchDayAhead(market: Market, fromMs: number, toMs: number, signal?: AbortSignal): Promise<{ periods: PricePeriod[]; requests: number; noDataChunks: number }>;
}

export interface BackfillDeps {
  readonly db: Db;
  readonly store: PriceStore;
  readonly source: PriceFetcher;
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
  readonly fromMs: number;
  readonly toMs: number;
  /** Wholly before today's local start: complete once fetched. */
  readonly closed: boolean;
  readonly label: string;
}

export interface BackfillSummary {
  readonly chunks: number;
  readonly skipped: number;
  readonly fetched: number;
  readonly periods: number;
  readonly requests: number;
}

/** Monthly chunks from `fromDate` through tomorrow (local) for one market. */
export function planChunks(market: Market, fromDate: string, nowMs: number): Chunk[] {
  const tz = market.timeZone;
  const today = startOfLocalDayMs(tz, nowMs);
  let end = addLocalDays(tz, today, 2); // through tomorrow
  if (market.untilDate) end = Math.min(end, localDayStartMs(tz, market.untilDate));
  const chunks: Chunk[] = [];
  let from = localDayStartMs(tz, fromDate);
  while (from < end) {
    const d = localDate(tz, from);
    const [y, m] = [Number(d.slice(0, 4)), Number(d.slice(5, 7))];
    const nextMonth = `${m === 12 ? y + 1 : y}-${String(m === 12 ? 1 : m + 1).padStart(2, '0')}-01`;
    const to = Math.min(localDayStartMs(tz, nextMonth), end);
    chunks.push({ marketArea: market.code, fromMs: from, toMs: to, closed: to <= today, label: `${market.code} ${d.slice(0, 7)}` });
    from = to;
  }
  return chunks;
}

export class Backfill {
  private readonly isDone;
  private readonly markDone;

  constructor(private readonly deps: BackfillDeps) {
    this.isDone = deps.db.prepare<[string, string, number, number]>('SELECT 1 FROM price_fetch_chunks WHERE market_area = ? AND source = ? AND from_ms = ? AND to_ms = ?').pluck();
    this.markDone = deps.db.prepare(
      'INSERT OR REPLACE INTO price_fetch_chunks (market_area, source, from_ms, to_ms, periods, fetched_at_ms) VALUES (?, ?, ?, ?, ?, ?)',
    );
  }

  async run(req: BackfillRequest): Promise<BackfillSummary> {
    const { store, source, logger } = this.deps;
    const progress = this.deps.progress ?? silentProgress;
    const now = this.deps.now();
    const chunks = req.regions.flatMap((r) => planChunks(requireMarket(r), req.fromDate, now));
    progress.start(chunks.length, `backfill ${req.regions.join(',')} from ${req.fromDate}`);
    let skipped = 0;
    let fetched = 0;
    let periods = 0;
    let requests = 0;
    for (const chunk of chunks) {
      if (req.signal?.aborted) break;
      const market = requireMarket(chunk.marketArea);
      if (chunk.closed && this.isDone.get(chunk.marketArea, source.name, chunk.fromMs, chunk.toMs) !== undefined) {
        skipped++;
        progress.advance(chunk.label, { periods: 0, fetched: false });
        continue;
      }
      const gaps = store.gapsIn(chunk.marketArea, chunk.fromMs, chunk.toMs);
      if (gaps.length === 0) {
        // Already complete from another source (e.g. a CSV import): nothing to fetch.
        if (chunk.closed) this.markDone.run(chunk.marketArea, source.name, chunk.fromMs, chunk.toMs, 0, this.deps.now());
        skipped++;
        progress.advance(chunk.label, { periods: 0, fetched: false });
        continue;
      }
      // Open chunk: only from the day of its first hole on.
      const fetchFrom = chunk.closed ? chunk.fromMs : Math.max(chunk.fromMs, startOfLocalDayMs(market.timeZone, gaps[0].fromMs));
      const result = await source.fetchDayAhead(market, fetchFrom, chunk.toMs, req.signal);
      requests += result.requests;
      fetched++;
      store.transaction(() => {
        if (result.periods.length > 0) store.upsert(result.periods, { source: source.name, fetchedAtMs: this.deps.now() });
        if (chunk.closed) this.markDone.run(chunk.marketArea, source.name, chunk.fromMs, chunk.toMs, result.periods.length, this.deps.now());
      });
      periods += result.periods.length;
      progress.advance(chunk.label, { periods: result.periods.length, fetched: true });
      if (result.periods.length > 0 && this.deps.onUpdated) {
        await this.deps.onUpdated({ marketArea: market.code, fromMs: fetchFrom, toMs: chunk.toMs, periods: result.periods.length });
      }
    }
    const summary = { chunks: chunks.length, skipped, fetched, periods, requests };
    progress.finish(`backfill: ${fetched} chunk(s) fetched, ${skipped} already complete, ${periods} periods stored, ${requests} request(s)`);
    logger.debug(summary, 'backfill finished');
    return summary;
  }

  /**
   * Refetches the holes of [fromMs, toMs) (whole local days around each hole), e.g. the
   * daily repair. Returns the periods stored.
   */
  async repair(regions: readonly string[], fromMs: number, toMs: number, signal?: AbortSignal): Promise<number> {
    const { store, source } = this.deps;
    let stored = 0;
    for (const region of regions) {
      const market = requireMarket(region);
      const days = new Map<number, number>();
      for (const gap of store.gapsIn(market.code, fromMs, toMs)) {
        const from = startOfLocalDayMs(market.timeZone, gap.fromMs);
        const to = addLocalDays(market.timeZone, startOfLocalDayMs(market.timeZone, gap.toMs - 1), 1);
        days.set(from, Math.max(days.get(from) ?? 0, to));
      }
      for (const [from, to] of [...days].sort((a, b) => a[0] - b[0])) {
        if (signal?.aborted) return stored;
        const result = await source.fetchDayAhead(market, from, Math.min(to, toMs), signal);
        if (result.periods.length === 0) continue;
        store.upsert(result.periods, { source: source.name, fetchedAtMs: this.deps.now() });
        stored += result.periods.length;
        await this.deps.onUpdated?.({ marketArea: market.code, fromMs: from, toMs: to, periods: result.periods.length });
      }
    }
    return stored;
  }
}
