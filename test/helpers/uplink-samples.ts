// Samples to hand the recorder in uplink tests: what a meter would give, stamped where the
// clock gate lets them leave.
import type { MeterSample } from '../../src/domain.js';

/** A two-metric sample (power and the import counter) of `resourceId` at `sampledAtMs`. */
export function sample(resourceId: string, sampledAtMs: number, energyWh: number): MeterSample {
  return {
    resourceId,
    sampledAtMs,
    metrics: [
      { name: 'total_active_power', value: 1234.5, unit: 'W' },
      { name: 'active_energy_import', value: energyWh, unit: 'Wh' },
    ],
  };
}

/** A whole second an hour ago: the clock gate lets no message stamped in the future leave. */
export const hourAgo = (): number => Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
