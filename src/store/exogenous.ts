// Exogenous series in SQLite (exogenous_series): day-ahead load and wind/solar forecasts
// per market area, UTC, native resolution, with source and fetch time. Persistence only:
// which source fills and which replaces, and which series the backfill chases, are
// prices/exogenous/exogenous-merge.ts's.
import type { ExogenousPoint, ExogenousSeriesName } from '../prices/exogenous/series.js';
import type { Db } from './db.js';
import type { PriceGap } from './prices.js';

export interface ExogenousProvenance {
  /** `entsoe`, `csv:<file name>`, ... */
  readonly source: string;
  readonly fetchedAtMs: number;
}

export interface StoredExogenousPoint extends ExogenousPoint, ExogenousProvenance {}

/** A stored value with the instant it was fetched (fetchedValues). */
export interface FetchedValue {
  readonly startMs: number;
  readonly durationS: number;
  readonly valueMw: number;
  readonly fetchedAtMs: number;
}

export interface ExogenousSeriesCoverage {
  readonly series: string;
  readonly points: number;
  readonly firstStartMs: number | null;
  readonly lastEndMs: number | null;
  /** Holes between the first and the last point. */
  readonly gaps: readonly PriceGap[];
  readonly sources: readonly string[];
}

interface Row {
  market_area: string;
  series: ExogenousSeriesName;
  start_ms: number;
  duration_s: number;
  value_mw: number;
  source: string;
  fetched_at_ms: number;
}

