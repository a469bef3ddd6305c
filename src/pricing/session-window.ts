// The readings that bill exactly a session's stated window, start to end. Pure.
//
// Pricing spreads the energy between two consecutive readings evenly over that interval,
// so the cumulative reading at an instant between them is the linear interpolation.
// Cutting a session at an edge is therefore replacing the readings beyond the edge by the
// reading interpolated at the edge: the energy inside is billed exactly as the whole
// interval would bill it, the energy outside is not billed at all.
import type { EnergyReading } from './session-cost.js';

/** The cumulative reading at `atMs`, between readings `a` and `b` (a before b), by the even-spread rule. */
export function readingAt(a: EnergyReading, b: EnergyReading, atMs: number): EnergyReading {
  const share = (atMs - a.timestampMs) / (b.timestampMs - a.timestampMs);
  return { timestampMs: atMs, energyKwh: a.energyKwh + (b.energyKwh - a.energyKwh) * share };
}

/**
 * The readings of [startMs, endMs]: those inside it and, at an edge with readings on
 * both sides, the reading interpolated at the edge. Readings outside are dropped. An
 * edge with readings on one side only is not extended: nothing says what was drawn
 * there. `readings` sorted, strictly increasing (checkReadings). The same array when
 * every reading is inside.
 */
export function clipToWindow(readings: readonly EnergyReading[], startMs: number, endMs: number): readonly EnergyReading[] {
  const n = readings.length;
  if (n === 0 || (readings[0].timestampMs >= startMs && readings[n - 1].timestampMs <= endMs)) return readings;
  const out: EnergyReading[] = [];
  let i = 0;
  while (i < n && readings[i].timestampMs < startMs) i++;
  if (i > 0 && i < n && readings[i].timestampMs > startMs) out.push(readingAt(readings[i - 1], readings[i], startMs));
  while (i < n && readings[i].timestampMs <= endMs) out.push(readings[i++]);
  if (i > 0 && i < n && readings[i - 1].timestampMs < endMs) out.push(readingAt(readings[i - 1], readings[i], endMs));
  return out;
}

/** An edge of the window that stored readings cannot bound closely enough. */
export interface EdgeGap {
  readonly edge: 'start' | 'end';
  /** From the edge to the nearest reading at or beyond it (before the start, after the end); null when there is none. */
  readonly gapMs: number | null;
}

/**
 * The edges whose nearest reading at or beyond them is further than `maxGapMs`, or
 * missing: there the energy up to the edge cannot be interpolated closely, and billing
 * only what lies between the readings would be a smaller cost than the session's.
 * Empty when both edges are bounded. `readings` sorted by time.
 */
export function unboundedEdges(readings: readonly EnergyReading[], startMs: number, endMs: number, maxGapMs: number): EdgeGap[] {
  const gaps: EdgeGap[] = [];
  let lastAtOrBefore: EnergyReading | undefined;
  let firstAtOrAfter: EnergyReading | undefined;
  for (const r of readings) {
    if (r.timestampMs <= startMs) lastAtOrBefore = r;
    if (r.timestampMs >= endMs && firstAtOrAfter === undefined) firstAtOrAfter = r;
  }
  const startGap = lastAtOrBefore === undefined ? null : startMs - lastAtOrBefore.timestampMs;
  const endGap = firstAtOrAfter === undefined ? null : firstAtOrAfter.timestampMs - endMs;
  if (startGap === null || startGap > maxGapMs) gaps.push({ edge: 'start', gapMs: startGap });
  if (endGap === null || endGap > maxGapMs) gaps.push({ edge: 'end', gapMs: endGap });
  return gaps;
}
