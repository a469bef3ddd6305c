// Estimates for the periods of a market_price_forecast answer that have neither a stored
// price nor a stored forecast: a hole inside the published prices (a day a backfill
// missed, the autumn DST hour a CSV lacks). The answer must not skip them (clients index
// by duration_seconds), so each gets an estimate with bounds, by the forecaster's own
// fallbacks: a short gap inside a day is interpolated between its neighbours, a missing
// day reads as the nearest known day (day-matrix.ts), and the bounds are the forecaster's
// cold-start interval on the recent day-to-day variation (rolling.ts). Pure.
import { dayComplete, fillUnknownDays, toDayMatrix, valueAt, type SeriesPoint } from './day-matrix.js';
import { localDayOf, localMinuteOfDay } from './local-days.js';
import { COLD_START_Z, recentVariation } from './rolling.js';

export interface GapEstimate {
  readonly value: number;
  /** Half-width of the interval around `value`. */
  readonly halfWidth: number;
}

export interface GapFiller {
  /** Estimate for the quarter-hour starting at `startMs`; undefined without any known day. */
  at(startMs: number): GapEstimate | undefined;
}

const SLOTS = 96;

/** A filler over the days the given prices touch (at least two weeks before the hole for the bounds). */
export function gapFiller(timeZone: string, prices: readonly SeriesPoint[]): GapFiller {
  if (prices.length === 0) return { at: () => undefined };
  const firstDay = localDayOf(timeZone, prices[0].startMs);
  const last = prices[prices.length - 1];
  const lastDay = localDayOf(timeZone, last.startMs + last.durationS * 1000 - 1);
  const known = toDayMatrix(timeZone, prices, firstDay, lastDay, SLOTS);
  const { matrix } = fillUnknownDays(known, lastDay);
  let lastComplete = lastDay;
  while (lastComplete >= firstDay && !dayComplete(known, lastComplete)) lastComplete--;
  const halfWidth = COLD_START_Z * recentVariation(known, lastComplete);
  return {
    at(startMs) {
      const day = Math.min(lastDay, Math.max(firstDay, localDayOf(timeZone, startMs)));
      const value = valueAt(matrix, day, Math.floor(localMinuteOfDay(timeZone, startMs) / (1440 / SLOTS)));
      return Number.isFinite(value) ? { value, halfWidth } : undefined;
    },
  };
}