export class ExogenousStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      // A CSV file only fills periods without a value; a platform fetch replaces a value that
      // changed (a republished forecast), and leaves an unchanged one with its first fetch time,
      // which is when it was first known.
      fill: db.prepare('INSERT OR IGNORE INTO exogenous_series (market_area, series, start_ms, duration_s, value_mw, source, fetched_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      upsert: db.prepare(
        `INSERT INTO exogenous_series (market_area, series, start_ms, duration_s, value_mw, source, fetched_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (market_area, series, start_ms) DO UPDATE SET duration_s = excluded.duration_s, value_mw = excluded.value_mw, source = excluded.source, fetched_at_ms = excluded.fetched_at_ms
         WHERE exogenous_series.value_mw != excluded.value_mw OR exogenous_series.duration_s != excluded.duration_s`,
      ),
      range: db.prepare<[string, string, number, number]>('SELECT * FROM exogenous_series WHERE market_area = ? AND series = ? AND start_ms >= ? AND start_ms < ? ORDER BY start_ms'),
      fetched: db.prepare<[string, string, number, number]>('SELECT start_ms, duration_s, value_mw, fetched_at_ms FROM exogenous_series WHERE market_area = ? AND series = ? AND start_ms >= ? AND start_ms < ? ORDER BY start_ms').raw(),
      spans: db.prepare<[string, string, number, number]>('SELECT start_ms, duration_s FROM exogenous_series WHERE market_area = ? AND series = ? AND start_ms >= ? AND start_ms < ? ORDER BY start_ms').raw(),
      all: db.prepare<[string, string]>('SELECT start_ms, duration_s FROM exogenous_series WHERE market_area = ? AND series = ? ORDER BY start_ms').raw(),
      any: db.prepare<[string, string, number, number]>('SELECT 1 FROM exogenous_series WHERE market_area = ? AND series = ? AND start_ms >= ? AND start_ms < ? LIMIT 1').pluck(),
      first: db.prepare<[string, string]>('SELECT min(start_ms) FROM exogenous_series WHERE market_area = ? AND series = ?').pluck(),
      seriesOf: db.prepare<[string]>('SELECT DISTINCT series FROM exogenous_series WHERE market_area = ? ORDER BY series').pluck(),
      sources: db.prepare<[string, string]>('SELECT DISTINCT source FROM exogenous_series WHERE market_area = ? AND series = ? ORDER BY source').pluck(),
    };
  }

  /**
   * Stores points in one transaction: `fill` only periods without a value, or
   * `replace-changed` (a value that changed replaces the stored one, an unchanged one keeps
   * its first fetch time). Returns the rows written.
   */
  write(points: readonly ExogenousPoint[], provenance: ExogenousProvenance, how: 'fill' | 'replace-changed'): { written: number } {
    const stmt = how === 'fill' ? this.stmts.fill : this.stmts.upsert;
    return this.transaction(() => {
      let written = 0;
      for (const p of points) written += stmt.run(p.marketArea, p.series, p.startMs, p.durationS, p.valueMw, provenance.source, provenance.fetchedAtMs).changes;
      return { written };
    });
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /** Points of one series starting in [fromMs, toMs), oldest first. */
  points(marketArea: string, series: ExogenousSeriesName, fromMs: number, toMs: number): StoredExogenousPoint[] {
    return (this.stmts.range.all(marketArea, series, fromMs, toMs) as Row[]).map((r) => ({
      marketArea: r.market_area,
      series: r.series,
      startMs: r.start_ms,
      durationS: r.duration_s,
      valueMw: r.value_mw,
      source: r.source,
      fetchedAtMs: r.fetched_at_ms,
    }));
  }

  /**
   * Values and fetch times of one series starting in [fromMs, toMs), oldest first: what the
   * forecaster reads at every computation (two years of each series of the region and its
   * neighbours). Without points()'s three strings per row it costs 40 % of that.
   */
  fetchedValues(marketArea: string, series: ExogenousSeriesName, fromMs: number, toMs: number): FetchedValue[] {
    return (this.stmts.fetched.all(marketArea, series, fromMs, toMs) as Array<[number, number, number, number]>).map(([startMs, durationS, valueMw, fetchedAtMs]) => ({ startMs, durationS, valueMw, fetchedAtMs }));
  }

  /**
   * fetchedValues()' values, oldest first, handed to `visit` one at a time as SQLite steps
   * through them (the forecaster keeps its own shape of them; no two arrays of objects first).
   */
  forEachFetched(marketArea: string, series: ExogenousSeriesName, fromMs: number, toMs: number, visit: (startMs: number, durationS: number, valueMw: number, fetchedAtMs: number) => void): void {
    for (const [startMs, durationS, valueMw, fetchedAtMs] of this.stmts.fetched.iterate(marketArea, series, fromMs, toMs) as Iterable<[number, number, number, number]>) visit(startMs, durationS, valueMw, fetchedAtMs);
  }

  /** First stored start of one series, or null. */
  firstStartMs(marketArea: string, series: ExogenousSeriesName): number | null {
    return (this.stmts.first.get(marketArea, series) as number | null) ?? null;
  }

  /** Whether the series has a point starting in [fromMs, toMs). */
  hasPointIn(marketArea: string, series: ExogenousSeriesName, fromMs: number, toMs: number): boolean {
    return this.stmts.any.get(marketArea, series, fromMs, toMs) !== undefined;
  }

  /** Holes of one series in [fromMs, toMs). */
  seriesGapsIn(marketArea: string, series: ExogenousSeriesName, fromMs: number, toMs: number): PriceGap[] {
    if (toMs <= fromMs) return [];
    return walk(this.stmts.spans.iterate(marketArea, series, fromMs, toMs) as Iterable<[number, number]>, fromMs, toMs).gaps;
  }

  /** Per stored series of a market: points, first and last, holes, sources. */
  coverage(marketArea: string): ExogenousSeriesCoverage[] {
    return (this.stmts.seriesOf.all(marketArea) as string[]).map((series) => ({
      series,
      ...walk(this.stmts.all.iterate(marketArea, series) as Iterable<[number, number]>),
      sources: this.stmts.sources.all(marketArea, series) as string[],
    }));
  }
}

/**
 * One pass over time-ordered `[startMs, durationS]` spans: their count, first start, last end
 * and the holes between them, also before the first and after the last within [fromMs, toMs)
 * when given (the backfill's holes; coverage has only those between).
 */
function walk(spans: Iterable<[number, number]>, fromMs?: number, toMs?: number): { points: number; firstStartMs: number | null; lastEndMs: number | null; gaps: PriceGap[] } {
  let points = 0;
  let firstStartMs: number | null = null;
  let cursor: number | null = fromMs ?? null;
  const gaps: PriceGap[] = [];
  for (const [startMs, durationS] of spans) {
    points++;
    firstStartMs ??= startMs;
    const endMs = startMs + durationS * 1000;
    if (cursor !== null && startMs > cursor) gaps.push({ fromMs: cursor, toMs: startMs });
    cursor = cursor === null ? endMs : Math.max(cursor, endMs);
  }
  if (cursor !== null && toMs !== undefined && cursor < toMs) gaps.push({ fromMs: cursor, toMs });
  return { points, firstStartMs, lastEndMs: cursor, gaps };
}
