// What a completed charger session cost against what charging immediately would have cost
// over the same energy and time. Pure: readings and price periods in, costs out.
//
// The rule for "charging immediately": from the moment the car was plugged in (the
// transaction's start) at the connector's maximum allowed power until the same energy as
// the session delivered is in, the energy spread evenly over that time, priced by the same
// rule as the session itself (pricing/session-cost.ts; under the market's tariff, when it has
// one, pricing/tariff-cost.ts, both with its fee per session). If that power could not have
// delivered the energy by the session's end (the car drew more on average than the power
// assumed), charging immediately is the whole session at the session's average power.
import type { PricePeriod } from '../domain.js';
import { priceSession, type EnergyReading, type NativeDurationS } from '../pricing/session-cost.js';
import type { Tariff } from '../pricing/tariff.js';
import { priceSessionWithTariff } from '../pricing/tariff-cost.js';

const HOUR_MS = 3_600_000;

export interface ImmediateCharging {
  readonly startMs: number;
  readonly endMs: number;
  readonly energyWh: number;
  /** The power charged at: the maximum allowed, or the session's average when that is higher. */
  readonly powerW: number;
}

/** The immediate schedule for `energyWh` delivered between startMs and endMs at up to maxPowerW. */
export function immediateCharging(startMs: number, endMs: number, energyWh: number, maxPowerW: number): ImmediateCharging {
  if (!(maxPowerW > 0)) throw new RangeError(`maxPowerW must be positive, got ${maxPowerW}`);
  if (!(endMs > startMs)) throw new RangeError('the session must end after it starts');
  const energy = Math.max(0, energyWh);
  const durationMs = Math.min((energy / maxPowerW) * HOUR_MS, endMs - startMs);
  const powerW = durationMs > 0 ? (energy / durationMs) * HOUR_MS : maxPowerW;
  return { startMs, endMs: startMs + durationMs, energyWh: energy, powerW };
}

export type OutcomeCost = { readonly ok: true; readonly actualCost: number; readonly immediateCost: number; readonly energyWh: number; readonly immediate: ImmediateCharging } | { readonly ok: false; readonly missingFromMs: number };

type Priced = { readonly ok: true; readonly totalCostExclVat: number } | { readonly ok: false; readonly missing: { readonly startMs: number } };

/** The cdr's total excl. VAT: under the tariff when there is one, else the day-ahead price alone. */
function priceAs(readings: readonly EnergyReading[], periods: readonly PricePeriod[], nativeDurationS: NativeDurationS, tariff: Tariff | undefined): Priced {
  if (!tariff) return priceSession(readings, periods, nativeDurationS);
  const r = priceSessionWithTariff(readings, periods, tariff, nativeDurationS);
  return r.ok ? { ok: true, totalCostExclVat: r.cost.totalExclVat } : r;
}

/**
 * The session's cost from its readings (already cut to its window, at least two) and the
 * cost of charging the same energy immediately, both on the same periods (and under the
 * same tariff). Not ok when a price is missing for time either covers.
 */
export function sessionOutcomeCost(readings: readonly EnergyReading[], maxPowerW: number, periods: readonly PricePeriod[], nativeDurationS: NativeDurationS, tariff?: Tariff): OutcomeCost {
  const first = readings[0];
  const last = readings[readings.length - 1];
  const energyWh = (last.energyKwh - first.energyKwh) * 1000;
  const actual = priceAs(readings, periods, nativeDurationS, tariff);
  if (!actual.ok) return { ok: false, missingFromMs: actual.missing.startMs };
  const immediate = immediateCharging(first.timestampMs, last.timestampMs, energyWh, maxPowerW);
  if (immediate.energyWh === 0) return { ok: true, actualCost: actual.totalCostExclVat, immediateCost: 0, energyWh, immediate };
  const immediatePrice = priceAs(
    [
      { timestampMs: immediate.startMs, energyKwh: 0 },
      { timestampMs: immediate.endMs, energyKwh: immediate.energyWh / 1000 },
    ],
    periods,
    nativeDurationS,
    tariff,
  );
  if (!immediatePrice.ok) return { ok: false, missingFromMs: immediatePrice.missing.startMs };
  return { ok: true, actualCost: actual.totalCostExclVat, immediateCost: immediatePrice.totalCostExclVat, energyWh, immediate };
}
