// Cross-hour model: every slot of the target day is regressed on the same day-level
// features — the hourly price curves of the last three known days and of the same weekday
// a week before the target, the last known day's min, max and mean, the recent 7- and
// 28-day hourly profiles, and, when published, the whole exogenous curves of the target
// day — as the epftoolbox LEAR does for each hour (Lago et al. 2021, Ziel & Weron 2018;
// it also takes the exogenous curves of earlier days, which on DE 2016-17 changed D+1
// rMAE by 0.003 here at twice the cost). With one design per horizon the slot models
// share one SVD (SharedRidgeDesign), and the penalty of each is chosen by exact
// leave-one-out.
import { trailingMeans, type DayMatrix } from './day-matrix.js';
import { dayOfWeek } from './local-days.js';
import type { PenaltyCache } from './penalty-cache.js';
import { SharedRidgeDesign } from './shared-ridge.js';
import { scratch } from './scratch.js';

export interface CrossHourInput {
  /** Transformed prices, NaN after the last known day. */
  readonly z: DayMatrix;
  /** Transformed exogenous series (NaN where not yet published). */
  readonly exo: readonly DayMatrix[];
  readonly lastKnownDay: number;
  /** Last day whose exogenous series are known. */
  readonly exogenousKnownThrough: number;
  readonly horizonDays: number;
  readonly windowDays: number;
  /** Days filled from a neighbour (lear.ts): used as features, never as targets. */
  readonly imputedDays?: ReadonlySet<number>;
  /** Names the work buffers (scratch.ts) of the hourly rows and their means; without, new arrays. */
  readonly work?: string;
}

/** Day x 24 matrix of hourly means of a day matrix (the matrix itself when hourly), into `into` (days * 24) if given. */
export function hourlyRows(m: DayMatrix, into?: Float64Array): DayMatrix {
  if (m.slots === 24) return m;
  const per = m.slots / 24;
  const out = into ?? new Float64Array(m.days * 24);
  for (let r = 0; r < m.days; r++)
    for (let hr = 0; hr < 24; hr++) {
      let s = 0;
      for (let q = 0; q < per; q++) s += m.values[r * m.slots + hr * per + q];
      out[r * 24 + hr] = s / per;
    }
  return { firstDay: m.firstDay, days: m.days, slots: 24, values: out };
}

function copyDay(m: DayMatrix, day: number, row: Float64Array, at: number): boolean {
  const r = day - m.firstDay;
  if (r < 0 || r >= m.days) return false;
  for (let s = 0; s < m.slots; s++) {
    const v = m.values[r * m.slots + s];
    if (Number.isNaN(v)) return false;
    row[at + s] = v;
  }
  return true;
}

interface Layout {
  readonly p: number;
  fill(t: number, row: Float64Array): boolean;
}

function layout(z: DayMatrix, zh: DayMatrix, mean7: DayMatrix, mean28: DayMatrix, exoH: readonly DayMatrix[], h: number, useExo: boolean): Layout {
  const weekAgo = h < 5;
  const month = h >= 2;
  const fine = z.slots !== 24;
  const p = 24 * (3 + (weekAgo ? 1 : 0) + 1 + (month ? 1 : 0)) + 3 + (fine ? 1 : 0) + 7 + (useExo ? exoH.length * 24 : 0);
  return {
    p,
    fill(t, row) {
      const last = t - h;
      let j = 0;
      // Hourly curves (quarter-hours averaged: the same-slot member carries the finer shape).
      for (const d of weekAgo ? [last, last - 1, last - 2, t - 7] : [last, last - 1, last - 2]) {
        if (!copyDay(zh, d, row, j)) return false;
        j += 24;
      }
      if (!copyDay(mean7, last, row, j)) return false;
      j += 24;
      if (month) {
        if (!copyDay(mean28, last, row, j)) return false;
        j += 24;
      }
      // Min, max and mean of the last known day at full resolution, and with quarter-hours
      // its final period (the latest price known; hourly, it is in the curve already).
      const r = last - z.firstDay;
      let min = Infinity;
      let max = -Infinity;
      let sum = 0;
      for (let s = 0; s < z.slots; s++) {
        const v = z.values[r * z.slots + s];
        if (v < min) min = v;
        if (v > max) max = v;
        sum += v;
      }
      row[j++] = min;
      row[j++] = max;
      row[j++] = sum / z.slots;
      if (fine) row[j++] = z.values[r * z.slots + z.slots - 1];
      const dow = dayOfWeek(t);
      for (let k = 0; k < 7; k++) row[j++] = dow === k ? 1 : 0;
      if (useExo)
        for (const e of exoH) {
          if (!copyDay(e, t, row, j)) return false;
          j += 24;
        }
      return true;
    },
  };
}

