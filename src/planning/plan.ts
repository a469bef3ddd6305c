// The cheapest charging schedule: which periods to charge in, and at what current, to put
// the energy needed into the car by its departure. Pure: plain values in, a plan out.
//
// The rule. Each priced period, cut to [now, departure), can take at most the energy the
// allowed current gives over its length. Within a period the price is one number, so the
// cost is linear in the energy put in it, and any energy from 0 to that most is possible
// (a lower current over the whole period, or the minimum current for part of it). That
// makes the problem a fractional knapsack: filling the periods cheapest first (ties: the
// earlier period first) is optimal, negative prices included — a period that pays for
// charging is filled at the allowed current, but never past the energy needed. When the
// periods cannot take the energy needed, every one that can is filled and the plan says how
// much is missing and why. Time is UTC instants throughout, so DST days need nothing
// special, and 15- and 60-minute periods mix freely.
//
// Planning uses the expected price (published, else the forecast); the same schedule is
// priced at the forecast bounds for the range, and "charging immediately" (the same energy
// as fast as allowed from now, in time order) is priced the same way to compare.
import { allowedCurrentA, powerAtW, type ChargerLimits, type SiteLimit } from './limits.js';

export interface PlanPeriod {
  readonly startMs: number;
  readonly durationS: number;
  /** The published price, or the forecast's expected price, per MWh. */
  readonly pricePerMwh: number;
  /** Forecast bounds per MWh; both equal pricePerMwh for a published price. */
  readonly lowerPerMwh: number;
  readonly upperPerMwh: number;
  /** True when the price is a forecast, not yet published. */
  readonly forecast: boolean;
}

export interface PlanRequest {
  readonly nowMs: number;
  readonly departureMs: number;
  readonly energyWh: number;
  readonly charger: ChargerLimits;
  readonly site?: SiteLimit;
  /** Priced periods, any order, not overlapping; time without a period is never planned. */
  readonly periods: readonly PlanPeriod[];
}

export interface PlannedSlot {
  readonly startMs: number;
  readonly endMs: number;
  readonly currentA: number;
  readonly powerW: number;
  readonly energyWh: number;
  readonly pricePerMwh: number;
  readonly lowerPerMwh: number;
  readonly upperPerMwh: number;
  readonly forecast: boolean;
}

/** A cost in the prices' currency: at the expected prices and at the forecast bounds. */
export interface CostRange {
  readonly expected: number;
  readonly lower: number;
  readonly upper: number;
}

export type ShortfallReason =
  /** The charger's and the site's limits leave less than the charger's minimum current. */
  | 'no-current-available'
  /** Departure is not after now. */
  | 'departure-passed'
  /** Prices (published and forecast) end before departure, and the time they cover is too short. */
  | 'prices-end-before-departure'
  /** Even charging at the allowed current in every priced period until departure is not enough. */
  | 'not-enough-time';

export interface Schedule {
  /** Charging slots in time order (periods not charged in are left out). */
  readonly slots: readonly PlannedSlot[];
  readonly energyWh: number;
  readonly cost: CostRange;
  /** End of the last slot; null when nothing is charged. */
  readonly finishesAtMs: number | null;
}

export interface Plan {
  /** The limits planned with (a profile's phases, and its limits in W, come from them). */
  readonly charger: ChargerLimits;
  readonly energyNeededWh: number;
  readonly allowedCurrentA: number;
  readonly allowedPowerW: number;
  /** The cheapest schedule. */
  readonly planned: Schedule;
  /** Charging the same energy as fast as allowed from now. */
  readonly immediate: Schedule;
  readonly meetsTarget: boolean;
  readonly shortfallWh: number;
  readonly shortfallReason: ShortfallReason | null;
}

interface Window {
  readonly period: PlanPeriod;
  readonly startMs: number;
  readonly endMs: number;
  readonly capacityWh: number;
}

/** Energy below this is rounding noise (a millionth of a Wh). */
const EPSILON_WH = 1e-6;
const HOUR_MS = 3_600_000;

export function planCharging(request: PlanRequest): Plan {
  checkRequest(request);
  const { charger, nowMs, departureMs } = request;
  const energyNeededWh = Math.max(0, request.energyWh);
  const currentA = allowedCurrentA(charger, request.site);
  const powerW = powerAtW(charger, currentA);
  const byTime = [...request.periods].sort((a, b) => a.startMs - b.startMs);
  for (let i = 1; i < byTime.length; i++) {
    const prev = byTime[i - 1];
    if (prev.startMs + prev.durationS * 1000 > byTime[i].startMs) {
      throw new RangeError(`periods overlap: ${new Date(prev.startMs).toISOString()} and ${new Date(byTime[i].startMs).toISOString()}`);
    }
  }
  const windows: Window[] = [];
  if (powerW > 0) {
    for (const period of byTime) {
      const startMs = Math.max(period.startMs, nowMs);
      const endMs = Math.min(period.startMs + period.durationS * 1000, departureMs);
      if (endMs > startMs) windows.push({ period, startMs, endMs, capacityWh: (powerW * (endMs - startMs)) / HOUR_MS });
    }
  }
  // Cheapest first; sort is stable and the windows are in time order, so equal prices keep the earlier first.
  const cheapestFirst = [...windows].sort((a, b) => a.period.pricePerMwh - b.period.pricePerMwh);
  const planned = fill(cheapestFirst, energyNeededWh, charger, currentA, 'spread');
  const immediate = fill(windows, energyNeededWh, charger, currentA, 'full-current');
  const shortfallWh = Math.max(0, energyNeededWh - planned.energyWh);
  const meetsTarget = shortfallWh <= EPSILON_WH;
  return {
    charger,
    energyNeededWh,
    allowedCurrentA: currentA,
    allowedPowerW: powerW,
    planned,
    immediate,
    meetsTarget,
    shortfallWh: meetsTarget ? 0 : shortfallWh,
    shortfallReason: meetsTarget ? null : shortfallReason(request, powerW, byTime),
  };
}

