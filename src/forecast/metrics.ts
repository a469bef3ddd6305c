// Forecast accuracy measures as in Lago et al. 2021 (epftoolbox): MAE, sMAPE, and rMAE,
// the MAE relative to the standard naive forecast (the same period a week earlier for
// Monday, Saturday and Sunday, the previous day otherwise), plus interval coverage.
import { dayOfWeek } from './local-days.js';

/**
 * The measures refuse to average what is not a number: a NaN would turn the whole score
 * into NaN (or, filtered silently, flatter it). Callers leave such points out and count
 * them (scoreByHorizon).
 */
function assertFinite(name: string, ...series: ArrayLike<number>[]): void {
  for (const xs of series)
    for (let i = 0; i < xs.length; i++) {
      if (!Number.isFinite(xs[i])) throw new RangeError(`${name}: value ${i} is ${xs[i]}; leave such points out (and count them) before scoring`);
    }
}

export function mae(actual: ArrayLike<number>, forecast: ArrayLike<number>): number {
  assertFinite('mae', actual, forecast);
  let sum = 0;
  for (let i = 0; i < actual.length; i++) sum += Math.abs(actual[i] - forecast[i]);
  return sum / actual.length;
}

/** Symmetric MAPE in percent, epftoolbox form: mean |y - f| / ((|y| + |f|) / 2). */
export function smape(actual: ArrayLike<number>, forecast: ArrayLike<number>): number {
  assertFinite('smape', actual, forecast);
  let sum = 0;
  for (let i = 0; i < actual.length; i++) {
    const denom = (Math.abs(actual[i]) + Math.abs(forecast[i])) / 2;
    sum += denom === 0 ? 0 : Math.abs(actual[i] - forecast[i]) / denom;
  }
  return (100 * sum) / actual.length;
}

/** Days back to the standard naive forecast's source day for a target local day. */
export function naiveLagDays(day: number): 1 | 7 {
  const dow = dayOfWeek(day);
  return dow === 0 || dow === 1 || dow === 6 ? 7 : 1;
}

/**
 * The standard naive forecast for a series of whole days (rows of `slots` values, row 0
 * = local day `firstDay`): NaN for rows whose source day is outside the series.
 */
export function naiveForecast(values: ArrayLike<number>, firstDay: number, slots: number): Float64Array {
  const days = Math.floor(values.length / slots);
  const out = new Float64Array(days * slots).fill(NaN);
  for (let r = 0; r < days; r++) {
    const src = r - naiveLagDays(firstDay + r);
    if (src < 0) continue;
    for (let s = 0; s < slots; s++) out[r * slots + s] = values[src * slots + s];
  }
  return out;
}

/** Coverage (fraction of actuals within [lower, upper]) and mean width of bounds. */
export function intervalScore(
  actual: ArrayLike<number>,
  lower: ArrayLike<number>,
  upper: ArrayLike<number>,
): { coverage: number; meanWidth: number } {
  assertFinite('intervalScore', actual, lower, upper);
  let inside = 0;
  let width = 0;
  for (let i = 0; i < actual.length; i++) {
    if (actual[i] >= lower[i] && actual[i] <= upper[i]) inside++;
    width += upper[i] - lower[i];
  }
  return { coverage: inside / actual.length, meanWidth: width / actual.length };
}

export interface HorizonScore {
  readonly horizon: number;
  /** Points scored. */
  readonly n: number;
  /** Points with a known actual left out because the forecast, a bound or the naive was not a number. */
  readonly excluded: number;
  readonly mae: number;
  readonly smape: number;
  readonly naiveMae: number;
  readonly rmae: number;
  readonly coverage: number;
  readonly meanWidth: number;
}

export interface ScoredPoint {
  readonly horizon: number;
  readonly actual: number;
  readonly forecast: number;
  readonly naive: number;
  readonly lower: number;
  readonly upper: number;
}

/**
 * Per-horizon scores of the points whose actual is known. A point whose forecast, bounds
 * or naive is not a number is left out and counted in `excluded`, never averaged; a
 * horizon with no point left has no row.
 */
export function scoreByHorizon(points: readonly ScoredPoint[], horizons: number): HorizonScore[] {
  const out: HorizonScore[] = [];
  for (let h = 1; h <= horizons; h++) {
    const known = points.filter((p) => p.horizon === h && Number.isFinite(p.actual));
    const ps = known.filter((p) => Number.isFinite(p.forecast) && Number.isFinite(p.lower) && Number.isFinite(p.upper) && Number.isFinite(p.naive));
    if (ps.length === 0) continue;
    const a = ps.map((p) => p.actual);
    const f = ps.map((p) => p.forecast);
    const nv = ps.map((p) => p.naive);
    const m = mae(a, f);
    const nm = mae(a, nv);
    const iv = intervalScore(
      a,
      ps.map((p) => p.lower),
      ps.map((p) => p.upper),
    );
    out.push({ horizon: h, n: ps.length, excluded: known.length - ps.length, mae: m, smape: smape(a, f), naiveMae: nm, rmae: m / nm, ...iv });
  }
  return out;
}

/**
 * A quarter-hourly day forecast split into its hourly level and its shape within each hour:
 * summed absolute errors of the hourly means, of the within-hour profile (each period's
 * deviation from its hour's mean, forecast against actual), and of a profile flat within
 * the hour (what an hourly forecast repeated four times would score on the profile). An
 * hour with a missing value in either is left out. Quarter-hour markets (issue 24).
 */
export function withinHourErrors(
  actual: ArrayLike<number>,
  forecast: ArrayLike<number>,
  periodsPerHour: number,
): { hours: number; periods: number; hourlyAbs: number; profileAbs: number; flatProfileAbs: number } {
  const out = { hours: 0, periods: 0, hourlyAbs: 0, profileAbs: 0, flatProfileAbs: 0 };
  for (let start = 0; start + periodsPerHour <= actual.length; start += periodsPerHour) {
    let a = 0;
    let f = 0;
    let ok = true;
    for (let i = start; i < start + periodsPerHour; i++) {
      if (!Number.isFinite(actual[i]) || !Number.isFinite(forecast[i])) ok = false;
      a += actual[i];
      f += forecast[i];
    }
    if (!ok) continue;
    a /= periodsPerHour;
    f /= periodsPerHour;
    out.hours++;
    out.hourlyAbs += Math.abs(a - f);
    for (let i = start; i < start + periodsPerHour; i++) {
      out.periods++;
      out.profileAbs += Math.abs(actual[i] - a - (forecast[i] - f));
      out.flatProfileAbs += Math.abs(actual[i] - a);
    }
  }
  return out;
}
