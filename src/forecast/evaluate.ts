// Rolling-origin backtest: a forecast is issued every day at 10:00 market time, when the
// prices of that day are known and those of the next day are not, for each of the next
// `horizonDays` days, using only data known then (the model is refitted at every origin
// and its bounds come from errors of earlier origins). Pure: series in, scores out.
import { toDayMatrix, valueAt, type SeriesPoint } from './day-matrix.js';
import { longestWindow } from './lear.js';
import { isoDate } from './local-days.js';
import { naiveLagDays, scoreByHorizon, withinHourErrors, type HorizonScore, type ScoredPoint } from './metrics.js';
import { ConformalForecaster, type RollingOptions } from './rolling.js';
import { QUANTILE_LEVELS, Scorecard, type ScorecardRow } from './scorecard.js';
import type { BandMethod } from './band-methods.js';

/** Key of a scored point in `EvaluationInput.previous`: target day, horizon, slot. */
export const pointKey = (day: number, horizon: number, slot: number): string => `${day}:${horizon}:${slot}`;

export interface EvaluationInput {
  readonly timeZone: string;
  readonly prices: readonly SeriesPoint[];
  readonly exogenous?: Readonly<Record<string, readonly SeriesPoint[]>>;
  /** First and last target day scored (local day numbers). */
  readonly fromDay: number;
  readonly toDay: number;
  /** 24 (hourly) or 96 (quarter-hourly) periods a day. */
  readonly slots: number;
  readonly options: RollingOptions;
  /** A previous release's forecasts of the same points (pointKey), for Diebold-Mariano. */
  readonly previous?: ReadonlyMap<string, number>;
  /**
   * Score the forecast as a distribution too (quantiles, scorecard, the IDR candidates):
   * what `forecast eval` prints; off, the scorecards are empty and the run costs what it
   * did before (tests that only need the point scores).
   */
  readonly probabilistic?: boolean;
}

export interface HorizonRow extends HorizonScore {
  /** MAE relative to the seasonal naive known at the origin (same period a week earlier). */
  readonly rmaeWeekly: number;
  /** Scored points rmaeWeekly leaves out because the price a week earlier is unknown. */
  readonly weeklyExcluded: number;
}

/** Day forecasts of one horizon whose target day is scored: by the model, or by the naive fallback. */
export interface MethodCount {
  readonly horizon: number;
  readonly model: number;
  readonly fallback: number;
}

/** Per horizon, the shipped forecast against its two sources (RollingOptions.recursiveBlend). */
export interface VariantRow {
  readonly horizon: number;
  /** Points scored: known price, standard naive and all three forecasts finite. */
  readonly n: number;
  /** rMAE against the standard naive and against the week-ago naive, per forecast. */
  readonly shipped: VariantScore;
  readonly recursive: VariantScore;
  readonly direct: VariantScore;
  /** Mean share of the recursive forecast in the shipped one over the scored day forecasts. */
  readonly meanRecursiveShare: number;
}

export interface VariantScore {
  readonly mae: number;
  readonly rmae: number;
  readonly rmaeWeekly: number;
}

export interface Evaluation {
  readonly rows: HorizonRow[];
  /** With recursiveBlend: shipped vs recursive vs direct per horizon. */
  readonly variants?: VariantRow[];
  readonly origins: number;
  /** Per horizon, how many day forecasts came from the model and how many from the fallback. */
  readonly methods: MethodCount[];
  /** Day-ahead (horizon 1) forecast against actual, for the plot. */
  /** Per horizon, the shipped forecast judged as a distribution (scorecard.ts): the quantiles of its band's method. */
  readonly scorecard: ScorecardRow[];
  /** The same for every method measured (RollingOptions.quantileLevels' `candidates`), the conformal one included. */
  readonly candidateScorecards: { readonly conformal: ScorecardRow[]; readonly idr: ScorecardRow[]; readonly average: ScorecardRow[]; readonly idrAci: ScorecardRow[]; readonly averageAci: ScorecardRow[] };
  /**
   * Per horizon, the band method of the scored day forecasts (RollingOptions.bandMethods):
   * the configured one, and how many day forecasts fell back to conformal (too few
   * calibration pairs, only at the warm-up's start).
   */
  readonly bandMethods: { readonly horizon: number; readonly method: BandMethod; readonly days: number; readonly conformalFallback: number }[];
  /**
   * Quarter-hour markets only: per horizon, MAE of the hourly means, of the within-hour
   * profile, and of a profile flat within the hour (metrics.ts withinHourErrors).
   */
  readonly withinHour?: { readonly horizon: number; readonly hours: number; readonly hourlyMae: number; readonly profileMae: number; readonly flatProfileMae: number }[];
  /** Points the scorecard left out (a quantile or the naive not a number). */
  readonly scorecardExcluded: number;
  /** Every scored point forecast, to be kept as the release's forecasts (`previous` of a later run). */
  readonly pointForecasts: { readonly day: number; readonly horizon: number; readonly slot: number; readonly forecast: number }[];
  readonly dayAhead: { readonly day: string; readonly slot: number; readonly actual: number; readonly forecast: number; readonly lower: number; readonly upper: number }[];
}

