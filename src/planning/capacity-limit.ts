// The capacity cap (capacity.ts) as the site headroom a plan may use: the site meter's
// quarter-hour demand and month's peak, its power and the planned connectors' measured draw
// in; the charging power allowed now and the current per phase it gives out. Pure.
//
// - The other load is the site meter's power less what the planned connectors draw (their
//   chargers' latest measured currents, when the site meter measures the chargers): what the
//   charging the gateway plans does not decide. Unknown own draw: nothing is taken off (the
//   other load counts too high, never too low). Never below the meter's own power while the
//   site imports (0): a charger's report that lags its lowering must not look like solar.
// - No demand reading from the meter (1-0:1.4.0 / 1-0:1.6.0 absent or old, e.g. a P1 port
//   whose capacity data the owner has not opened): the quarter-hour so far is taken as at the
//   cap (only cap − other load is allowed, no catching up) and the month's peak as unknown
//   (the cap is the target or the 2.5 kW floor). The plan says so.
// - No fresh site meter reading: nothing is allowed (the site's power is unknown, so any
//   charging could make the peak); the plan says so.
import { capKw, energyDrawnKwh, FLUVIUS_BILLING_FLOOR_KW, kwToCurrentPerPhaseA, quarterHourAllowance, quarterHourStartMs, type QuarterHourAllowance } from './capacity.js';

/** The site meter's capacity objects, as the site meter module keeps them (site/site-meter.ts). */
export interface SiteDemandReading {
  readonly sampledAtMs: number;
  readonly quarterHourAverageKw: number | null;
  readonly monthPeakKw: number | null;
  readonly monthPeakAtMs: number | null;
}

export interface CapacitySettings {
  readonly eurPerKwMonth: number;
  readonly targetKw: number | null;
  readonly marginKw: number;
  readonly raisePeakForDeparture: boolean;
  readonly maxReadingAgeMs: number;
}

export type CapacityState = 'measured' | 'no-demand' | 'stale';

export interface CapacityLimit {
  readonly state: CapacityState;
  readonly monthPeakKw: number | null;
  readonly monthPeakAtMs: number | null;
  /** The larger of the month's peak so far, the target and the billing floor (kW). */
  readonly capKw: number;
  /** What the plan keeps the quarter-hour under: the cap less the margin, plus a raise the plan chose for a departure (kW). */
  readonly limitKw: number;
  readonly raiseKw: number;
  readonly quarterStartMs: number;
  readonly quarterHourAverageKw: number | null;
  readonly energyDrawnKwh: number | null;
  readonly otherLoadKw: number | null;
  readonly allowance: QuarterHourAllowance | null;
  /** The charging power allowed now (kW). */
  readonly allowedKw: number;
  /** The same as a current per phase (A), at the most phases the planned connectors use. */
  readonly headroomA: number;
  readonly note: string | null;
}

export interface CapacityInput {
  readonly nowMs: number;
  readonly demand: SiteDemandReading | null;
  /** The site meter's total power now (W; negative: fed in), and when it was read; null: no reading. */
  readonly sitePower: { readonly w: number; readonly sampledAtMs: number } | null;
  /** What the planned connectors draw now together (W), when measured; null: unknown (nothing taken off). */
  readonly plannedChargingW: number | null;
  readonly phases: number;
  readonly voltageV: number;
  readonly settings: CapacitySettings;
  /** A raise of the cap the plan chose to meet a departure (kW, ≥ 0). */
  readonly raiseKw?: number;
}

export function capacityLimit(input: CapacityInput): CapacityLimit {
  const { nowMs, settings } = input;
  const quarterStartMs = quarterHourStartMs(nowMs);
  const raiseKw = Math.max(0, input.raiseKw ?? 0);
  const fresh = (atMs: number) => Math.abs(nowMs - atMs) <= settings.maxReadingAgeMs;
  const demand = input.demand && fresh(input.demand.sampledAtMs) ? input.demand : null;
  const cap = capKw(demand?.monthPeakKw ?? null, { targetKw: settings.targetKw, marginKw: settings.marginKw, floorKw: FLUVIUS_BILLING_FLOOR_KW });
  const limitKw = Math.max(0, cap - settings.marginKw) + raiseKw;
  const base = { monthPeakKw: demand?.monthPeakKw ?? null, monthPeakAtMs: demand?.monthPeakAtMs ?? null, capKw: cap, limitKw, raiseKw, quarterStartMs, quarterHourAverageKw: demand?.quarterHourAverageKw ?? null };
  const power = input.sitePower && fresh(input.sitePower.sampledAtMs) ? input.sitePower : null;
  if (!power) {
    return { ...base, state: 'stale', energyDrawnKwh: null, otherLoadKw: null, allowance: null, allowedKw: 0, headroomA: 0, note: 'no recent reading from the site meter: the quarter-hour\'s demand is unknown, so charging is held under site.capacity until it is heard again' };
  }
  // Never below what the meter itself shows (0 while importing): a charger's reported draw that lags a
  // lowering would otherwise make the rest of the site look like it feeds in, and charging be raised into it.
  const otherLoadKw = Math.max(Math.min(0, power.w), power.w - Math.max(0, input.plannedChargingW ?? 0)) / 1000;
  const sitePowerKw = power.w / 1000;
  const averageKw = demand?.quarterHourAverageKw ?? null;
  // Without the meter's running average the quarter-hour so far counts as at the limit: no catching up.
  const drawn = averageKw === null ? (limitKw * (nowMs - quarterStartMs)) / 3_600_000 : energyDrawnKwh({ nowMs, readingAtMs: demand!.sampledAtMs, averageKw, sitePowerKw });
  const allowance = quarterHourAllowance({ nowMs, quarterStartMs, energyDrawnKwh: drawn, otherLoadKw, capKw: limitKw });
  const missing = demand === null ? 'the site meter sends no quarter-hour demand or month\'s peak (1-0:1.4.0, 1-0:1.6.0; is the P1 port opened for them in Mijn Fluvius?)' : demand.monthPeakKw === null ? 'the site meter sends no month\'s peak (1-0:1.6.0)' : null;
  return {
    ...base,
    state: demand === null ? 'no-demand' : 'measured',
    energyDrawnKwh: round4(drawn),
    otherLoadKw: round3(otherLoadKw),
    allowance,
    allowedKw: allowance.allowedKw,
    headroomA: Math.floor(kwToCurrentPerPhaseA(allowance.allowedKw, input.phases, input.voltageV) * 100 + 1e-9) / 100,
    note: missing === null ? null : `${missing}: the cap is ${cap} kW (target or the 2.5 kW floor) and the quarter-hour so far counts as at it`,
  };
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;
const round4 = (v: number) => Math.round(v * 10000) / 10000;