/** Puts up to energyWh into the windows in the order given; returns the slots in time order. */
function fill(order: readonly Window[], energyWh: number, charger: ChargerLimits, currentA: number, partial: PartialSlot): Schedule {
  let remainingWh = energyWh;
  const slots: PlannedSlot[] = [];
  for (const w of order) {
    if (remainingWh <= EPSILON_WH) break;
    const slotWh = Math.min(w.capacityWh, remainingWh);
    remainingWh -= slotWh;
    slots.push(slotIn(w, slotWh, charger, currentA, partial));
  }
  slots.sort((a, b) => a.startMs - b.startMs);
  let expected = 0;
  let lower = 0;
  let upper = 0;
  let charged = 0;
  for (const s of slots) {
    const mwh = s.energyWh / 1e6;
    expected += mwh * s.pricePerMwh;
    lower += mwh * s.lowerPerMwh;
    upper += mwh * s.upperPerMwh;
    charged += s.energyWh;
  }
  return { slots, energyWh: charged, cost: { expected, lower, upper }, finishesAtMs: slots.length ? slots[slots.length - 1].endMs : null };
}

/**
 * How a window that is only partly needed is charged. 'spread': the whole window at a
 * lower current (gentler on the battery and the site) when that current is at least the
 * charger's minimum, else the minimum current from the window's start for as long as
 * needed. 'full-current': the allowed current from the window's start for as long as
 * needed (charging immediately, done as early as possible). The cost is the same.
 */
type PartialSlot = 'spread' | 'full-current';

function slotIn(w: Window, slotWh: number, charger: ChargerLimits, allowedA: number, partial: PartialSlot): PlannedSlot {
  const p = w.period;
  const prices = { pricePerMwh: p.pricePerMwh, lowerPerMwh: p.lowerPerMwh, upperPerMwh: p.upperPerMwh, forecast: p.forecast };
  const averageA = slotWh >= w.capacityWh ? allowedA : (allowedA * slotWh) / w.capacityWh;
  if (averageA === allowedA || (partial === 'spread' && averageA >= charger.minCurrentA)) {
    return { startMs: w.startMs, endMs: w.endMs, currentA: averageA, powerW: powerAtW(charger, averageA), energyWh: slotWh, ...prices };
  }
  const currentA = partial === 'spread' ? charger.minCurrentA : allowedA;
  const powerW = powerAtW(charger, currentA);
  const endMs = Math.min(w.endMs, w.startMs + (slotWh / powerW) * HOUR_MS);
  return { startMs: w.startMs, endMs, currentA, powerW, energyWh: slotWh, ...prices };
}

function shortfallReason(request: PlanRequest, powerW: number, byTime: readonly PlanPeriod[]): ShortfallReason {
  if (request.departureMs <= request.nowMs) return 'departure-passed';
  if (powerW <= 0) return 'no-current-available';
  const last = byTime[byTime.length - 1];
  const pricedUntilMs = last ? last.startMs + last.durationS * 1000 : -Infinity;
  return pricedUntilMs < request.departureMs ? 'prices-end-before-departure' : 'not-enough-time';
}

function checkRequest(r: PlanRequest): void {
  const finite: Array<[string, number]> = [
    ['nowMs', r.nowMs],
    ['departureMs', r.departureMs],
    ['energyWh', r.energyWh],
    ['charger.maxCurrentA', r.charger.maxCurrentA],
    ['charger.minCurrentA', r.charger.minCurrentA],
    ['charger.phases', r.charger.phases],
    ['charger.voltageV', r.charger.voltageV],
  ];
  if (r.site) finite.push(['site.limitA', r.site.limitA], ['site.otherLoadA', r.site.otherLoadA ?? 0]);
  for (const [name, v] of finite) if (!Number.isFinite(v)) throw new RangeError(`${name} must be a finite number, got ${v}`);
  if (r.charger.minCurrentA < 0 || r.charger.phases <= 0 || r.charger.voltageV <= 0) throw new RangeError('charger limits must be positive');
  for (const p of r.periods) {
    if (!(p.durationS > 0) || ![p.startMs, p.pricePerMwh, p.lowerPerMwh, p.upperPerMwh].every(Number.isFinite)) {
      throw new RangeError(`period at ${p.startMs} has no finite start, positive duration and prices`);
    }
  }
}