export function evaluateRolling(input: EvaluationInput, onOrigin?: (day: number, done: number, total: number) => void): Evaluation {
  const { options, slots, fromDay, toDay } = input;
  const historyFrom = fromDay - longestWindow(options) - options.calibrationDays - 2 * options.horizonDays - 30;
  const prices = toDayMatrix(input.timeZone, input.prices, historyFrom, toDay, slots);
  const exogenous = input.exogenous
    ? Object.fromEntries(Object.entries(input.exogenous).map(([k, v]) => [k, toDayMatrix(input.timeZone, v, historyFrom, toDay, slots)]))
    : undefined;
  const forecaster = new ConformalForecaster({ prices, exogenous }, input.probabilistic ? { ...options, quantileLevels: QUANTILE_LEVELS, candidateQuantiles: true } : options);
  const scorecard = new Scorecard();
  const conformalCard = new Scorecard();
  const idrCard = new Scorecard();
  const averageCard = new Scorecard();
  const idrAciCard = new Scorecard();
  const averageAciCard = new Scorecard();
  let scorecardExcluded = 0;
  const pointForecasts: Evaluation['pointForecasts'] = [];
  const periodsPerHour = slots / 24;
  const withinHour = Array.from({ length: options.horizonDays }, () => ({ hours: 0, periods: 0, hourlyAbs: 0, profileAbs: 0, flatProfileAbs: 0 }));
  // Warm-up origins give the first scored origins their calibration errors.
  const firstOrigin = fromDay - 1 - options.horizonDays - options.calibrationDays - options.horizonDays;
  const lastOrigin = toDay - 1;
  const points: ScoredPoint[] = [];
  const weekly: { horizon: number; actual: number; naive: number; forecast: number }[] = [];
  const dayAhead: Evaluation['dayAhead'] = [];
  let origins = 0;
  const model = new Array<number>(options.horizonDays).fill(0);
  const bandDays = Array.from({ length: options.horizonDays }, () => ({ days: 0, conformalFallback: 0 }));
  const fallback = new Array<number>(options.horizonDays).fill(0);
  const variantSums = Array.from({ length: options.horizonDays }, () => ({ n: 0, naive: 0, weekN: 0, week: 0, days: 0, share: 0, abs: [0, 0, 0], absWeek: [0, 0, 0] }));
  for (let o = firstOrigin; o <= lastOrigin; o++) {
    onOrigin?.(o, o - firstOrigin + 1, lastOrigin - firstOrigin + 1);
    const out = forecaster.advance(o);
    if (o >= fromDay - options.horizonDays) origins++;
    for (const d of out) {
      if (d.day < fromDay || d.day > toDay) continue;
      if (d.method === 'lear') model[d.horizon - 1]++;
      else fallback[d.horizon - 1]++;
      bandDays[d.horizon - 1].days++;
      if (d.bandMethod !== (options.bandMethods?.[d.horizon - 1] ?? 'conformal')) bandDays[d.horizon - 1].conformalFallback++;
      const v = variantSums[d.horizon - 1];
      if (d.direct && d.recursive) {
        v.days++;
        v.share += d.recursiveShare ?? 0;
      }
      if (periodsPerHour > 1) {
        const w = withinHourErrors(
          Float64Array.from({ length: slots }, (_, s) => valueAt(prices, d.day, s)),
          d.forecast,
          periodsPerHour,
        );
        const acc = withinHour[d.horizon - 1];
        for (const k of ['hours', 'periods', 'hourlyAbs', 'profileAbs', 'flatProfileAbs'] as const) acc[k] += w[k];
      }
      for (let s = 0; s < slots; s++) {
        const actual = valueAt(prices, d.day, s);
        if (Number.isNaN(actual)) continue;
        const naive = valueAt(prices, d.day - naiveLagDays(d.day), s);
        if (d.direct && d.recursive) {
          const forecasts = [d.forecast[s], d.recursive[s], d.direct[s]];
          if (Number.isFinite(naive) && forecasts.every(Number.isFinite)) {
            v.n++;
            v.naive += Math.abs(actual - naive);
            forecasts.forEach((f, k) => (v.abs[k] += Math.abs(actual - f)));
            const weekAgo = valueAt(prices, d.day - 7, s);
            if (Number.isFinite(weekAgo)) {
              v.weekN++;
              v.week += Math.abs(actual - weekAgo);
              forecasts.forEach((f, k) => (v.absWeek[k] += Math.abs(actual - f)));
            }
          }
        }
        if (d.quantiles) {
          const quantiles = Float64Array.from(QUANTILE_LEVELS, (_, i) => d.quantiles![i * slots + s]);
          const previous = input.previous?.get(pointKey(d.day, d.horizon, s)) ?? NaN;
          const point = { day: d.day, slot: s, actual, forecast: d.forecast[s], naive, previous };
          if (!scorecard.add(d.horizon, { ...point, quantiles })) scorecardExcluded++;
          if (d.candidates) {
            const at = (q: Float64Array) => Float64Array.from(QUANTILE_LEVELS, (_, i) => q[i * slots + s]);
            conformalCard.add(d.horizon, { ...point, quantiles: at(d.candidates.conformal) });
            idrCard.add(d.horizon, { ...point, quantiles: at(d.candidates.idr) });
            averageCard.add(d.horizon, { ...point, quantiles: at(d.candidates.average) });
            idrAciCard.add(d.horizon, { ...point, quantiles: at(d.candidates.idrAci) });
            averageAciCard.add(d.horizon, { ...point, quantiles: at(d.candidates.averageAci) });
          }
        }
        if (input.probabilistic && Number.isFinite(d.forecast[s])) pointForecasts.push({ day: d.day, horizon: d.horizon, slot: s, forecast: d.forecast[s] });
        points.push({ horizon: d.horizon, actual, forecast: d.forecast[s], naive, lower: d.lower[s], upper: d.upper[s] });
        weekly.push({ horizon: d.horizon, actual, naive: valueAt(prices, d.day - 7, s), forecast: d.forecast[s] });
        if (d.horizon === 1 && Number.isFinite(d.forecast[s]) && Number.isFinite(d.lower[s]) && Number.isFinite(d.upper[s])) dayAhead.push({ day: isoDate(d.day), slot: s, actual, forecast: d.forecast[s], lower: d.lower[s], upper: d.upper[s] });
      }
    }
  }
  const rows = scoreByHorizon(points, options.horizonDays).map((r) => {
    const scored = weekly.filter((p) => p.horizon === r.horizon && Number.isFinite(p.forecast));
    const w = scored.filter((p) => Number.isFinite(p.naive));
    const num = w.reduce((a, p) => a + Math.abs(p.actual - p.forecast), 0);
    const den = w.reduce((a, p) => a + Math.abs(p.actual - p.naive), 0);
    return { ...r, rmaeWeekly: num / den, weeklyExcluded: scored.length - w.length };
  });
  const methods = model.map((m, i) => ({ horizon: i + 1, model: m, fallback: fallback[i] }));
  const score = (v: (typeof variantSums)[number], k: number): VariantScore => ({ mae: v.abs[k] / v.n, rmae: v.abs[k] / v.naive, rmaeWeekly: v.absWeek[k] / v.week });
  const variants = options.recursiveBlend
    ? variantSums.flatMap((v, i) =>
        v.n === 0 ? [] : [{ horizon: i + 1, n: v.n, shipped: score(v, 0), recursive: score(v, 1), direct: score(v, 2), meanRecursiveShare: v.days > 0 ? v.share / v.days : 0 }],
      )
    : undefined;
  const withinHourRows =
    periodsPerHour > 1
      ? withinHour.flatMap((w, i) => (w.hours === 0 ? [] : [{ horizon: i + 1, hours: w.hours, hourlyMae: w.hourlyAbs / w.hours, profileMae: w.profileAbs / w.periods, flatProfileMae: w.flatProfileAbs / w.periods }]))
      : undefined;
  return { rows, ...(variants ? { variants } : {}), ...(withinHourRows ? { withinHour: withinHourRows } : {}), origins, methods, scorecard: scorecard.rows(), bandMethods: bandDays.map((b, i) => ({ horizon: i + 1, method: options.bandMethods?.[i] ?? 'conformal', ...b })), candidateScorecards: { conformal: conformalCard.rows(), idr: idrCard.rows(), average: averageCard.rows(), idrAci: idrAciCard.rows(), averageAci: averageAciCard.rows() }, scorecardExcluded, pointForecasts, dayAhead };
}

