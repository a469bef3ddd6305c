// Day-level load inputs for the days after D+1 (pure; issue 24 point 4). The platform's
// week-ahead total load forecast gives, per local day, a forecast minimum and maximum
// (prices/exogenous/series.ts WEEK_AHEAD_SERIES_NAMES). For every day the forecaster reads,
// the day's minimum and maximum come from the day-ahead load forecast where that day is
// complete (it is the better forecast: the day-ahead wins), else from the week-ahead one;
// only values fetched by the origin instant count. They are used for D+2..D+k where every
// day D+2..D+k is known at the origin (`knownThrough`), and only at the live origin
// (rolling.ts RollingInput.dailyLoad says why).
import { dayComplete, toDayMatrix, valueAt, type DayMatrix } from './day-matrix.js';
import type { PublishedPoint } from './exogenous-availability.js';

export interface WeekAheadInputs {
  /** `load_daily_min`, `load_daily_max`: every slot of a day holds the day's value. */
  readonly series: Readonly<Record<string, DayMatrix>>;
  /** Last day of D+2..D+horizon known at the origin; below origin + 2 there is nothing to use. */
  readonly knownThrough: number;
}

export function weekAheadInputs(args: {
  readonly timeZone: string;
  /** The region's day-ahead load forecast with fetch times. */
  readonly load: readonly PublishedPoint[];
  readonly weekAheadMin: readonly PublishedPoint[];
  readonly weekAheadMax: readonly PublishedPoint[];
  readonly originMs: number;
  readonly originDay: number;
  readonly horizonDays: number;
  readonly firstDay: number;
  readonly lastDay: number;
  readonly slots: number;
}): WeekAheadInputs | undefined {
  const { timeZone, firstDay, lastDay, slots } = args;
  const known = (xs: readonly PublishedPoint[]) => xs.filter((p) => p.fetchedAtMs <= args.originMs);
  const dayAhead = toDayMatrix(timeZone, known(args.load), firstDay, lastDay, slots);
  const wMin = toDayMatrix(timeZone, known(args.weekAheadMin), firstDay, lastDay, slots);
  const wMax = toDayMatrix(timeZone, known(args.weekAheadMax), firstDay, lastDay, slots);
  const days = lastDay - firstDay + 1;
  const min = new Float64Array(days * slots).fill(NaN);
  const max = new Float64Array(days * slots).fill(NaN);
  for (let d = firstDay; d <= lastDay; d++) {
    let lo = NaN;
    let hi = NaN;
    if (dayComplete(dayAhead, d)) {
      lo = Infinity;
      hi = -Infinity;
      for (let s = 0; s < slots; s++) {
        const v = valueAt(dayAhead, d, s);
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    } else if (dayComplete(wMin, d) && dayComplete(wMax, d)) {
      // A P1D value fills every slot; on a clock-change day a slot may be missing, so the first is read.
      lo = valueAt(wMin, d, 0);
      hi = valueAt(wMax, d, 0);
    }
    min.fill(lo, (d - firstDay) * slots, (d - firstDay + 1) * slots);
    max.fill(hi, (d - firstDay) * slots, (d - firstDay + 1) * slots);
  }
  const series = { load_daily_min: { firstDay, days, slots, values: min }, load_daily_max: { firstDay, days, slots, values: max } };
  let knownThrough = args.originDay + 1;
  for (let d = args.originDay + 2; d <= Math.min(lastDay, args.originDay + args.horizonDays); d++) {
    if (!dayComplete(series.load_daily_min, d)) break;
    knownThrough = d;
  }
  if (knownThrough < args.originDay + 2) return undefined;
  return { series, knownThrough };
}
