// Day-ahead prices in SQLite: UTC, native resolution, with source and fetch time.
import type { PricePeriod } from '../domain.js';
import { requireMarket } from '../prices/markets.js';
import { resample } from '../prices/resample.js';
import type { Db } from './db.js';

export interface PriceProvenance {
  /** Where the prices came from: `entsoe`, `csv:<file name>`, ... */
  readonly source: string;
  readonly fetchedAtMs: number;
}

export interface StoredPricePeriod extends PricePeriod, PriceProvenance {
  readonly currency: string;
}

/** A stretch of time without prices between two stored periods (or before the requested end). */
export interface PriceGap {
  readonly fromMs: number;
  readonly toMs: number;
}

/** A run of consecutive periods of one length. */
export interface ResolutionSpan {
  readonly fromMs: number;
  readonly toMs: number;
  readonly durationS: number;
}

export interface PriceCoverage {
  readonly marketArea: string;
  readonly periods: number;
  readonly firstStartMs: number | null;
  /** End of the last stored period. */
  readonly lastEndMs: number | null;
  readonly resolutions: readonly ResolutionSpan[];
  /** Every hole between the first and the last period. */
  readonly gaps: readonly PriceGap[];
  readonly sources: readonly string[];
}

const DAY_MS = 86_400_000;

interface Row {
  market_area: string;
  start_ms: number;
  duration_s: number;
  price_per_mwh: number;
}

function toPeriod(r: Row): PricePeriod {
  return { marketArea: r.market_area, startMs: r.start_ms, durationS: r.duration_s, pricePerMwh: r.price_per_mwh };
}

