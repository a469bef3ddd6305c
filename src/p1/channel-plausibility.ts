// Plausibility of an M-Bus channel's consecutive readings (pure): a gas, water or heat counter
// never goes down, and cannot rise faster than the largest meter a household connection has
// lets through between two capture times. A reading that fails is not published (counted in
// metergate_meter_samples_dropped_total and named as the channel's problem). A new level, lower
// (a replaced meter) or higher (a replaced meter with more on it), is believed once
// CHANNEL_BELIEVE_AFTER refused readings in a row agree with each other (judgeChannelReading).
// After a restart the reference is the last readings the store kept (channelPlausibilityFrom),
// so a register that went backwards while the gateway was down is caught too.

import type { MeterSample } from '../domain.js';

export type ChannelDropReason = 'channel_backwards' | 'channel_jump';

export interface ChannelValue {
  readonly capturedAtMs: number;
  readonly metric: string;
  readonly value: number;
}

/**
 * Largest flow per hour, in the published unit, and the register's resolution (one step more
 * is never a jump). Gas: G25 (40 m3/h), the largest small-user meter a DSMR meter relays;
 * water: Q4 of a DN25 house meter (7.875 m3/h) rounded up; heat and cooling: 100 kW.
 */
export const CHANNEL_LIMITS: Readonly<Record<string, { readonly maxPerHour: number; readonly resolution: number }>> = {
  gas_volume: { maxPerHour: 40, resolution: 0.01 },
  water_volume: { maxPerHour: 10, resolution: 0.01 },
  hot_water_volume: { maxPerHour: 10, resolution: 0.01 },
  heat_energy: { maxPerHour: 100_000, resolution: 1000 },
  cooling_energy: { maxPerHour: 100_000, resolution: 1000 },
};

export type ChannelVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: ChannelDropReason; readonly detail: string };

export function checkChannelReading(next: ChannelValue, previous: ChannelValue | null): ChannelVerdict {
  if (!previous || previous.metric !== next.metric) return { ok: true };
  const limits = CHANNEL_LIMITS[next.metric];
  if (!limits) return { ok: true };
  if (next.value < previous.value) return { ok: false, reason: 'channel_backwards', detail: `${next.metric} went from ${previous.value} to ${next.value}` };
  const hours = Math.max(0, next.capturedAtMs - previous.capturedAtMs) / 3_600_000;
  const allowed = limits.maxPerHour * hours + limits.resolution;
  if (next.value - previous.value > allowed) {
    const minutes = Math.round(hours * 60);
    return { ok: false, reason: 'channel_jump', detail: `${next.metric} rose ${round3(next.value - previous.value)} in ${minutes} min (at most ${round3(allowed)} at ${limits.maxPerHour}/h)` };
  }
  return { ok: true };
}

/** Refused readings in a row, each plausible after the one before, that make a new level believed. */
export const CHANNEL_BELIEVE_AFTER = 3;

export interface ChannelPlausibility {
  /** The last reading handed on, and the one handed on before it. */
  readonly reference: ChannelValue | null;
  readonly beforeReference: ChannelValue | null;
  /** Refused readings in a row that agree with each other: a new level, if it lasts. */
  readonly candidates: readonly ChannelValue[];
}

export const NO_CHANNEL_READING: ChannelPlausibility = { reference: null, beforeReference: null, candidates: [] };

/** A reading a channel handed on, as the store kept it. */
export type PublishedChannelReading = Pick<MeterSample, 'sampledAtMs' | 'metrics'>;

/**
 * The state to judge a channel's next reading against, from the readings it handed on before a
 * restart (as stored: stamped with their capture time), newest first. Only a metric with
 * limits counts; none stored: nothing to judge against, the first reading is believed.
 */
export function channelPlausibilityFrom(published: readonly PublishedChannelReading[]): ChannelPlausibility {
  const values = published.flatMap((r): ChannelValue[] => {
    const metric = r.metrics.find((m) => CHANNEL_LIMITS[m.name] !== undefined);
    return metric ? [{ capturedAtMs: r.sampledAtMs, metric: metric.name, value: metric.value }] : [];
  });
  return { reference: values[0] ?? null, beforeReference: values[1] ?? null, candidates: [] };
}

export type ChannelJudgement =
  | { readonly ok: true; readonly state: ChannelPlausibility; readonly believed?: string }
  | { readonly ok: false; readonly state: ChannelPlausibility; readonly reason: ChannelDropReason; readonly detail: string };

/**
 * Judges the next reading of a channel. A refused one that is plausible after the reading handed
 * on before the last is accepted at once: the last was the outlier (a garbled digit within the
 * limit on a DSMR 2.2 meter, which has no CRC; it is already published, but the true readings
 * after it are not lost). Otherwise CHANNEL_BELIEVE_AFTER refused readings in a row, each
 * plausible after the one before, are a new level, up or down, and the last of them is believed.
 */
export function judgeChannelReading(state: ChannelPlausibility, next: ChannelValue): ChannelJudgement {
  const accept = (believed?: string): ChannelJudgement => ({
    ok: true,
    state: { reference: next, beforeReference: state.reference, candidates: [] },
    ...(believed === undefined ? {} : { believed }),
  });
  const verdict = checkChannelReading(next, state.reference);
  if (verdict.ok) return accept();
  if (state.beforeReference && checkChannelReading(next, state.beforeReference).ok) {
    return accept(`${verdict.detail}; plausible after the reading before, so ${state.reference!.value} was the outlier`);
  }
  const last = state.candidates[state.candidates.length - 1];
  const candidates = last && checkChannelReading(next, last).ok ? [...state.candidates, next] : [next];
  if (candidates.length >= CHANNEL_BELIEVE_AFTER) {
    return accept(`${verdict.detail}; ${candidates.length} readings in a row agree: a new level (replaced device)`);
  }
  return { ok: false, state: { ...state, candidates }, reason: verdict.reason, detail: verdict.detail };
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
