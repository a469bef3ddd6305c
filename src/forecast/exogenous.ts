// Exogenous inputs of the forecaster: the day-ahead forecasts the ENTSO-E platform
// publishes per period (total load, solar, onshore and offshore wind), as series.
import type { DayMatrix, SeriesPoint } from './day-matrix.js';

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

/** Series names (as stored, or the history files' columns) of the load and the renewables subtracted from it. */
const LOAD_NAMES = ['load', 'Load_DA'];
const RENEWABLE_NAMES = ['solar', 'wind_onshore', 'wind_offshore', 'Sol_DA', 'Won_DA', 'Woff_DA'];

/**
 * The series with, per zone (a name prefix: '' for the region, 'DE-LU ' for a neighbour),
 * the residual load added: the load forecast minus the solar and wind forecasts of the
 * same zone that are present, per slot (NaN where one is missing). Renewables push the
 * price-setting plants down the merit order, so the price follows what is left for
 * them; after the scaling and asinh transform this is not a linear combination of the
 * inputs the models already have (DE 2016-17, sampled: D+1 rMAE 0.488 -> 0.465).
 * A neighbour (a prefixed zone) enters through its residual load alone: with its load,
 * solar and wind as well, NL 2020-23 was no better (sampled D+1 0.617 vs 0.618) at 1.4x
 * the CPU (docs/forecast-evaluation.md).
 */
export function withResidualLoad(series: Readonly<Record<string, DayMatrix>>): Record<string, DayMatrix> {
  const out: Record<string, DayMatrix> = { ...series };
  for (const [name, load] of Object.entries(series)) {
    const base = LOAD_NAMES.find((n) => name.endsWith(n));
    if (!base) continue;
    const prefix = name.slice(0, name.length - base.length);
    const parts = RENEWABLE_NAMES.map((n) => series[prefix + n]).filter((m): m is DayMatrix => m !== undefined);
    if (parts.length === 0) continue;
    for (const p of parts)
      if (p.firstDay !== load.firstDay || p.days !== load.days || p.slots !== load.slots) throw new RangeError(`exogenous series of ${prefix || 'the region'} do not share one day layout`);
    const values = Float64Array.from(load.values);
    for (const p of parts) for (let i = 0; i < values.length; i++) values[i] -= p.values[i];
    out[`${prefix}residual_load`] = { firstDay: load.firstDay, days: load.days, slots: load.slots, values };
  }
  // A neighbour's components go (without its load, the neighbour goes whole).
  for (const name of Object.keys(series)) {
    const base = [...LOAD_NAMES, ...RENEWABLE_NAMES].find((n) => name.endsWith(n));
    if (base && name.length > base.length) delete out[name];
  }
  return out;
}