/** The comparison table: per horizon the shipped blend, the recursive and the direct forecast. */
export function formatVariantTable(rows: readonly VariantRow[]): string {
  const head = '| day | n | shipped rMAE | recursive rMAE | direct rMAE | shipped vs week-ago | recursive vs week-ago | direct vs week-ago | mean recursive share |';
  const sep = '|---|---|---|---|---|---|---|---|---|';
  const lines = rows.map(
    (r) =>
      `| D+${r.horizon} | ${r.n} | ${r.shipped.rmae.toFixed(3)} | ${r.recursive.rmae.toFixed(3)} | ${r.direct.rmae.toFixed(3)} | ${r.shipped.rmaeWeekly.toFixed(3)} | ${r.recursive.rmaeWeekly.toFixed(3)} | ${r.direct.rmaeWeekly.toFixed(3)} | ${r.meanRecursiveShare.toFixed(2)} |`,
  );
  return [head, sep, ...lines].join('\n');
}

/** The printed table, one line per horizon day, what was left out of it and, given `methods`, the model's share. */
export function formatEvaluationTable(rows: readonly HorizonRow[], horizonDays = rows.length, methods?: readonly MethodCount[]): string {
  const head = '| day | n | MAE | sMAPE % | naive MAE | rMAE | rMAE vs week-ago | 80 % coverage | mean width |';
  const sep = '|---|---|---|---|---|---|---|---|---|';
  const lines = rows.map(
    (r) =>
      `| D+${r.horizon} | ${r.n} | ${r.mae.toFixed(2)} | ${r.smape.toFixed(1)} | ${r.naiveMae.toFixed(2)} | ${r.rmae.toFixed(3)} | ${r.rmaeWeekly.toFixed(3)} | ${(100 * r.coverage).toFixed(1)} | ${r.meanWidth.toFixed(1)} |`,
  );
  const excluded = rows.reduce((a, r) => a + r.excluded, 0);
  const weekly = rows.reduce((a, r) => a + r.weeklyExcluded, 0);
  const missing = Array.from({ length: horizonDays }, (_, i) => i + 1).filter((h) => !rows.some((r) => r.horizon === h));
  const notes = [
    `excluded: ${excluded} point(s) with a known price whose forecast, bound or naive was not a number${excluded > 0 ? ` (${rows.filter((r) => r.excluded > 0).map((r) => `D+${r.horizon} ${r.excluded}`).join(', ')})` : ''}`,
    ...(weekly > 0 ? [`rMAE vs week-ago also leaves out ${weekly} point(s) whose price a week earlier is unknown`] : []),
    ...(missing.length > 0 ? [`no point left to score for ${missing.map((h) => `D+${h}`).join(', ')}`] : []),
    ...(methods ? [formatMethods(methods)] : []),
  ];
  return [head, sep, ...lines, '', ...notes].join('\n');
}

/** "model forecasts: D+1 28/28, ...": day forecasts from the model out of all, per horizon. */
function formatMethods(methods: readonly MethodCount[]): string {
  const total = methods.reduce((a, m) => a + m.model + m.fallback, 0);
  const modelTotal = methods.reduce((a, m) => a + m.model, 0);
  const share = total > 0 ? ((100 * modelTotal) / total).toFixed(1) : '-';
  return `model forecasts (not the naive fallback): ${methods.map((m) => `D+${m.horizon} ${m.model}/${m.model + m.fallback}`).join(', ')} (${share} %)`;
}
