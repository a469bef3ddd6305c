// What a Belgian (e-MUCS) meter computes for the capacity tariff, for the simulated P1 meter:
// the import energy of each quarter-hour from the site's power, its running average
// (1-0:1.4.0: the energy so far over the time elapsed in the quarter-hour) and the month's
// peak (1-0:1.6.0: the highest finished quarter-hour, with its start). The power set at an
// instant holds until the next one (the meter integrates continuously; the simulator only
// knows the load at each telegram). At the start, the quarter-hour so far counts at the
// replayed telegram's own 1-0:1.4.0 average: the replay goes on from the recorded state.
// A month boundary is not modelled (the peak is not reset): tests run within one month.
import { QUARTER_HOUR_MS, quarterHourStartMs } from '../planning/capacity.js';

export interface DemandValues {
  /** Import energy since the start (kWh), added to the recorded register. */
  readonly importKwh: number;
  readonly quarterAverageKw: number;
  readonly monthPeak: { readonly kw: number; readonly atMs: number | null };
}

const HOUR_MS = 3_600_000;

export class QuarterHourDemand {
  private lastMs: number;
  private powerKw = 0;
  private quarterStartMs: number;
  private quarterKwh: number;
  private importKwh = 0;
  private peak: { kw: number; atMs: number | null };

  constructor(opts: { readonly startMs: number; readonly averageKw: number; readonly monthPeakKw: number; readonly monthPeakAtMs: number | null }) {
    this.lastMs = opts.startMs;
    this.quarterStartMs = quarterHourStartMs(opts.startMs);
    this.quarterKwh = (opts.averageKw * (opts.startMs - this.quarterStartMs)) / HOUR_MS;
    this.peak = { kw: opts.monthPeakKw, atMs: opts.monthPeakAtMs };
  }

  /** The site's power from now on (W; fed in counts as no import); the time up to now is counted at the power before. */
  advance(nowMs: number, powerW: number): DemandValues {
    while (nowMs > this.lastMs) {
      const endMs = Math.min(nowMs, this.quarterStartMs + QUARTER_HOUR_MS);
      const kwh = (this.powerKw * (endMs - this.lastMs)) / HOUR_MS;
      this.quarterKwh += kwh;
      this.importKwh += kwh;
      this.lastMs = endMs;
      if (endMs === this.quarterStartMs + QUARTER_HOUR_MS) {
        const averageKw = (this.quarterKwh * HOUR_MS) / QUARTER_HOUR_MS;
        if (averageKw > this.peak.kw) this.peak = { kw: averageKw, atMs: this.quarterStartMs };
        this.quarterStartMs = endMs;
        this.quarterKwh = 0;
      }
    }
    this.powerKw = Math.max(0, powerW) / 1000;
    const elapsedMs = nowMs - this.quarterStartMs;
    return { importKwh: this.importKwh, quarterAverageKw: elapsedMs > 0 ? (this.quarterKwh * HOUR_MS) / elapsedMs : 0, monthPeak: { ...this.peak } };
  }
}