/**
 * Transformed-scale forecasts of days lastKnownDay+1 .. +horizonDays (one Float64Array of
 * slots per horizon), or undefined for a horizon without enough complete training days.
 */
export function forecastCrossHour(input: CrossHourInput, penalties?: PenaltyCache): (Float64Array | undefined)[] {
  return forecastCrossHourModels(input, penalties).forecasts;
}

/**
 * A horizon's slot models fitted at an origin, applicable to a matrix extended past the
 * origin (recursive.ts feeds the day-ahead model its own forecasts).
 */
export interface FittedDayModel {
  /** Transformed-scale forecast of `target` from `z` (days before it known or forecast); undefined if a feature is unknown. */
  predict(z: DayMatrix, target: number): Float64Array | undefined;
}

/**
 * forecastCrossHour, and the day-ahead fit as a FittedDayModel when it is price only (the
 * recursive forecast applies it to days whose exogenous inputs are not published).
 */
export function forecastCrossHourModels(input: CrossHourInput, penalties?: PenaltyCache): { forecasts: (Float64Array | undefined)[]; dayAhead?: FittedDayModel } {
  const { z, lastKnownDay, windowDays } = input;
  const work = (use: string, length: number) => (input.work === undefined ? undefined : scratch(`${input.work}.cross-hour.${use}`, length));
  const hourly = (m: DayMatrix, use: string) => (m.slots === 24 ? m : hourlyRows(m, work(use, m.days * 24)));
  const zh = hourly(z, 'zh');
  const exoH = input.exo.map((e, i) => hourly(e, `exo.${i}`));
  const mean7 = trailingMeans(zh, 7, input.imputedDays, work('mean7', zh.values.length));
  const mean28 = trailingMeans(zh, 28, input.imputedDays, work('mean28', zh.values.length));
  const slots = z.slots;
  const out: (Float64Array | undefined)[] = [];
  let dayAhead: FittedDayModel | undefined;
  for (let h = 1; h <= input.horizonDays; h++) {
    const target = lastKnownDay + h;
    const useExo = exoH.length > 0 && target <= input.exogenousKnownThrough;
    const lay = layout(z, zh, mean7, mean28, exoH, h, useExo);
    const p = lay.p;
    const row = new Float64Array(p);
    // Work of this horizon only (scratch.ts): the design copies what it keeps.
    const x = scratch('cross.x', windowDays * p);
    const y = scratch('cross.y', windowDays * slots);
    let n = 0;
    for (let t = lastKnownDay - windowDays + 1; t <= lastKnownDay; t++) {
      if (input.imputedDays?.has(t) || !copyDay(z, t, y, n * slots)) continue;
      if (!lay.fill(t, row)) continue;
      x.set(row, n * p);
      n++;
    }
    if (n < 28 || !lay.fill(target, row)) {
      out.push(undefined);
      continue;
    }
    const design = new SharedRidgeDesign(x.subarray(0, n * p), n, p, input.work === undefined ? undefined : `${input.work}.cross-hour.design`);
    const at = design.project(row);
    const values = new Float64Array(slots);
    const ys = scratch('cross.ys', n);
    const fits: ReturnType<SharedRidgeDesign['fit']>[] = [];
    // As in the same-slot model, the penalty is chosen by leave-one-out at the first slot
    // of each hour and reused for its other quarter-hours (and, with a cache, for four weeks).
    const slotsPerHour = Math.max(1, Math.round(slots / 24));
    let penalty = 0;
    for (let s = 0; s < slots; s++) {
      for (let i = 0; i < n; i++) ys[i] = y[i * slots + s];
      let fit;
      if (s % slotsPerHour === 0) {
        const key = `cross:${windowDays}:${h}:${s / slotsPerHour}:${p}`;
        const cached = penalties?.get(key, lastKnownDay);
        fit = design.fit(ys, cached);
        if (cached === undefined) penalties?.set(key, lastKnownDay, fit.relativePenalty);
      } else fit = design.fit(ys, penalty);
      penalty = fit.relativePenalty;
      values[s] = fit.predict(at);
      if (h === 1 && !useExo) fits.push(fit);
    }
    out.push(values);
    if (h === 1 && !useExo) {
      const imputed = input.imputedDays;
      dayAhead = {
        predict(zNext, t) {
          const zhNext = hourlyRows(zNext);
          const lay1 = layout(zNext, zhNext, trailingMeans(zhNext, 7, imputed), trailingMeans(zhNext, 28, imputed), [], 1, false);
          const r1 = new Float64Array(lay1.p);
          if (lay1.p !== p || !lay1.fill(t, r1)) return undefined;
          const at1 = design.project(r1);
          return Float64Array.from(fits, (f) => f.predict(at1));
        },
      };
    }
  }
  return { forecasts: out, dayAhead };
}
