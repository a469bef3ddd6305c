// Pure: a charger transaction's energy register as the cumulative readings a session is
// priced from (pricing/session-cost.ts EnergyReading, kWh), from its meterStart, the
// Energy.Active.Import.Register values it sent (by their own timestamps, in any order)
// and its meterStop.

import type { EnergyReading } from '../pricing/session-cost.js';

export const ENERGY_REGISTER = 'Energy.Active.Import.Register';

/** One stored sampled value of the register (ocpp_meter_values). */
export interface RegisterValue {
  readonly sampledAtMs: number;
  /** '' when the charger sent none: the connector's total. */
  readonly phase: string;
  /** '' when the charger sent none (OCPP default Outlet). */
  readonly location: string;
  readonly value: number;
  /** Wh or kWh. */
  readonly unit: string;
}

export interface TransactionEnds {
  readonly startedAtMs: number;
  readonly meterStartWh: number;
  readonly stoppedAtMs: number | null;
  readonly meterStopWh: number | null;
}

const toKwh = (value: number, unit: string): number => (unit === 'kWh' ? value : value / 1000);

/**
 * One reading per instant, oldest first. At an instant the connector total (no phase) is
 * used; a charger that sends only per-phase registers has them summed. Values measured
 * elsewhere than the outlet (an EV's or the grid side) are not the connector's energy.
 * meterStart and meterStop are readings of the same register at the transaction's edges.
 */
export function registerReadings(ends: TransactionEnds, values: readonly RegisterValue[]): EnergyReading[] {
  const totals = new Map<number, number>();
  const phaseSums = new Map<number, number>();
  for (const v of values) {
    if (v.location !== '' && v.location !== 'Outlet') continue;
    if (v.unit !== 'Wh' && v.unit !== 'kWh') continue;
    const kwh = toKwh(v.value, v.unit);
    if (v.phase === '') totals.set(v.sampledAtMs, kwh);
    else if (/^L[123]$/.test(v.phase)) phaseSums.set(v.sampledAtMs, (phaseSums.get(v.sampledAtMs) ?? 0) + kwh);
  }
  const byTime = new Map<number, number>(phaseSums);
  for (const [t, kwh] of totals) byTime.set(t, kwh);
  // The edges are the charger's own statement of the register at start and stop.
  byTime.set(ends.startedAtMs, ends.meterStartWh / 1000);
  if (ends.stoppedAtMs !== null && ends.meterStopWh !== null) byTime.set(ends.stoppedAtMs, ends.meterStopWh / 1000);
  return [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([timestampMs, energyKwh]) => ({ timestampMs, energyKwh: Math.round(energyKwh * 1e6) / 1e6 }));
}
