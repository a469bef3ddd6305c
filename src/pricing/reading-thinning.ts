// Pure: the readings of a settled session that its price depends on. Pricing spreads the
// energy between two readings evenly over the time between them and splits it at price-
// period boundaries (session-cost.ts). Every market's periods (15, 30, 60 min) start on the
// UTC quarter-hour grid, so readings whose neighbours both lie in the same quarter-hour only
// split energy that lands in that quarter-hour anyway: without them the energy of every
// period, and so the price under any prices, is the same. Keeping the first and last
// reading, everything outside start..end (the window's edges are interpolated from it), and
// each reading next to a quarter-hour boundary leaves at most about two readings per
// quarter-hour of a session sampled every few seconds.
import type { EnergyReading } from './session-cost.js';

export const THINNING_SLOT_MS = 15 * 60_000;

const slot = (atMs: number) => Math.floor(atMs / THINNING_SLOT_MS);

/** The readings (sorted by time) the price of a session start..end depends on. */
export function readingsThePriceNeeds(readings: readonly EnergyReading[], startMs: number, endMs: number): EnergyReading[] {
  if (readings.length <= 2) return [...readings];
  const kept: EnergyReading[] = [readings[0]];
  for (let i = 1; i < readings.length - 1; i++) {
    const r = readings[i];
    const previous = kept[kept.length - 1];
    const next = readings[i + 1];
    const inside = previous.timestampMs >= startMs && next.timestampMs <= endMs && r.timestampMs > startMs && r.timestampMs < endMs;
    // Dropped only when the interval it splits stays inside one quarter-hour (end exactly on its boundary included).
    const sameSlot = slot(previous.timestampMs) === slot(next.timestampMs) || next.timestampMs === (slot(previous.timestampMs) + 1) * THINNING_SLOT_MS;
    if (!(inside && sameSlot)) kept.push(r);
  }
  kept.push(readings[readings.length - 1]);
  return kept;
}
