// A session's cost under an operator's tariff, split by component. Pure.
//
// The energy is placed in time by the same even-spread rule as session-cost.ts (the energy
// between two readings spread evenly over that interval) and split over the day-ahead
// periods cut where the grid fee changes (tariff.ts). Per segment:
//   day_ahead       = kWh x day-ahead EUR/MWh / 1000
//   supplier_margin = kWh x (day-ahead / 1000 x (multiplier - 1) + margin per kWh)
//   grid_fee        = kWh x the grid fee at that time
// plus session_fee once. Each component is rounded half away from zero to 4 decimals;
// excl_vat is the sum of the rounded components, vat = excl_vat x rate rounded, incl_vat =
// excl_vat + vat: the lines of an invoice add up to its total to the last digit.
//
// A market without a tariff is not priced here: session-cost.ts prices it as before, so its
// totals cannot move.
import type { PricePeriod } from '../domain.js';
import { priceSession, roundTo, sdacNativeDurationS, type EnergyReading, type MissingPeriod, type NativeDurationS } from './session-cost.js';
import { tariffSegments, type Tariff, type TariffSegment } from './tariff.js';

export interface CostComponents {
  readonly dayAhead: number;
  readonly supplierMargin: number;
  readonly gridFee: number;
  readonly sessionFee: number;
}

export interface GridFeeByZone {
  readonly zone: string;
  readonly perKwh: number;
  readonly energyKwh: number;
  /** Rounded to 4 decimals. */
  readonly cost: number;
}

export interface TariffCost {
  readonly totalExclVat: number;
  readonly vat: number;
  readonly totalInclVat: number;
  readonly vatRate: number;
  /** Each rounded to 4 decimals; they add up to totalExclVat. */
  readonly components: CostComponents;
  /** The grid fee per zone, in the order the zones first occur. */
  readonly gridFeeByZone: readonly GridFeeByZone[];
  readonly energyKwh: number;
  /** Unrounded components, for tests and diagnostics. */
  readonly exact: CostComponents;
}

export type TariffCostResult =
  | { readonly ok: true; readonly cost: TariffCost; readonly startMs: number; readonly endMs: number }
  | { readonly ok: false; readonly missing: MissingPeriod };

/**
 * The energy of each segment (segments contiguous, sorted, covering the readings' span)
 * by the even-spread rule. O(readings + segments).
 */
export function energyPerSegment(readings: readonly EnergyReading[], segments: readonly { readonly startMs: number; readonly endMs: number }[]): number[] {
  const energy = new Array<number>(segments.length).fill(0);
  let k = 0;
  for (let i = 1; i < readings.length; i++) {
    const t0 = readings[i - 1].timestampMs;
    const t1 = readings[i].timestampMs;
    const e = readings[i].energyKwh - readings[i - 1].energyKwh;
    while (k < segments.length - 1 && segments[k].endMs <= t0) k++;
    if (t1 <= segments[k].endMs) {
      energy[k] += e;
      continue;
    }
    const ratePerMs = e / (t1 - t0);
    let t = t0;
    while (t1 > segments[k].endMs && k < segments.length - 1) {
      energy[k] += ratePerMs * (segments[k].endMs - t);
      t = segments[k].endMs;
      k++;
    }
    energy[k] += ratePerMs * (t1 - t);
  }
  return energy;
}

function rounded(c: CostComponents): CostComponents {
  return { dayAhead: roundTo(c.dayAhead), supplierMargin: roundTo(c.supplierMargin), gridFee: roundTo(c.gridFee), sessionFee: roundTo(c.sessionFee) };
}

/** The cost of priced segments with their energies, under the tariff. */
export function costOfSegments(tariff: Tariff, segments: readonly TariffSegment[], energies: readonly number[]): TariffCost {
  let dayAhead = 0;
  let supplierMargin = 0;
  let gridFee = 0;
  let energyKwh = 0;
  const byZone = new Map<string, { perKwh: number; energyKwh: number; cost: number }>();
  for (let s = 0; s < segments.length; s++) {
    const e = energies[s];
    if (e === 0) continue;
    const seg = segments[s];
    energyKwh += e;
    dayAhead += (e * seg.dayAheadPerMwh) / 1000;
    supplierMargin += e * ((seg.dayAheadPerMwh / 1000) * (tariff.dayAheadMultiplier - 1) + tariff.supplierMarginPerKwh);
    gridFee += e * seg.perKwh;
    const key = `${seg.zone}\u0000${seg.perKwh}`;
    const zone = byZone.get(key) ?? { perKwh: seg.perKwh, energyKwh: 0, cost: 0 };
    zone.energyKwh += e;
    zone.cost += e * seg.perKwh;
    byZone.set(key, zone);
  }
  const exact: CostComponents = { dayAhead, supplierMargin, gridFee, sessionFee: tariff.sessionFee };
  const components = rounded(exact);
  const totalExclVat = roundTo(components.dayAhead + components.supplierMargin + components.gridFee + components.sessionFee);
  const vat = roundTo(totalExclVat * tariff.vatRate);
  return {
    totalExclVat,
    vat,
    totalInclVat: roundTo(totalExclVat + vat),
    vatRate: tariff.vatRate,
    components,
    gridFeeByZone: [...byZone].map(([key, z]) => ({ zone: key.split('\u0000')[0], perKwh: z.perKwh, energyKwh: roundTo(z.energyKwh, 6), cost: roundTo(z.cost) })),
    energyKwh,
    exact,
  };
}

/**
 * Prices a session under a tariff. `readings` must pass checkReadings(); `periods` as for
 * priceSession, whose coverage rule applies unchanged (the first uncovered period is
 * returned as missing).
 */
export function priceSessionWithTariff(
  readings: readonly EnergyReading[],
  periods: readonly PricePeriod[],
  tariff: Tariff,
  nativeDurationS: NativeDurationS = sdacNativeDurationS,
): TariffCostResult {
  const covered = priceSession(readings, periods, nativeDurationS);
  if (!covered.ok) return covered;
  const { startMs, endMs } = covered;
  const segments = tariffSegments(tariff, periods, startMs, endMs);
  return { ok: true, cost: costOfSegments(tariff, segments, energyPerSegment(readings, segments)), startMs, endMs };
}
