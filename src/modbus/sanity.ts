// Pure plausibility checks on one meter's consecutive readings. A sample that fails is
// dropped (with a log line and a counter, by the poller); it never reaches the store.

export type DropReason = 'not_a_number' | 'infinite' | 'no_value' | 'power_out_of_range' | 'energy_backwards' | 'energy_jump';

export interface Reading {
  readonly sampledAtMs: number;
  readonly values: Readonly<Record<string, number>>;
}

export interface SanityLimits {
  /** Largest plausible |total_active_power|, W. */
  readonly maxPowerW: number;
  /** Counter resolution slack, Wh (e.g. 0.1 kWh registers step by 100 Wh). */
  readonly energySlackWh?: number;
}

export type SanityResult = { readonly ok: true } | { readonly ok: false; readonly reason: DropReason; readonly detail: string };

/** Cumulative energy counters: they never go down and cannot rise faster than max power allows. */
export const ENERGY_COUNTERS = ['active_energy_import', 'active_energy_export'] as const;

export function checkReading(next: Reading, previous: Reading | null, limits: SanityLimits): SanityResult {
  const entries = Object.entries(next.values);
  if (entries.length === 0) return { ok: false, reason: 'no_value', detail: 'no register carried a value' };
  for (const [metric, value] of entries) {
    if (Number.isNaN(value)) return { ok: false, reason: 'not_a_number', detail: `${metric} is NaN` };
    if (!Number.isFinite(value)) return { ok: false, reason: 'infinite', detail: `${metric} is ${value}` };
  }
  const power = next.values.total_active_power;
  if (power !== undefined && Math.abs(power) > limits.maxPowerW) {
    return { ok: false, reason: 'power_out_of_range', detail: `total_active_power ${power} W beyond ±${limits.maxPowerW} W` };
  }
  if (previous) {
    // Stamped before the reading it follows: the wall clock went back (a gateway without RTC
    // booting on fake-hwclock or 1970 until NTP answers, judged against the reading stored before
    // the restart; or a clock step back while running). The time between the two is unknown, so
    // a rise cannot be judged too fast: judging it against no time at all would drop every
    // reading until the clock passes the reference again (days on a site whose uplink is down).
    const elapsedKnown = next.sampledAtMs >= previous.sampledAtMs;
    const dtH = (next.sampledAtMs - previous.sampledAtMs) / 3_600_000;
    const slack = limits.energySlackWh ?? 1000;
    for (const metric of ENERGY_COUNTERS) {
      const now = next.values[metric];
      const before = previous.values[metric];
      if (now === undefined || before === undefined) continue;
      if (now < before) return { ok: false, reason: 'energy_backwards', detail: `${metric} went from ${before} to ${now} Wh` };
      if (!elapsedKnown) continue;
      const allowed = limits.maxPowerW * dtH * 1.5 + slack;
      if (now - before > allowed) {
        return { ok: false, reason: 'energy_jump', detail: `${metric} rose ${now - before} Wh in ${(dtH * 3600).toFixed(1)} s (at most ${allowed.toFixed(0)} Wh plausible)` };
      }
    }
  }
  return { ok: true };
}
