// Day-ahead prices in SQLite: UTC, native resolution, with source and fetch time. Persistence
// only: which incoming periods replace stored ones is the merge rule (prices/merge.ts,
// applied by prices/price-merge.ts through storedForMerge/applyMerge), prices at another
// interval are prices/at-interval.ts.
import type { PricePeriod } from '../domain.js';
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

/** A stored period as the merge rule compares it. */
export interface StoredPriceRow {
  readonly startMs: number;
  readonly durationS: number;
  readonly pricePerMwh: number;
  readonly source: string;
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

  /** Made when a price changes (pricesChanged; a database migrated only as far as the prices may lack the session tables). */
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
   * The market's stored periods overlapping [fromMs, toMs), oldest first, as the merge rule
   * compares them (none read where the market has no row near the range).
   */
  storedForMerge(marketArea: string, fromMs: number, toMs: number): StoredPriceRow[] {
    const stored: StoredPriceRow[] = [];
    // Reading the stored neighbourhood is only needed where the market has rows near the range.
    if (this.stmts.anyBetween.get(marketArea, fromMs - DAY_MS, toMs) === undefined) return stored;
    for (const [startMs, durationS, pricePerMwh, source] of this.stmts.forMerge.iterate(marketArea, fromMs - DAY_MS, toMs, fromMs) as Iterable<[number, number, number, string]>) {
      stored.push({ startMs, durationS, pricePerMwh, source });
    }
    return stored;
  }

  /** Deletes the market's periods starting at `deleteStartMs`, then writes `write` (insert or overwrite at their start) with the provenance. */
  applyMerge(marketArea: string, deleteStartMs: readonly number[], write: readonly PricePeriod[], currency: string, provenance: PriceProvenance): void {
    for (const startMs of deleteStartMs) this.stmts.deleteAt.run(marketArea, startMs);
    for (const p of write) this.stmts.upsert.run(marketArea, p.startMs, p.durationS, p.pricePerMwh, currency, provenance.source, provenance.fetchedAtMs);
  }

  /** The price of [fromMs, toMs) changed: a session over it has another price record now (docs/http-api.md). */
  pricesChanged(marketArea: string, fromMs: number, toMs: number, changedAtMs: number): void {
    (this.sessions ??= new SessionStore(this.db)).pricesChanged(marketArea, fromMs, toMs, changedAtMs);
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
