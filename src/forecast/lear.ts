// LEAR-style day-ahead price model (after Lago et al. 2021, epftoolbox): one regularized
// linear regression per wall-clock slot of the day and per horizon day ("direct"
// multi-day forecasting), recalibrated at every forecast origin on a rolling window.
// Prices (and exogenous series) are scaled by the window's median and MAD and passed
// through asinh, the variance-stabilizing transform of Uniejewski et al. 2018.
import { dayComplete, fillUnknownDays, trailingMeans, valueAt, type DayMatrix } from './day-matrix.js';
import { dayOfWeek } from './local-days.js';
import { fitRidgeFixed, fitRidgeLoo, predictLinear, type LinearModel } from './ridge.js';
import { forecastCrossHourModels, type FittedDayModel } from './cross-hour.js';
import { withResidualLoad } from './exogenous.js';
import type { PenaltyCache } from './penalty-cache.js';
import { recursiveForecasts } from './recursive.js';
import { scratch } from './scratch.js';

export type PriceTransform = 'asinh' | 'none';

export interface LearOptions {
  readonly horizonDays: number;
  readonly trainingWindowDays: number;
  readonly transform: PriceTransform;
  /**
   * Calibration windows (days) of the ensemble; default [trainingWindowDays]. As in the
   * epftoolbox LEAR ensemble, every member is refitted on each window and the forecasts
   * are combined: short windows follow a changed market sooner, long ones know the seasons.
   */
  readonly windows?: readonly number[];
  /** Models of the ensemble, each fitted on every window; default ['same-slot']. */
  readonly members?: readonly LearMember[];
  /** How the ensemble's forecasts are combined per period (default mean). */
  readonly combine?: 'mean' | 'median';
  /** Calibration windows of the cross-hour member (default: `windows`). */
  readonly crossHourWindows?: readonly number[];
  /**
   * Use the windows other than `trainingWindowDays` only for target days whose exogenous
   * inputs are known (with inputs, D+1): that is where the ensemble paid (default: every
   * day, with or without inputs).
   */
  readonly ensembleWithExogenousOnly?: boolean;
  /** Horizon days the cross-hour member forecasts (default all); later days use the other members. */
  readonly crossHourDays?: number;
  /** Add each zone's residual load (load minus its solar and wind forecasts) to the exogenous series (exogenous.ts). */
  readonly residualLoad?: boolean;
}

/**
 * 'same-slot': one regression per slot on that slot's lags and the daily summaries.
 * 'cross-hour': every slot on the whole curves of the lag days (cross-hour.ts).
 */
export type LearMember = 'same-slot' | 'cross-hour';

export interface ForecastOrigin {
  /** Known prices; values after `lastKnownDay` are ignored. */
  readonly prices: DayMatrix;
  /** Optional exogenous per-slot series (load, wind, solar forecasts), same slot count. */
  readonly exogenous?: Readonly<Record<string, DayMatrix>>;
  /** Last local day whose prices are known at the origin (the origin day itself at 10:00). */
  readonly lastKnownDay: number;
  /** Last local day whose exogenous forecasts are known at the origin. */
  readonly exogenousKnownThrough?: number;
  /**
   * Day-level load inputs for the days after D+1 (week-ahead.ts): per series a day matrix
   * whose slots all hold the day's value (the load forecast's daily minimum and maximum),
   * known through `knownThrough`. The same-slot model reads them, instead of no inputs,
   * for horizons >= 2 whose target day is known; D+1 never reads them.
   */
  readonly dailyLoad?: { readonly series: Readonly<Record<string, DayMatrix>>; readonly knownThrough: number };
}

export interface DayForecast {
  readonly day: number;
  readonly horizon: number;
  /** Slot values in price units. */
  readonly values: Float64Array;
  /** 'lear' or, with too little history, 'naive'. */
  readonly method: 'lear' | 'naive';
}

interface Scaler {
  readonly center: number;
  readonly spread: number;
}