export class PriceStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      // A new period replaces any stored period it overlaps (e.g. 60-min rows replaced
      // by 15-min rows of a corrected source), so the table never holds overlaps.
      deleteOverlapping: db.prepare(
        'DELETE FROM prices WHERE market_area = @market AND start_ms > @start - @maxMs AND start_ms < @end AND start_ms <> @start AND start_ms + duration_s * 1000 > @start',
      ),
      maxDuration: db.prepare<[string]>('SELECT max(duration_s) FROM prices WHERE market_area = ?').pluck(),
      anyBetween: db.prepare<[string, number, number]>('SELECT 1 FROM prices WHERE market_area = ? AND start_ms >= ? AND start_ms < ? LIMIT 1').pluck(),
      upsert: db.prepare(
        `INSERT INTO prices (market_area, start_ms, duration_s, price_per_mwh, currency, source, fetched_at_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (market_area, start_ms) DO UPDATE SET
           duration_s = excluded.duration_s, price_per_mwh = excluded.price_per_mwh, currency = excluded.currency,
           source = excluded.source, fetched_at_ms = excluded.fetched_at_ms`,
      ),
      range: db.prepare<[string, number, number, number]>(
        `SELECT market_area, start_ms, duration_s, price_per_mwh FROM prices
         WHERE market_area = ? AND start_ms >= ? AND start_ms < ? AND start_ms + duration_s * 1000 > ? ORDER BY start_ms`,
      ),
      rangeFull: db.prepare<[string, number, number, number]>(
        `SELECT market_area, start_ms, duration_s, price_per_mwh, currency, source, fetched_at_ms FROM prices
         WHERE market_area = ? AND start_ms >= ? AND start_ms < ? AND start_ms + duration_s * 1000 > ? ORDER BY start_ms`,
      ),
      any: db.prepare<[string]>('SELECT 1 FROM prices WHERE market_area = ? LIMIT 1').pluck(),
      all: db.prepare<[string]>('SELECT start_ms, duration_s FROM prices WHERE market_area = ? ORDER BY start_ms').raw(),
      sources: db.prepare<[string]>('SELECT DISTINCT source FROM prices WHERE market_area = ? ORDER BY source').pluck(),
      markets: db.prepare('SELECT DISTINCT market_area FROM prices ORDER BY market_area').pluck(),
      lastEnd: db.prepare<[string]>('SELECT start_ms + duration_s * 1000 FROM prices WHERE market_area = ? ORDER BY start_ms DESC LIMIT 1').pluck(),
    };
  }

  /**
   * Inserts or replaces periods (idempotent: the same rows twice leave one copy), all in
   * one transaction. Returns the number of rows written.
   */
  upsert(periods: readonly PricePeriod[], provenance: PriceProvenance): number {
    const currencies = new Map<string, string>();
    const currencyOf = (area: string) => {
      let c = currencies.get(area);
      if (!c) currencies.set(area, (c = requireMarket(area).currency));
      return c;
    };
    const run = this.db.transaction(() => {
      // Overlap removal is only needed where the market already has rows near the batch.
      const existing = new Map<string, number | null>();
      const maxMsFor = (area: string): number | null => {
        if (!existing.has(area)) {
          let lo = Number.POSITIVE_INFINITY;
          let hi = Number.NEGATIVE_INFINITY;
          for (const p of periods) {
            if (p.marketArea !== area) continue;
            lo = Math.min(lo, p.startMs - DAY_MS);
            hi = Math.max(hi, p.startMs + p.durationS * 1000);
          }
          const any = this.stmts.anyBetween.get(area, lo, hi) !== undefined;
          existing.set(area, any ? ((this.stmts.maxDuration.get(area) as number | null) ?? 0) * 1000 : null);
        }
        return existing.get(area)!;
      };
      for (const p of periods) {
        if (!Number.isFinite(p.pricePerMwh)) throw new RangeError(`price for ${p.marketArea} at ${new Date(p.startMs).toISOString()} is not a number`);
        const maxMs = maxMsFor(p.marketArea);
        if (maxMs !== null) this.stmts.deleteOverlapping.run({ market: p.marketArea, start: p.startMs, end: p.startMs + p.durationS * 1000, maxMs });
        this.stmts.upsert.run(p.marketArea, p.startMs, p.durationS, p.pricePerMwh, currencyOf(p.marketArea), provenance.source, provenance.fetchedAtMs);
      }
      return periods.length;
    });
    return run();
  }

  /** Runs `fn` in one transaction (for callers that write prices and progress together). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /** Native periods overlapping [fromMs, toMs), oldest first. */
  native(marketArea: string, fromMs: number, toMs: number): PricePeriod[] {
    const rows = this.stmts.range.all(marketArea, fromMs - DAY_MS, toMs, fromMs) as Row[];
    return rows.map(toPeriod);
  }

  /** Like native(), with currency, source and fetch time. */
  nativeWithProvenance(marketArea: string, fromMs: number, toMs: number): StoredPricePeriod[] {
    const rows = this.stmts.rangeFull.all(marketArea, fromMs - DAY_MS, toMs, fromMs) as Array<Row & { currency: string; source: string; fetched_at_ms: number }>;
    return rows.map((r) => ({ ...toPeriod(r), currency: r.currency, source: r.source, fetchedAtMs: r.fetched_at_ms }));
  }

  /**
   * Periods of `intervalS` seconds (900, 1800, 3600, ...) overlapping [fromMs, toMs),
   * aligned to the market's local clock: time-weighted mean where coarser than native,
   * the native value repeated where finer. Periods with any missing native price are
   * left out. `intervalS` undefined = native periods.
   */
  atInterval(marketArea: string, fromMs: number, toMs: number, intervalS?: number): PricePeriod[] {
    const market = requireMarket(marketArea);
    const native = this.native(market.code, fromMs - DAY_MS, toMs + DAY_MS);
    if (intervalS === undefined) return native.filter((p) => p.startMs < toMs && p.startMs + p.durationS * 1000 > fromMs);
    return resample(native, { marketArea: market.code, timeZone: market.timeZone, fromMs, toMs, intervalS });
  }

  hasPrices(marketArea: string): boolean {
    return this.stmts.any.get(marketArea) !== undefined;
  }

  /** End of the market's last stored period (one index lookup), or null without prices. */
  lastEndMs(marketArea: string): number | null {
    return (this.stmts.lastEnd.get(marketArea) as number | undefined) ?? null;
  }

  /** Market areas with at least one stored price. */
  marketAreas(): string[] {
    return this.stmts.markets.all() as string[];
  }

  /** First and last period, runs of each resolution, and every gap, for one market. */
  coverage(marketArea: string): PriceCoverage {
    const resolutions: ResolutionSpan[] = [];
    const gaps: PriceGap[] = [];
    let periods = 0;
    let firstStartMs: number | null = null;
    let prevEnd: number | null = null;
    let span: { fromMs: number; toMs: number; durationS: number } | null = null;
    for (const [startMs, durationS] of this.stmts.all.iterate(marketArea) as Iterable<[number, number]>) {
      periods++;
      const end = startMs + durationS * 1000;
      if (firstStartMs === null) firstStartMs = startMs;
      if (prevEnd !== null && startMs > prevEnd) gaps.push({ fromMs: prevEnd, toMs: startMs });
      if (span && span.durationS === durationS && span.toMs === startMs) span.toMs = end;
      else {
        if (span) resolutions.push(span);
        span = { fromMs: startMs, toMs: end, durationS };
      }
      prevEnd = end;
    }
    if (span) resolutions.push(span);
    return { marketArea, periods, firstStartMs, lastEndMs: prevEnd, resolutions: mergeSpans(resolutions), gaps, sources: this.stmts.sources.all(marketArea) as string[] };
  }

  /** Holes in [fromMs, toMs) for a market: ranges with no stored period. */
  gapsIn(marketArea: string, fromMs: number, toMs: number): PriceGap[] {
    const gaps: PriceGap[] = [];
    let cursor = fromMs;
    for (const p of this.native(marketArea, fromMs, toMs)) {
      if (p.startMs > cursor) gaps.push({ fromMs: cursor, toMs: Math.min(p.startMs, toMs) });
      cursor = Math.max(cursor, p.startMs + p.durationS * 1000);
    }
    if (cursor < toMs) gaps.push({ fromMs: cursor, toMs });
    return gaps;
  }
}

/** Spans of one resolution separated only by gaps are reported as one. */
function mergeSpans(spans: ResolutionSpan[]): ResolutionSpan[] {
  const out: ResolutionSpan[] = [];
  for (const s of spans) {
    const last = out[out.length - 1];
    if (last && last.durationS === s.durationS) out[out.length - 1] = { ...last, toMs: s.toMs };
    else out.push({ ...s });
  }
  return out;
}
