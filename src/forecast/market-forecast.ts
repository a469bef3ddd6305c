// Today's forecast for one market from its stored prices: picks the origin (the last
// local day whose prices are all known), steps the conformal forecaster through the
// calibration origins before it, and maps the last origin's day forecasts to real periods.
// No I/O: prices come in, periods go out; `pause` lets the caller yield between origins.
import { dayComplete, slotsToPeriods, toDayMatrix, withoutUnknownLead, type DayMatrix, type SeriesPoint } from './day-matrix.js';
import { localDayOf } from './local-days.js';
import { longestWindow } from './lear.js';
import { ConformalForecaster, type RollingOptions } from './rolling.js';
import { chooseExogenous, type PublishedPoint } from './exogenous-availability.js';
import { weekAheadInputs } from './week-ahead.js';
import { describeBandMethods, type BandMethod } from './band-methods.js';
import { releaseScratch } from './scratch.js';

export interface ForecastPeriodValue {
  readonly startMs: number;
  readonly durationS: number;
  readonly forecastPerMwh: number;
  readonly lowerPerMwh: number;
  readonly upperPerMwh: number;
}

export interface MarketForecastResult {
  /** Last local day with all prices known; forecasts start the day after. */
  readonly originDay: number;
  readonly periods: ForecastPeriodValue[];
  readonly method: string;
  /** Per horizon of the last origin (index h - 1), where its band came from (rolling.ts bandMethod). */
  readonly bandMethods: readonly BandMethod[];
  /** Days after the origin left out because the model gave a value that is not a number (none expected). */
  readonly unforecastDays: readonly number[];
  /** Pass back as `warm` next time: only origins after this one are computed then. */
  readonly state: WarmState;
  /** Exogenous series the last origin used (empty = price only) and why any were not. */
  readonly exogenous: { readonly used: readonly string[]; readonly note: string };
  /**
   * The week-ahead load inputs (week-ahead.ts), when fetched by the origin: the last day
   * they reached, and the horizons (2..) whose stored forecast they entered. A horizon
   * whose blend (blend.ts) took the recursive day-ahead model wholly did not use them.
   */
  readonly weekAhead?: { readonly through: number; readonly horizons: readonly number[] };
}

/** A forecaster that has stepped through origins up to `origin`, reusable the next day. */
export interface WarmState {
  readonly forecaster: ConformalForecaster;
  readonly slots: number;
  readonly origin: number;
  /** The exogenous series it was built with ('' = price only): a run with another set does not use it. */
  readonly inputs: string;
}

/** The longest span of days a trailing mean of the models runs over (lear.ts, cross-hour.ts: 7 and 28). */
const LONGEST_TRAILING_SPAN_DAYS = 28;

/** Local days of history the forecaster reads before the origin. */
export function historyDaysNeeded(options: RollingOptions): number {
  return longestWindow(options) + options.calibrationDays + options.horizonDays + 21;
}

/** The last day <= `maxDay` whose slots are all known, searching back at most two weeks. */
export function lastCompleteDay(m: DayMatrix, maxDay: number): number | undefined {
  for (let d = maxDay; d > maxDay - 14; d--) if (dayComplete(m, d)) return d;
  return undefined;
}

/** Period length the forecaster models for a market's native one: quarter-hours, else hours. */
export function forecastIntervalS(nativeIntervalS: number): 900 | 3600 {
  return Math.round(86_400 / Math.max(nativeIntervalS, 900)) === 96 ? 900 : 3600;
}

/**
 * The price matrix a forecast at `nowMs` reads: local days firstDay..lastDay (the history
 * the windows need through the last horizon day), `slots` a day. A caller reading prices
 * from a store fills it as it reads (DayMatrixBuilder) and passes the matrix.
 */
export function priceMatrixLayout(timeZone: string, nowMs: number, targetIntervalS: number, options: RollingOptions): { readonly firstDay: number; readonly lastDay: number; readonly slots: number } {
  const today = localDayOf(timeZone, nowMs);
  return { firstDay: today - historyDaysNeeded(options), lastDay: today + 1 + options.horizonDays, slots: 86_400 / forecastIntervalS(targetIntervalS) };
}

function isDayMatrix(prices: readonly SeriesPoint[] | DayMatrix): prices is DayMatrix {
  return !Array.isArray(prices);
}

