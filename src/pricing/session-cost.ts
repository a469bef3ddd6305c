// Session cost from cumulative meter readings and day-ahead prices. Pure: plain values
// in, plain values out; the HTTP layer fetches the prices once per request.
//
// The energy between two consecutive readings is spread evenly over that interval and
// split across the price periods it overlaps; cost = sum(kWh_in_period x EUR/MWh / 1000).
// Negative prices count negative. The total is rounded to 4 decimals at the very end.
import type { PricePeriod } from '../domain.js';

/** One cumulative meter reading. */
export interface EnergyReading {
  readonly timestampMs: number;
  readonly energyKwh: number;
}

export interface ReadingProblem {
  /** Index into the readings array. */
  readonly index: number;
  readonly field: 'timestamp' | 'reading_kwh' | '(array)';
  readonly message: string;
}

/**
 * Checks what a JSON Schema cannot: at least 2 readings, timestamps strictly
 * increasing (so neither unsorted nor duplicated), readings never decreasing.
 * Returns at most `maxProblems` problems, in order.
 */
export function checkReadings(readings: readonly EnergyReading[], maxProblems = 20): ReadingProblem[] {
  const problems: ReadingProblem[] = [];
  if (readings.length < 2) {
    problems.push({ index: -1, field: '(array)', message: `must contain at least 2 readings to price a session (got ${readings.length})` });
    return problems;
  }
  for (let i = 1; i < readings.length && problems.length < maxProblems; i++) {
    const prev = readings[i - 1];
    const cur = readings[i];
    if (cur.timestampMs === prev.timestampMs) {
      problems.push({ index: i, field: 'timestamp', message: `duplicates the timestamp of reading ${i - 1}` });
    } else if (cur.timestampMs < prev.timestampMs) {
      problems.push({ index: i, field: 'timestamp', message: `is earlier than reading ${i - 1}; readings must be sorted by timestamp, oldest first` });
    } else if (cur.energyKwh < prev.energyKwh) {
      problems.push({ index: i, field: 'reading_kwh', message: `decreases from ${prev.energyKwh} to ${cur.energyKwh} kWh; readings are cumulative and must not decrease` });
    }
  }
  return problems;
}

/** A price period that is needed but not stored. */
export interface MissingPeriod {
  readonly startMs: number;
  readonly durationS: number;
}

export type SessionCostResult =
  | {
      readonly ok: true;
      /** Rounded to 4 decimals, in the prices' currency. */
      readonly totalCostExclVat: number;
      /** Unrounded, for diagnostics and tests. */
      readonly exactCost: number;
      readonly energyKwh: number;
      readonly startMs: number;
      readonly endMs: number;
    }
  | { readonly ok: false; readonly missing: MissingPeriod };

/** Rounds half away from zero to `decimals` places; never returns -0. */
export function roundTo(value: number, decimals = 4): number {
  const factor = 10 ** decimals;
  // toPrecision(15) first strips binary noise such as 0.30000000000000004 before rounding.
  const scaled = Number((Math.abs(value) * factor).toPrecision(15));
  const rounded = (Math.sign(value) * Math.round(scaled)) / factor;
  return rounded === 0 ? 0 : rounded;
}

/** Native period length at an instant, for naming a missing period (SDAC: 3600 s, 900 s from 2025-10-01 CET). */
export type NativeDurationS = (atMs: number) => number;

/** SDAC markets: 60-min periods, 15-min for delivery from 2025-10-01 00:00 CET (= 2025-09-30T22:00Z). */
export const SDAC_15_MIN_FROM_MS = Date.UTC(2025, 8, 30, 22, 0, 0);
export const sdacNativeDurationS: NativeDurationS = (atMs) => (atMs >= SDAC_15_MIN_FROM_MS ? 900 : 3600);

function missingAt(atMs: number, nativeDurationS: NativeDurationS, nextStartMs: number | undefined): MissingPeriod {
  const durationS = nativeDurationS(atMs);
  // Periods start on whole UTC quarter-hours/hours in every market we serve (whole-hour UTC offsets).
  const startMs = atMs - (((atMs % (durationS * 1000)) + durationS * 1000) % (durationS * 1000));
  const capped = nextStartMs !== undefined && nextStartMs > startMs ? Math.min(durationS, (nextStartMs - startMs) / 1000) : durationS;
  return { startMs, durationS: capped };
}

/**
 * Prices a session. `readings` must pass checkReadings(); `periods` are the market's
 * stored periods sorted by start (extra periods outside the window are fine).
 * Every instant between the first and the last reading must be covered by a period,
 * else the first uncovered period is returned as missing. O(readings + periods).
 */
export function priceSession(
  readings: readonly EnergyReading[],
  periods: readonly PricePeriod[],
  nativeDurationS: NativeDurationS = sdacNativeDurationS,
): SessionCostResult {
  const startMs = readings[0].timestampMs;
  const endMs = readings[readings.length - 1].timestampMs;
  const n = periods.length;
  // End of period k: its own length, cut at the next period's start should two overlap.
  const periodEnd = (k: number) => {
    const own = periods[k].startMs + periods[k].durationS * 1000;
    return k + 1 < n ? Math.min(own, periods[k + 1].startMs) : own;
  };

  let k = 0;
  while (k < n && periodEnd(k) <= startMs) k++;
  // Coverage of [startMs, endMs] first, so a gap is reported even where no energy flowed.
  {
    let t = startMs;
    let j = k;
    while (t < endMs) {
      if (j >= n || periods[j].startMs > t) return { ok: false, missing: missingAt(t, nativeDurationS, j < n ? periods[j].startMs : undefined) };
      t = periodEnd(j);
      j++;
    }
  }

  // Energy per period, accumulated, then multiplied once per period. Coverage is known
  // from here on, so k always indexes the period that holds time t.
  let cost = 0;
  let periodEnergy = 0;
  let kEnd = periodEnd(k);
  for (let i = 1; i < readings.length; i++) {
    const t0 = readings[i - 1].timestampMs;
    const t1 = readings[i].timestampMs;
    const energy = readings[i].energyKwh - readings[i - 1].energyKwh;
    if (t1 <= kEnd) {
      // The whole interval lies in the current period (the common case at 10-s readings).
      periodEnergy += energy;
      continue;
    }
    const ratePerMs = energy / (t1 - t0);
    let t = t0;
    while (t1 > kEnd && k < n - 1) {
      periodEnergy += ratePerMs * (kEnd - t);
      cost += periodEnergy * periods[k].pricePerMwh;
      periodEnergy = 0;
      t = kEnd;
      k++;
      kEnd = periodEnd(k);
    }
    periodEnergy += ratePerMs * (t1 - t);
  }
  cost += periodEnergy * periods[k].pricePerMwh;
  const exactCost = cost / 1000;
  return {
    ok: true,
    totalCostExclVat: roundTo(exactCost, 4),
    exactCost,
    energyKwh: readings[readings.length - 1].energyKwh - readings[0].energyKwh,
    startMs,
    endMs,
  };
}