function robustScaler(m: DayMatrix, fromDay: number, toDay: number): Scaler {
  // Typed arrays sort numerically without a comparator: 3x faster than number[] with one
  // (it runs for every window and series at every origin), the same median and MAD.
  const buf = scratch('scaler', Math.max(0, toDay - fromDay + 1) * m.slots);
  let n = 0;
  for (let d = fromDay; d <= toDay; d++)
    for (let s = 0; s < m.slots; s++) {
      const v = valueAt(m, d, s);
      if (!Number.isNaN(v)) buf[n++] = v;
    }
  if (n === 0) return { center: 0, spread: 1 };
  const vals = buf.subarray(0, n).sort();
  const med = quantileSorted(vals, 0.5);
  for (let i = 0; i < n; i++) buf[i] = Math.abs(vals[i] - med);
  const mad = quantileSorted(buf.subarray(0, n).sort(), 0.5) * 1.4826;
  return { center: med, spread: mad > 1e-9 ? mad : 1 };
}

export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const pos = Math.min(n - 1, Math.max(0, q * (n - 1)));
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** Transformed copy of a matrix restricted to days <= lastDay (later days NaN), into `into` (m's length) if given. */
function transformed(m: DayMatrix, lastDay: number, scaler: Scaler, transform: PriceTransform, into?: Float64Array): DayMatrix {
  const out = (into ?? new Float64Array(m.values.length)).fill(NaN);
  const rows = Math.min(m.days, lastDay - m.firstDay + 1);
  for (let i = 0; i < rows * m.slots; i++) {
    const z = (m.values[i] - scaler.center) / scaler.spread;
    out[i] = transform === 'asinh' ? Math.asinh(z) : z;
  }
  return { firstDay: m.firstDay, days: m.days, slots: m.slots, values: out };
}

function inverse(z: number, scaler: Scaler, transform: PriceTransform): number {
  return (transform === 'asinh' ? Math.sinh(z) : z) * scaler.spread + scaler.center;
}

/** Per-day summaries of a transformed price matrix: mean, min, max, last slot. */
function dailyStats(z: DayMatrix): Float64Array {
  const out = new Float64Array(z.days * 4).fill(NaN);
  for (let r = 0; r < z.days; r++) {
    let sum = 0;
    let min = Infinity;
    let max = -Infinity;
    let ok = true;
    for (let s = 0; s < z.slots; s++) {
      const v = z.values[r * z.slots + s];
      if (Number.isNaN(v)) {
        ok = false;
        break;
      }
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    if (!ok) continue;
    out[r * 4] = sum / z.slots;
    out[r * 4 + 1] = min;
    out[r * 4 + 2] = max;
    out[r * 4 + 3] = z.values[r * z.slots + z.slots - 1];
  }
  return out;
}

interface FeatureContext {
  readonly z: DayMatrix;
  readonly stats: Float64Array;
  readonly exo: readonly { z: DayMatrix; dailyMean: Float64Array }[];
  readonly useExogenous: boolean;
  /** Per day and slot, the slot's mean over the known days of that day and the 6 (27) before (day-matrix.ts trailingMeans). */
  readonly mean7: DayMatrix;
  readonly mean28: DayMatrix;
}




function stat(ctx: FeatureContext, day: number, k: number): number {
  const r = day - ctx.z.firstDay;
  if (r < 0 || r >= ctx.z.days) return NaN;
  return ctx.stats[r * 4 + k];
}

function featureCount(ctx: FeatureContext, horizon: number): number {
  const weekly = horizon < 5 ? 1 : 0;
  const monthly = horizon >= 2 ? 1 : 0;
  return 3 + weekly + 2 + monthly + 4 + 7 + (ctx.useExogenous ? ctx.exo.length * 3 : 0);
}

/**
 * Features of target day `t`, slot `s`, for horizon `h` (last known day t - h). Returns
 * false if one is unknown. Same-slot lags of the last three known days and of the same
 * weekday one and two weeks earlier, the slot's mean over the last 7 (and, beyond D+1,
 * 28) known days, the last known day's mean/min/max and final slot, weekday
 * dummies, and per exogenous series the target day's slot value, its daily mean and the
 * last known day's slot value.
 */
function features(ctx: FeatureContext, t: number, s: number, h: number, row: Float64Array): boolean {
  const last = t - h;
  let j = 0;
  for (let lag = 0; lag < 3; lag++) row[j++] = valueAt(ctx.z, last - lag, s);
  if (h < 5) row[j++] = valueAt(ctx.z, t - 7, s);
  row[j++] = valueAt(ctx.z, t - 14, s);
  row[j++] = valueAt(ctx.mean7, last, s);
  if (h >= 2) {
    // Beyond the next day the level reverts towards the recent month; the slot's 28-day
    // mean carries that (on NL 2025 Q1 it lowered D+2..D+7 rMAE by 0.01-0.02, D+1 not).
    row[j++] = valueAt(ctx.mean28, last, s);
  }
  for (let k = 0; k < 4; k++) row[j++] = stat(ctx, last, k);
  const dow = dayOfWeek(t);
  for (let k = 0; k < 7; k++) row[j++] = dow === k ? 1 : 0;
  if (ctx.useExogenous) {
    for (const e of ctx.exo) {
      row[j++] = valueAt(e.z, t, s);
      const r = t - e.z.firstDay;
      row[j++] = r >= 0 && r < e.z.days ? e.dailyMean[r] : NaN;
      row[j++] = valueAt(e.z, last, s);
    }
  }
  for (let i = 0; i < j; i++) if (Number.isNaN(row[i])) return false;
  return true;
}

function dailyMeans(z: DayMatrix): Float64Array {
  const out = new Float64Array(z.days).fill(NaN);
  for (let r = 0; r < z.days; r++) {
    let sum = 0;
    let ok = true;
    for (let s = 0; s < z.slots; s++) {
      const v = z.values[r * z.slots + s];
      if (Number.isNaN(v)) ok = false;
      sum += v;
    }
    if (ok) out[r] = sum / z.slots;
  }
  return out;
}

/**
 * Naive fallback: the last known same weekday, else the last known day, else the nearest
 * known day before it (a missing origin day must not leave the forecast NaN).
 */
function naiveDay(prices: DayMatrix, lastKnown: number, target: number): Float64Array {
  const out = new Float64Array(prices.slots).fill(NaN);
  const nearest: number[] = [];
  for (let d = lastKnown - 1; d >= prices.firstDay; d--) nearest.push(d);
  for (const src of [target - 7 * Math.ceil((target - lastKnown) / 7), lastKnown, ...nearest]) {
    let ok = true;
    for (let s = 0; s < prices.slots; s++) {
      out[s] = valueAt(prices, src, s);
      if (Number.isNaN(out[s])) ok = false;
    }
    if (ok) return out;
  }
  return out;
}

/** Day-level inputs of the days after D+1, transformed like the exogenous series (ForecastOrigin.dailyLoad). */
interface DailyInputs {
  readonly scaled: readonly DayMatrix[];
  readonly knownThrough: number;
}

/** The target day known, and at least 90 % of the days from..to (a window's rows and their lags). */
function dailyCovered(means: Float64Array, firstDay: number, target: number, from: number, to: number): boolean {
  const at = (d: number) => (d - firstDay >= 0 && d - firstDay < means.length ? means[d - firstDay] : NaN);
  if (Number.isNaN(at(target))) return false;
  let known = 0;
  for (let d = from; d <= to; d++) if (!Number.isNaN(at(d))) known++;
  return known >= 0.9 * (to - from + 1);
}

/** Whether every slot of days from..to (none when to < from) is known. */
function daysComplete(m: DayMatrix, from: number, to: number): boolean {
  for (let d = from; d <= to; d++) if (!dayComplete(m, d)) return false;
  return true;
}

/** Longest run of missing days read as their nearest known day; a longer run is missing history. */
const MAX_FILLED_RUN_DAYS = 7;

/** The longest calibration window of the options (days of history the model reads, before lags). */
export function longestWindow(options: LearOptions): number {
  return Math.max(options.trainingWindowDays, ...(options.windows ?? []));
}

/** Point forecasts for days lastKnownDay+1 .. lastKnownDay+horizonDays. */
export function forecastLear(origin: ForecastOrigin, options: LearOptions, penalties?: PenaltyCache): DayForecast[] {
  return forecastLearPaths(origin, options, penalties, false).direct;
}

export interface LearPaths {
  /** The direct per-horizon forecasts (forecastLear). */
  readonly direct: DayForecast[];
  /**
   * With `recursive`, per horizon (index h-1) the day-ahead model fed its own forecasts
   * (recursive.ts) in price units; undefined where it could not run (then the direct
   * forecast stands). Its D+1 is the direct D+1.
   */
  readonly recursive?: (Float64Array | undefined)[];
}

/**
 * The direct forecasts and, with `recursive`, the recursive variant: the price-only
 * day-ahead fit of the configured window (same members as the direct D+1) applied to the
 * days after the origin. Price only, it reuses the direct day-ahead fit (no extra fit).
 */
export function forecastLearPaths(origin: ForecastOrigin, options: LearOptions, penalties: PenaltyCache | undefined, recursive: boolean): LearPaths {
  const windows = options.windows ?? [options.trainingWindowDays];
  const crossWindows = options.crossHourWindows ?? windows;
  const members = options.members ?? ['same-slot'];
  const { prices, lastKnownDay } = origin;
  // A missing origin or lag day reads as the nearest known day (no later one), so one
  // lost day does not turn a month of forecasts naive (the 28-day mean needs every day)
  // nor leave the naive fallback without a source day; the filled days are never
  // training targets, and the scaling and range guard see only real prices.
  const { matrix: known, filled } = fillUnknownDays(prices, lastKnownDay, MAX_FILLED_RUN_DAYS);
  const imputed = new Set(filled);
  const exoKnown = origin.exogenousKnownThrough ?? lastKnownDay;
  // A series with a hole on a day it should give (a day the platform or the history file
  // lacks) is left out at this origin, as the live service leaves out what it has not
  // fetched (exogenous-availability.ts): with it, the day-ahead fell back to the naive.
  const given = origin.exogenous && Object.fromEntries(Object.entries(origin.exogenous).filter(([, m]) => daysComplete(m, lastKnownDay + 1, Math.min(exoKnown, lastKnownDay + options.horizonDays))));
  const exogenous = given && options.residualLoad ? withResidualLoad(given) : given;
  // Per horizon, the ensemble members' forecasts in price units.
  const candidates: Float64Array[][] = Array.from({ length: options.horizonDays }, () => []);
  // The configured window's price-only day-ahead fits, for the recursive variant.
  let recursion: { models: FittedDayModel[]; z: DayMatrix; toPrice: (v: number) => number; toModelled: (p: number) => number } | undefined;
  for (const w of [...new Set([...windows, ...(members.includes('cross-hour') ? crossWindows : [])])]) {
    const hasExogenous = Object.keys(exogenous ?? {}).length > 0;
    const days =
      w === options.trainingWindowDays || !options.ensembleWithExogenousOnly
        ? options.horizonDays
        : hasExogenous
          ? Math.max(0, Math.min(options.horizonDays, exoKnown - lastKnownDay))
          : 0;
    if (days === 0) continue;
    const windowStart = lastKnownDay - w + 1;
    const scaler = robustScaler(prices, windowStart, lastKnownDay);
    // The window's matrices are work buffers (scratch.ts), reused at every origin instead of
    // new matrices each time; nothing keeps them after this call. The configured window's
    // set is its own: the recursion reads it after the later windows have run.
    const work = w === options.trainingWindowDays ? 'trained-window' : 'other-window';
    const z = transformed(known, lastKnownDay, scaler, options.transform, scratch(`${work}.z`, known.values.length));
    // Forecasts are kept within the window's range of (transformed) prices: a linear model
    // fed inputs outside its training range can extrapolate far, and the inverse asinh
    // turns that into an exponential blow-up.
    let zMin = Infinity;
    let zMax = -Infinity;
    for (let d = windowStart; d <= lastKnownDay; d++) {
      if (imputed.has(d)) continue;
      for (let s = 0; s < z.slots; s++) {
        const v = valueAt(z, d, s);
        if (v < zMin) zMin = v;
        if (v > zMax) zMax = v;
      }
    }
    const exoScaled = Object.values(exogenous ?? {}).map((m, i) => transformed(m, exoKnown, robustScaler(m, windowStart, lastKnownDay), options.transform, scratch(`${work}.exo.${i}`, m.values.length)));
    const daily = origin.dailyLoad && origin.dailyLoad.knownThrough > lastKnownDay + 1
      ? { scaled: Object.values(origin.dailyLoad.series).map((m, i) => transformed(m, origin.dailyLoad!.knownThrough, robustScaler(m, windowStart, lastKnownDay), options.transform, scratch(`${work}.daily.${i}`, m.values.length))), knownThrough: origin.dailyLoad.knownThrough }
      : undefined;
    const toPrice = (x: number): number => inverse(Math.min(zMax, Math.max(zMin, x)), scaler, options.transform);
    const wantRecursion = recursive && w === options.trainingWindowDays;
    const dayAheadModels: (FittedDayModel | undefined)[] = [];
    for (const member of members) {
      if (!(member === 'same-slot' ? windows : crossWindows).includes(w)) continue;
      const fitted = fitMember(member, z, exoScaled, w, days, work, daily);
      fitted.forecasts.forEach((v, i) => {
        if (v) candidates[i].push(v.map(toPrice));
      });
      if (wantRecursion) {
        // With exogenous inputs the day-ahead fit used them; the recursion needs the
        // price-only day-ahead model (the days after D+1 have no published inputs).
        dayAheadModels.push(fitted.dayAhead ?? (exoScaled.length > 0 ? fitMember(member, z, [], w, 1, work).dayAhead : undefined));
      }
    }
    if (wantRecursion && dayAheadModels.length > 0 && dayAheadModels.every((m) => m !== undefined)) {
      const toModelled = (p: number): number => {
        const v = (p - scaler.center) / scaler.spread;
        return options.transform === 'asinh' ? Math.asinh(v) : v;
      };
      recursion = { models: dayAheadModels as FittedDayModel[], z, toPrice, toModelled };
    }
  }
  function fitMember(member: LearMember, z: DayMatrix, exoScaled: readonly DayMatrix[], w: number, days: number, work: string, daily?: DailyInputs): { forecasts: (Float64Array | undefined)[]; dayAhead?: FittedDayModel } {
    return member === 'same-slot'
      ? sameSlotForecasts(z, exoScaled, lastKnownDay, exoKnown, w, days, imputed, penalties, daily, work)
      : forecastCrossHourModels({ z, exo: exoScaled, lastKnownDay, exogenousKnownThrough: exoKnown, horizonDays: Math.min(days, options.crossHourDays ?? options.horizonDays), windowDays: w, imputedDays: imputed, work }, penalties);
  }
  const direct: DayForecast[] = candidates.map((c, i) => {
    const day = lastKnownDay + i + 1;
    if (c.length === 0) return { day, horizon: i + 1, values: naiveDay(known, lastKnownDay, day), method: 'naive' };
    return { day, horizon: i + 1, values: combine(c, options.combine ?? 'mean'), method: 'lear' };
  });
  if (!recursive) return { direct };
  if (!recursion || direct[0].method !== 'lear') return { direct, recursive: direct.map(() => undefined) };
  return {
    direct,
    recursive: recursiveForecasts({ ...recursion, lastKnownDay, horizonDays: options.horizonDays, dayAhead: direct[0].values }),
  };
}

function combine(c: readonly Float64Array[], how: 'mean' | 'median'): Float64Array {
  if (c.length === 1) return c[0];
  const out = new Float64Array(c[0].length);
  const buf = new Float64Array(c.length);
  for (let s = 0; s < out.length; s++) {
    for (let k = 0; k < c.length; k++) buf[k] = c[k][s];
    if (how === 'mean') out[s] = buf.reduce((a, b) => a + b, 0) / c.length;
    else {
      buf.sort();
      out[s] = quantileSorted(buf, 0.5);
    }
  }
  return out;
}

/**
 * The same-slot model on one window: transformed forecasts per horizon (undefined: too
 * little data) and, when the day-ahead fit is price only, that fit as a FittedDayModel
 * (recursive.ts applies it to the days after the origin).
 */
function sameSlotForecasts(
  z: DayMatrix,
  exoScaled: readonly DayMatrix[],
  lastKnownDay: number,
  exoKnown: number,
  windowDays: number,
  horizonDays: number,
  /** Days filled from a neighbour: features, never targets. */
  imputed: ReadonlySet<number>,
  penalties?: PenaltyCache,
  daily?: DailyInputs,
  /** Names the work buffers (scratch.ts) of the trailing means; without, new arrays. */
  work?: string,
): { forecasts: (Float64Array | undefined)[]; dayAhead?: FittedDayModel } {
  const exo = exoScaled.map((ez) => ({ z: ez, dailyMean: dailyMeans(ez) }));
  const dailyExo = (daily?.scaled ?? []).map((ez) => ({ z: ez, dailyMean: dailyMeans(ez) }));
  const stats = dailyStats(z);
  const slots = z.slots;
  const out: (Float64Array | undefined)[] = [];
  const mean7 = trailingMeans(z, 7, imputed, work === undefined ? undefined : scratch(`${work}.same-slot.mean7`, z.values.length));
  const mean28 = trailingMeans(z, 28, imputed, work === undefined ? undefined : scratch(`${work}.same-slot.mean28`, z.values.length));
  let dayAhead: FittedDayModel | undefined;

  for (let h = 1; h <= horizonDays; h++) {
    const target = lastKnownDay + h;
    // Beyond D+1, the day-level load inputs where the origin knows the target day and the
    // window has them (else the price-only features, as without them).
    const useDaily = h >= 2 && daily !== undefined && dailyExo.length > 0 && target <= daily.knownThrough && dailyExo.every((e) => dailyCovered(e.dailyMean, e.z.firstDay, target, lastKnownDay - windowDays - h + 1, lastKnownDay));
    const ctx: FeatureContext = useDaily
      ? { z, stats, exo: dailyExo, useExogenous: true, mean7, mean28 }
      : { z, stats, exo, useExogenous: exo.length > 0 && target <= exoKnown, mean7, mean28 };
    const p = featureCount(ctx, h);
    const row = new Float64Array(p);
    const values = new Float64Array(slots);
    const models: LinearModel[] = [];
    let ok = true;
    const maxRows = windowDays;
    // Work of this horizon only (scratch.ts): a fit keeps its coefficients, not its rows.
    const x = scratch('slot.x', maxRows * p);
    const y = scratch('slot.y', maxRows);
    // The penalty is chosen by leave-one-out once per hour of the day (at its first slot)
    // and reused for that hour's other quarter-hours: their problems are near-identical,
    // and it makes the 96-slot model 3x cheaper. With a cache, it is chosen weekly.
    const slotsPerHour = Math.max(1, Math.round(slots / 24));
    let penalty = 0;
    for (let s = 0; s < slots; s++) {
      let n = 0;
      for (let t = lastKnownDay - maxRows + 1; t <= lastKnownDay; t++) {
        const target_ = valueAt(z, t, s);
        if (Number.isNaN(target_) || imputed.has(t)) continue;
        if (!features(ctx, t, s, h, row)) continue;
        x.set(row, n * p);
        y[n] = target_;
        n++;
      }
      if (!features(ctx, target, s, h, row) || n < Math.max(28, 2 * p)) {
        ok = false;
        break;
      }
      const xs = x.subarray(0, n * p);
      const ys = y.subarray(0, n);
      let model;
      if (s % slotsPerHour === 0) {
        const key = `${windowDays}:${h}:${s / slotsPerHour}:${p}`;
        const cached = penalties?.get(key, lastKnownDay);
        if (cached === undefined) {
          model = fitRidgeLoo(xs, ys, n, p);
          penalties?.set(key, lastKnownDay, model.relativePenalty);
        } else model = fitRidgeFixed(xs, ys, n, p, cached);
      } else model = fitRidgeFixed(xs, ys, n, p, penalty);
      penalty = model.relativePenalty;
      values[s] = predictLinear(model, row);
      models.push(model);
    }
    out.push(ok ? values : undefined);
    if (ok && h === 1 && !ctx.useExogenous) {
      dayAhead = {
        predict(zNext, t) {
          const next: FeatureContext = { z: zNext, stats: dailyStats(zNext), exo: [], useExogenous: false, mean7: trailingMeans(zNext, 7, imputed), mean28 }; // mean28 is not read at D+1
          const r1 = new Float64Array(p);
          const v = new Float64Array(slots);
          for (let s = 0; s < slots; s++) {
            if (!features(next, t, s, 1, r1)) return undefined;
            v[s] = predictLinear(models[s], r1);
          }
          return v;
        },
      };
    }
  }
  return { forecasts: out, dayAhead };
}