export async function computeMarketForecast(args: {
  readonly timeZone: string;
  /** The periods, or their matrix already built in priceMatrixLayout's layout. */
  readonly prices: readonly SeriesPoint[] | DayMatrix;
  readonly exogenous?: Readonly<Record<string, readonly SeriesPoint[]>>;
  /**
   * Stored exogenous series with their fetch times (live): used only as far as they were
   * known at `nowMs` and cover the target day (exogenous-availability.ts); else price only.
   */
  readonly exogenousPublished?: Readonly<Record<string, readonly PublishedPoint[]>>;
  /**
   * The region's stored week-ahead load forecast (daily minimum and maximum) with fetch
   * times: with the day-ahead load (exogenousPublished.load) the inputs of D+2..D+7 as far
   * as they were fetched by `nowMs` (week-ahead.ts).
   */
  readonly weekAheadPublished?: { readonly min: readonly PublishedPoint[]; readonly max: readonly PublishedPoint[] };
  readonly nowMs: number;
  /** Period length of the forecast days (the market's native resolution then). */
  readonly targetIntervalS: number;
  readonly options: RollingOptions;
  readonly pause?: () => Promise<void>;
  /**
   * States of earlier runs (the service keeps one per set of inputs); the one built with
   * this run's inputs and slot layout is used when it is not ahead.
   */
  readonly warm?: readonly WarmState[];
}): Promise<MarketForecastResult | undefined> {
  const { timeZone, options } = args;
  const { firstDay, lastDay, slots } = priceMatrixLayout(timeZone, args.nowMs, args.targetIntervalS, options);
  const built = isDayMatrix(args.prices) ? args.prices : toDayMatrix(timeZone, args.prices, firstDay, lastDay, slots);
  if (built.firstDay !== firstDay || built.days !== lastDay - firstDay + 1 || built.slots !== slots) throw new RangeError('the price matrix is not in priceMatrixLayout\'s layout');
  // Days before the store's first price are dropped (but the longest trailing span): every
  // matrix the training derives is then as long as the prices held, not as the windows.
  const prices = withoutUnknownLead(built, LONGEST_TRAILING_SPAN_DAYS);
  const origin = lastCompleteDay(prices, lastDay - options.horizonDays);
  if (origin === undefined) return undefined;
  const choice = args.exogenousPublished
    ? chooseExogenous({ timeZone, series: args.exogenousPublished, originMs: args.nowMs, targetDay: origin + 1, windowFirstDay: origin - longestWindow(options) + 1, slots })
    : { inputs: args.exogenous, used: Object.keys(args.exogenous ?? {}), note: args.exogenous ? '' : 'price only' };
  const chosen = choice.inputs;
  const exogenous = chosen
    ? Object.fromEntries(Object.entries(chosen).map(([k, v]) => [k, toDayMatrix(timeZone, v, firstDay, lastDay, slots)]))
    : undefined;
  const inputs = choice.used.join(',');
  const weekAhead = args.weekAheadPublished && args.exogenousPublished?.load
    ? weekAheadInputs({ timeZone, load: args.exogenousPublished.load, weekAheadMin: args.weekAheadPublished.min, weekAheadMax: args.weekAheadPublished.max, originMs: args.nowMs, originDay: origin, horizonDays: options.horizonDays, firstDay, lastDay, slots })
    : undefined;
  const dailyLoad = weekAhead && { series: weekAhead.series, origin, knownThrough: weekAhead.knownThrough };
  const coldStart = origin - options.calibrationDays - options.horizonDays;
  const warm = args.warm?.find((w) => w.inputs === inputs && w.slots === slots);
  const reuse = warm !== undefined && warm.origin < origin && warm.origin >= coldStart;
  const forecaster = reuse ? warm.forecaster : new ConformalForecaster({ prices, exogenous, ...(dailyLoad ? { dailyLoad } : {}) }, options);
  if (reuse) forecaster.updateInput({ prices, exogenous, ...(dailyLoad ? { dailyLoad } : {}) });
  const firstOrigin = reuse ? warm.origin + 1 : coldStart;
  let last: ReturnType<ConformalForecaster['advance']> = [];
  try {
    for (let o = firstOrigin; o <= origin; o++) {
      // From cold, every second calibration origin is enough to calibrate the bounds (28
      // origins' errors per horizon day instead of 56, still hundreds of periods each) and
      // halves the start-up work; the days after add every origin, so after eight weeks the
      // calibration is the backtest's again.
      if (!reuse && (origin - o) % 2 === 1) continue;
      // Only the last origin's forecast is stored: the others calibrate later ones, and the
      // band's method (an IDR fit per horizon) is computed for the last alone.
      last = forecaster.advance(o, { calibrationOnly: o !== origin });
      if (args.pause) await args.pause();
    }
  } finally {
    // The kernels' work buffers go with the computation (nothing of them is kept).
    releaseScratch();
  }
  const periods: ForecastPeriodValue[] = [];
  const unforecastDays: number[] = [];
  const intervalS = 86_400 / slots;
  for (const day of last) {
    // Never store or serve a NaN: a day without finite values is reported instead.
    if (![day.forecast, day.lower, day.upper].every((xs) => xs.every(Number.isFinite))) {
      unforecastDays.push(day.day);
      continue;
    }
    const f = slotsToPeriods(timeZone, day.day, day.forecast, slots, intervalS);
    const lo = slotsToPeriods(timeZone, day.day, day.lower, slots, intervalS);
    const hi = slotsToPeriods(timeZone, day.day, day.upper, slots, intervalS);
    f.forEach((p, i) =>
      periods.push({
        startMs: p.startMs,
        durationS: intervalS,
        forecastPerMwh: p.value,
        lowerPerMwh: Math.min(lo[i].value, p.value),
        upperPerMwh: Math.max(hi[i].value, p.value),
      }),
    );
  }
  const bandMethods = last.map((d) => d.bandMethod);
  // 'lear-ridge+conformal', 'lear-ridge+average', or per horizon 'lear-ridge+average D+1..D+4, D+7; conformal D+5, D+6'.
  const band = bandMethods.every((m) => m === bandMethods[0]) ? (bandMethods[0] ?? 'conformal') : describeBandMethods(bandMethods);
  const method = `${last.every((d) => d.method === 'lear') ? 'lear-ridge' : 'naive'}+${band}`;
  return { originDay: origin, periods, method, bandMethods, unforecastDays, state: { forecaster, slots, origin, inputs }, exogenous: { used: choice.used, note: choice.note }, ...(weekAhead ? { weekAhead: { through: weekAhead.knownThrough, horizons: last.filter((d) => d.horizon >= 2 && d.day <= weekAhead.knownThrough && (d.recursiveShare ?? 0) < 1 && !unforecastDays.includes(d.day)).map((d) => d.horizon) } } : {}) };
}
