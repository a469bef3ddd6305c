// Recursive multi-day forecast: the day-ahead model fed its own forecasts. At origin D the
// day-ahead model (same-slot and cross-hour, fitted at D) forecasts D+1; that forecast is
// appended to the history as if it were known and the same fitted model forecasts D+2 from
// it, and so on to the last horizon day. No refit per step: the coefficients fitted at the
// origin are applied to the extended history. Issue 15 compares it with the direct
// per-horizon models; blend.ts combines the two per horizon.
import type { DayMatrix } from './day-matrix.js';
import type { FittedDayModel } from './cross-hour.js';

/** Days of history before the origin the day-ahead features read (lags to T-14, 7-day means). */
const LOOKBACK_DAYS = 21;

export interface RecursionInput {
  /** Transformed prices the models were fitted on (known, or filled, through lastKnownDay). */
  readonly z: DayMatrix;
  readonly lastKnownDay: number;
  readonly horizonDays: number;
  /** The day-ahead members, averaged in price units as the direct day-ahead forecast is. */
  readonly models: readonly FittedDayModel[];
  /** The day-ahead forecast that starts the recursion (price units). */
  readonly dayAhead: Float64Array;
  /** Transformed value to price units (with the window's range guard). */
  readonly toPrice: (modelled: number) => number;
  /** Price units to the transformed scale the models read. */
  readonly toModelled: (price: number) => number;
}

/**
 * Forecasts of lastKnownDay+1 .. +horizonDays in price units (index h-1); the first is
 * `dayAhead` itself. A day is undefined once a member cannot build its features (then so
 * are the days after it).
 */
export function recursiveForecasts(input: RecursionInput): (Float64Array | undefined)[] {
  const { z, lastKnownDay, horizonDays, models } = input;
  const slots = z.slots;
  const firstDay = lastKnownDay - LOOKBACK_DAYS;
  const days = LOOKBACK_DAYS + horizonDays + 1;
  const values = new Float64Array(days * slots).fill(NaN);
  for (let d = Math.max(firstDay, z.firstDay); d <= Math.min(lastKnownDay, z.firstDay + z.days - 1); d++)
    values.set(z.values.subarray((d - z.firstDay) * slots, (d - z.firstDay + 1) * slots), (d - firstDay) * slots);
  const extended: DayMatrix = { firstDay, days, slots, values };
  const append = (day: number, prices: Float64Array): void => {
    for (let s = 0; s < slots; s++) values[(day - firstDay) * slots + s] = input.toModelled(prices[s]);
  };
  const out: (Float64Array | undefined)[] = [input.dayAhead];
  append(lastKnownDay + 1, input.dayAhead);
  for (let h = 2; h <= horizonDays; h++) {
    const day = lastKnownDay + h;
    const members = models.map((m) => m.predict(extended, day));
    if (members.length === 0 || members.some((m) => m === undefined)) break;
    const prices = new Float64Array(slots);
    for (let s = 0; s < slots; s++) {
      let sum = 0;
      for (const m of members) sum += input.toPrice(m![s]);
      prices[s] = sum / members.length;
    }
    out.push(prices);
    append(day, prices);
  }
  while (out.length < horizonDays) out.push(undefined);
  return out;
}
