// Pure resampling of native day-ahead periods to a requested interval, aligned to the
// market's local clock. Coarser than native: time-weighted mean; finer: the native
// value repeated. A target period not fully covered by native prices is left out, so
// no price is ever invented across a gap.
import type { PricePeriod } from '../domain.js';
import { offsetMs } from './timezone.js';

export const SUPPORTED_INTERVALS_S = [900, 1800, 3600] as const;

/**
 * Start of the `intervalS` period containing `utcMs`, counted on the local wall clock
 * (periods start at local :00/:15/:30/:45). Zones whose offset is a multiple of the
 * interval (all CET/EET markets) give whole UTC hours for 3600 s; a +05:30 zone would
 * give :30 UTC starts.
 */
export function periodStartMs(timeZone: string, utcMs: number, intervalS: number): number {
  const intervalMs = intervalS * 1000;
  const wall = utcMs + offsetMs(timeZone, utcMs);
  return utcMs - (((wall % intervalMs) + intervalMs) % intervalMs);
}

export interface ResampleRequest {
  readonly marketArea: string;
  readonly timeZone: string;
  /** Target periods overlapping [fromMs, toMs) are returned. */
  readonly fromMs: number;
  readonly toMs: number;
  readonly intervalS: number;
}

/**
 * Resamples native periods (sorted by start, not overlapping; durations may change
 * within the range, e.g. 3600 -> 900 s at the 15-minute switch) to `intervalS`.
 */
export function resample(native: readonly PricePeriod[], req: ResampleRequest): PricePeriod[] {
  const { intervalS, timeZone, marketArea } = req;
  if (!Number.isInteger(intervalS) || intervalS <= 0) throw new RangeError(`interval must be a positive whole number of seconds, got ${intervalS}`);
  const intervalMs = intervalS * 1000;
  const out: PricePeriod[] = [];
  if (native.length === 0 || req.toMs <= req.fromMs) return out;
  const firstNative = native[0].startMs;
  const last = native[native.length - 1];
  const fromMs = Math.max(req.fromMs, firstNative);
  const toMs = Math.min(req.toMs, last.startMs + last.durationS * 1000);
  let j = 0;
  for (let start = periodStartMs(timeZone, fromMs, intervalS); start < toMs; start += intervalMs) {
    const end = start + intervalMs;
    while (j < native.length && native[j].startMs + native[j].durationS * 1000 <= start) j++;
    let covered = 0;
    let weighted = 0;
    for (let k = j; k < native.length && native[k].startMs < end; k++) {
      const p = native[k];
      const overlap = Math.min(end, p.startMs + p.durationS * 1000) - Math.max(start, p.startMs);
      if (overlap > 0) {
        covered += overlap;
        weighted += p.pricePerMwh * overlap;
      }
    }
    if (covered === intervalMs) {
      out.push({ marketArea, startMs: start, durationS: intervalS, pricePerMwh: roundPrice(weighted / intervalMs) });
    }
  }
  return out;
}

/** Means are rounded to 1e-6 EUR/MWh so repeated values come out exactly as stored. */
function roundPrice(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
