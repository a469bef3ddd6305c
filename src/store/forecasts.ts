// Stored price forecasts: the latest run per market area, replaced as a whole.
import type { Db } from './db.js';

export interface ForecastPeriod {
  readonly startMs: number;
  readonly durationS: number;
  readonly forecastPerMwh: number;
  readonly lowerPerMwh: number;
  readonly upperPerMwh: number;
}

export interface ForecastRun {
  readonly marketArea: string;
  /** Last local delivery day (YYYY-MM-DD) whose prices were known when it was computed. */
  readonly originDay: string;
  readonly computedAtMs: number;
  readonly method: string;
  readonly coverage: number;
  /** What it was made from: `prices + load, solar` or `prices only: <why>` (default `prices only`). */
  readonly inputs?: string;
}

interface PeriodRow {
  start_ms: number;
  duration_s: number;
  forecast_per_mwh: number;
  lower_per_mwh: number;
  upper_per_mwh: number;
}

export class ForecastStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      deleteRun: db.prepare<[string]>('DELETE FROM forecast_runs WHERE market_area = ?'),
      deletePeriods: db.prepare<[string]>('DELETE FROM forecasts WHERE market_area = ?'),
      insertRun: db.prepare<[string, string, number, string, number, string]>(
        'INSERT INTO forecast_runs (market_area, origin_day, computed_at_ms, method, coverage, inputs) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      insertPeriod: db.prepare<[string, number, number, number, number, number]>(
        'INSERT INTO forecasts (market_area, start_ms, duration_s, forecast_per_mwh, lower_per_mwh, upper_per_mwh) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      run: db.prepare<[string]>('SELECT market_area, origin_day, computed_at_ms, method, coverage, inputs FROM forecast_runs WHERE market_area = ?'),
      range: db.prepare<[string, number, number]>(
        'SELECT start_ms, duration_s, forecast_per_mwh, lower_per_mwh, upper_per_mwh FROM forecasts WHERE market_area = ? AND start_ms >= ? AND start_ms < ? ORDER BY start_ms',
      ),
    };
  }

  /** Replaces the market's forecast in one transaction. */
  replace(run: ForecastRun, periods: readonly ForecastPeriod[]): void {
    this.db.transaction(() => {
      this.stmts.deleteRun.run(run.marketArea);
      this.stmts.deletePeriods.run(run.marketArea);
      this.stmts.insertRun.run(run.marketArea, run.originDay, run.computedAtMs, run.method, run.coverage, run.inputs ?? 'prices only');
      for (const p of periods)
        this.stmts.insertPeriod.run(run.marketArea, p.startMs, p.durationS, p.forecastPerMwh, p.lowerPerMwh, p.upperPerMwh);
    })();
  }

  latestRun(marketArea: string): ForecastRun | undefined {
    const r = this.stmts.run.get(marketArea) as
      | { market_area: string; origin_day: string; computed_at_ms: number; method: string; coverage: number; inputs: string }
      | undefined;
    return r && { marketArea: r.market_area, originDay: r.origin_day, computedAtMs: r.computed_at_ms, method: r.method, coverage: r.coverage, inputs: r.inputs };
  }

  /** Forecast periods starting in [fromMs, toMs), oldest first. */
  periods(marketArea: string, fromMs: number, toMs: number): ForecastPeriod[] {
    return (this.stmts.range.all(marketArea, fromMs, toMs) as PeriodRow[]).map((r) => ({
      startMs: r.start_ms,
      durationS: r.duration_s,
      forecastPerMwh: r.forecast_per_mwh,
      lowerPerMwh: r.lower_per_mwh,
      upperPerMwh: r.upper_per_mwh,
    }));
  }
}
