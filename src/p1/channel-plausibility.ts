// Plausibility of an M-Bus channel's consecutive readings (pure): a gas, water or heat counter
// never goes down, and cannot rise faster than the largest meter a household connection has
// lets through between two capture times. A reading that fails is not published (counted in
// metergate_meter_samples_dropped_total and named as the channel's problem); a counter that
// stays lower is a replaced meter and is believed (p1-source.ts, as for electricity).

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

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
