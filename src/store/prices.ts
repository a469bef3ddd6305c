// Day-ahead prices in SQLite: UTC, native resolution, with source and fetch time.
import type { PricePeriod } from '../domain.js';
import { requireMarket } from '../prices/markets.js';
import { KEPT_OUTCOMES, planMerge, type MergeOutcome, type MergeRun, type StoredPeriod } from '../prices/merge.js';
import { resample } from '../prices/resample.js';
import type { Db } from './db.js';
import { SessionStore } from './sessions.js';

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

/** What a merge did: periods written, every incoming period's outcome, and runs of all but `unchanged`. */
export interface PriceMergeReport {
  readonly written: number;
  readonly counts: Readonly<Record<MergeOutcome, number>>;
  readonly runs: readonly MergeRun[];
}

export interface MergeOptions {
  /** Let coarser periods replace finer stored ones, and a lower-ranked source a higher one (`prices import --replace`). */
  readonly replace?: boolean;
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

/** Merge outcomes that change a stored price. */
const PRICE_CHANGES: ReadonlySet<MergeOutcome> = new Set(['corrected', 'refined', 'replaced']);

export class PriceStore {
  private readonly stmts;

  /** Made when a price changes (a database migrated only as far as the prices may lack the session tables). */
  private sessions?: SessionStore;

  constructor(private readonly db: Db) {
    this.stmts = {
      deleteAt: db.prepare<[string, number]>('DELETE FROM prices WHERE market_area = ? AND start_ms = ?'),
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
      // The same periods as three columns, row by row (forEachNative).
      rangeRaw: db
        .prepare<[string, number, number, number]>(
          `SELECT start_ms, duration_s, price_per_mwh FROM prices
           WHERE market_area = ? AND start_ms >= ? AND start_ms < ? AND start_ms + duration_s * 1000 > ? ORDER BY start_ms`,
        )
        .raw(),
      rangeFull: db.prepare<[string, number, number, number]>(
        `SELECT market_area, start_ms, duration_s, price_per_mwh, currency, source, fetched_at_ms FROM prices
         WHERE market_area = ? AND start_ms >= ? AND start_ms < ? AND start_ms + duration_s * 1000 > ? ORDER BY start_ms`,
      ),
      // What merge() compares against: four columns as arrays (objects of every column cost 5x).
      forMerge: db
        .prepare<[string, number, number, number]>('SELECT start_ms, duration_s, price_per_mwh, source FROM prices WHERE market_area = ? AND start_ms >= ? AND start_ms < ? AND start_ms + duration_s * 1000 > ? ORDER BY start_ms')
        .raw(),
      any: db.prepare<[string]>('SELECT 1 FROM prices WHERE market_area = ? LIMIT 1').pluck(),
      first: db.prepare<[string]>('SELECT min(start_ms) FROM prices WHERE market_area = ?').pluck(),
      // Coverage in SQL (gapsIn): the end of the period running into a range, the range's
      // first start and last end, and every hole between consecutive periods inside it.
      endBefore: db.prepare<[string, number, number]>('SELECT max(start_ms + duration_s * 1000) FROM prices WHERE market_area = ? AND start_ms >= ? AND start_ms < ?').pluck(),
      span: db.prepare<[string, number, number]>('SELECT min(start_ms) AS first, max(start_ms + duration_s * 1000) AS lastEnd FROM prices WHERE market_area = ? AND start_ms >= ? AND start_ms < ?'),
      holes: db
        .prepare<[string, number, number]>(
          `SELECT prev_end, start_ms FROM (
             SELECT start_ms, LAG(start_ms + duration_s * 1000) OVER (ORDER BY start_ms) AS prev_end
             FROM prices WHERE market_area = ? AND start_ms >= ? AND start_ms < ?)
           WHERE start_ms > prev_end`,
        )
        .raw(),
      all: db.prepare<[string]>('SELECT start_ms, duration_s FROM prices WHERE market_area = ? ORDER BY start_ms').raw(),
      sources: db.prepare<[string]>('SELECT DISTINCT source FROM prices WHERE market_area = ? ORDER BY source').pluck(),
      markets: db.prepare('SELECT DISTINCT market_area FROM prices ORDER BY market_area').pluck(),
      lastEnd: db.prepare<[string]>('SELECT start_ms + duration_s * 1000 FROM prices WHERE market_area = ? ORDER BY start_ms DESC LIMIT 1').pluck(),
    };
  }

  /**
   * Stores periods by the merge rule of src/prices/merge.ts (a coarser period never
   * replaces finer stored ones; corrections need a source ranking at least as high),
   * idempotent, in one transaction. Returns the number of rows written.
   */
  upsert(periods: readonly PricePeriod[], provenance: PriceProvenance): number {
    return this.merge(periods, provenance).written;
  }

