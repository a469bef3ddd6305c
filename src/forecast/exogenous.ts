// Exogenous inputs of the forecaster: the day-ahead forecasts the ENTSO-E platform
// publishes per period (total load, solar, onshore and offshore wind), as series.
import type { SeriesPoint } from './day-matrix.js';

/** The columns used, when present: day-ahead forecasts only, never actuals. */
export const EXOGENOUS_SERIES = ['Load_DA', 'Sol_DA', 'Won_DA', 'Woff_DA'] as const;

export interface ExogenousRow {
  readonly startMs: number;
  readonly durationS: number;
  readonly series: Readonly<Record<string, number | null>>;
}

/** Per-series points from rows carrying several series; empty cells are left out. */
export function exogenousSeries(rows: readonly ExogenousRow[], names: readonly string[] = EXOGENOUS_SERIES): Record<string, SeriesPoint[]> {
  const out: Record<string, SeriesPoint[]> = {};
  for (const name of names) {
    const points: SeriesPoint[] = [];
    for (const r of rows) {
      const v = r.series[name];
      if (v !== null && v !== undefined && Number.isFinite(v)) points.push({ startMs: r.startMs, durationS: r.durationS, value: v });
    }
    if (points.length > 0) out[name] = points;
  }
  return out;
}
