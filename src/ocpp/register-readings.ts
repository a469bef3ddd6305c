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

/** A reading rounded as sessions keep them (to a millionth of a kWh). */
export const roundKwh = (kwh: number): number => Math.round(kwh * 1e6) / 1e6;

/**
 * The register at one instant from the values sampled then (kWh), or null when none of
 * them is the connector's energy. The connector total (no phase) is used; a charger that
 * sends only per-phase registers has them summed. Values measured elsewhere than the
 * outlet (an EV's or the grid side) are not the connector's energy.
 */
export function registerAtInstant(values: readonly Pick<RegisterValue, 'phase' | 'location' | 'value' | 'unit'>[]): number | null {
  let total: number | null = null;
  let phaseSum: number | null = null;
  for (const v of values) {
    if (v.location !== '' && v.location !== 'Outlet') continue;
    if (v.unit !== 'Wh' && v.unit !== 'kWh') continue;
    const kwh = toKwh(v.value, v.unit);
    if (v.phase === '') total = kwh;
    else if (/^L[123]$/.test(v.phase)) phaseSum = (phaseSum ?? 0) + kwh;
  }
  const kwh = total ?? phaseSum;
  return kwh === null ? null : roundKwh(kwh);
}

/** The instant is one of the transaction's edges, where meterStart/meterStop are the reading. */
export function isEdge(ends: TransactionEnds, atMs: number): boolean {
  return atMs === ends.startedAtMs || (ends.stoppedAtMs !== null && ends.meterStopWh !== null && atMs === ends.stoppedAtMs);
}

/**
 * One reading per instant, oldest first (registerAtInstant at each), with meterStart and
 * meterStop, readings of the same register at the transaction's edges, winning there;
 * a value that breaks monotonicity against the edges (registerBreak) is left out.
 * ocpp/charger-sessions.ts keeps the same list incrementally; this is the rule whole.
 */
export function registerReadings(ends: TransactionEnds, values: readonly RegisterValue[]): EnergyReading[] {
  const atInstant = new Map<number, RegisterValue[]>();
  for (const v of values) {
    const list = atInstant.get(v.sampledAtMs);
    if (list) list.push(v);
    else atInstant.set(v.sampledAtMs, [v]);
  }
  const byTime = new Map<number, number>();
  for (const [t, list] of atInstant) {
    if (isEdge(ends, t)) continue;
    const kwh = registerAtInstant(list);
    if (kwh !== null && registerBreak(ends, kwh) === null) byTime.set(t, kwh);
  }
  for (const edge of edgeReadings(ends)) byTime.set(edge.timestampMs, edge.energyKwh);
  return [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([timestampMs, energyKwh]) => ({ timestampMs, energyKwh }));
}

/** meterStart at the start and, once stopped, meterStop at the stop. */
export function edgeReadings(ends: TransactionEnds): EnergyReading[] {
  const out: EnergyReading[] = [{ timestampMs: ends.startedAtMs, energyKwh: roundKwh(ends.meterStartWh / 1000) }];
  if (ends.stoppedAtMs !== null && ends.meterStopWh !== null) out.push({ timestampMs: ends.stoppedAtMs, energyKwh: roundKwh(ends.meterStopWh / 1000) });
  return out;
}

export type RegisterBreak = 'below-meter-start' | 'above-meter-stop';

/**
 * The glitch rule of a charger's register (as acceptReading is a meter's): a value between
 * the edges can be priced, one below meterStart or above meterStop breaks monotonicity
 * against them and is left out of the session (kept as sent in ocpp_meter_values). With
 * meterStop below meterStart the edges themselves are wrong: nothing is left out then, and
 * the cdr says why it cannot be priced.
 */
export function registerBreak(ends: TransactionEnds, energyKwh: number): RegisterBreak | null {
  const startKwh = roundKwh(ends.meterStartWh / 1000);
  const stopKwh = ends.meterStopWh === null ? null : roundKwh(ends.meterStopWh / 1000);
  if (stopKwh !== null && stopKwh < startKwh) return null;
  if (energyKwh < startKwh) return 'below-meter-start';
  if (stopKwh !== null && energyKwh > stopKwh) return 'above-meter-stop';
  return null;
}

/**
 * The energy an open transaction has delivered so far, as the status page shows it (Wh):
 * its newest connector-total register value (`newest`, null while none) less meterStart.
 */
export function energySoFarWh(meterStartWh: number, newest: Pick<RegisterValue, 'value' | 'unit'> | null): number {
  const registerWh = newest === null ? meterStartWh : newest.unit === 'kWh' ? newest.value * 1000 : newest.value;
  return registerWh - meterStartWh;
}