  /** Like upsert(), with the report of what was stored, corrected, replaced or kept out. */
  merge(periods: readonly PricePeriod[], provenance: PriceProvenance, options: MergeOptions = {}): PriceMergeReport {
    const byMarket = new Map<string, PricePeriod[]>();
    for (const p of periods) {
      if (!Number.isFinite(p.pricePerMwh)) throw new RangeError(`price for ${p.marketArea} at ${new Date(p.startMs).toISOString()} is not a number`);
      if (!Number.isInteger(p.durationS) || p.durationS <= 0) throw new RangeError(`period of ${p.marketArea} at ${new Date(p.startMs).toISOString()} has length ${p.durationS} s`);
      let list = byMarket.get(p.marketArea);
      if (!list) byMarket.set(p.marketArea, (list = []));
      list.push(p);
    }
    const run = this.db.transaction(() => {
      let written = 0;
      const counts = Object.fromEntries(['filled', 'unchanged', 'corrected', 'refined', 'replaced', ...KEPT_OUTCOMES].map((o) => [o, 0])) as Record<MergeOutcome, number>;
      const runs: MergeRun[] = [];
      for (const [area, list] of byMarket) {
        const currency = requireMarket(area).currency;
        const sorted = list.every((p, k) => k === 0 || list[k - 1].startMs <= p.startMs) ? list : [...list].sort((a, b) => a.startMs - b.startMs);
        for (let k = 1; k < sorted.length; k++) {
          if (sorted[k].startMs < sorted[k - 1].startMs + sorted[k - 1].durationS * 1000) {
            throw new RangeError(`periods of ${area} overlap at ${new Date(sorted[k].startMs).toISOString()}: nothing stored`);
          }
        }
        const lo = sorted[0].startMs;
        const last = sorted[sorted.length - 1];
        const hi = last.startMs + last.durationS * 1000;
        // Reading the stored neighbourhood is only needed where the market has rows near the batch.
        const stored: StoredPeriod[] = [];
        if (this.stmts.anyBetween.get(area, lo - DAY_MS, hi) !== undefined) {
          for (const [startMs, durationS, pricePerMwh, source] of this.stmts.forMerge.iterate(area, lo - DAY_MS, hi, lo) as Iterable<[number, number, number, string]>) {
            stored.push({ marketArea: area, startMs, durationS, pricePerMwh, source });
          }
        }
        const plan = planMerge(stored, sorted, { source: provenance.source, replace: options.replace });
        for (const startMs of plan.deleteStartMs) this.stmts.deleteAt.run(area, startMs);
        for (const p of plan.write) this.stmts.upsert.run(area, p.startMs, p.durationS, p.pricePerMwh, currency, provenance.source, provenance.fetchedAtMs);
        written += plan.write.length;
        // A session over a price that changed has another price record now (docs/http-api.md).
        for (const r of plan.runs) {
          if (PRICE_CHANGES.has(r.outcome) && r.maxChangePerMwh !== 0) (this.sessions ??= new SessionStore(this.db)).pricesChanged(area, r.fromMs, r.toMs, provenance.fetchedAtMs);
        }
        for (const [o, n] of Object.entries(plan.counts)) counts[o as MergeOutcome] += n;
        runs.push(...plan.runs);
      }
      return { written, counts, runs };
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

  /**
   * native()'s periods, oldest first, handed to `visit` one at a time as SQLite steps
   * through them: a reader that folds them (the forecaster's day matrix) never holds a
   * year of them as objects.
   */
  forEachNative(marketArea: string, fromMs: number, toMs: number, visit: (startMs: number, durationS: number, pricePerMwh: number) => void): void {
    for (const [startMs, durationS, pricePerMwh] of this.stmts.rangeRaw.iterate(marketArea, fromMs - DAY_MS, toMs, fromMs) as Iterable<[number, number, number]>) visit(startMs, durationS, pricePerMwh);
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

  /** Start of the first stored period of a market, or null. */
  firstStartMs(marketArea: string): number | null {
    return (this.stmts.first.get(marketArea) as number | null) ?? null;
  }

  /**
   * Holes in [fromMs, toMs) for a market: ranges with no stored period. One query over
   * the index, so the whole history of a market is cheap to check (the daily repair).
   */
  gapsIn(marketArea: string, fromMs: number, toMs: number): PriceGap[] {
    if (toMs <= fromMs) return [];
    const gaps: PriceGap[] = [];
    // Periods are at most a day long: one starting a day before fromMs may run into the range.
    const cursor = Math.max(fromMs, (this.stmts.endBefore.get(marketArea, fromMs - DAY_MS, fromMs) as number | null) ?? fromMs);
    const { first, lastEnd } = this.stmts.span.get(marketArea, fromMs, toMs) as { first: number | null; lastEnd: number | null };
    if (first === null || lastEnd === null) return cursor < toMs ? [{ fromMs: cursor, toMs }] : [];
    if (first > cursor) gaps.push({ fromMs: cursor, toMs: first });
    for (const [prevEnd, startMs] of this.stmts.holes.iterate(marketArea, fromMs, toMs) as Iterable<[number, number]>) gaps.push({ fromMs: prevEnd, toMs: startMs });
    if (lastEnd < toMs) gaps.push({ fromMs: Math.max(lastEnd, cursor), toMs });
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
