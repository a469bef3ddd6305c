// A car charging with no target in force (docs/planning.md "Cars without a target"): the
// fuse controller controls its connector too, with a "charge now" plan instead of a price
// plan — the connector's maximum from now on, bounded by its fair share of the site (the
// same sharing as every planned connector, share-limits.ts), the §14a dimmed total and any
// external limit. Pure: the connector's configured limits and the clock in, the target the
// planner plans it as out (never stored).
import type { ChargingTarget } from '../store/charging-targets.js';
import type { ConnectorCeiling } from './ceilings.js';

/**
 * How far ahead a charge-now plan reaches (and the departure it shares the site's minimums
 * with: after every target departing sooner). The controller makes it again every cycle,
 * so the profile it sends never runs out while the car charges.
 */
export const CHARGE_NOW_HORIZON_MS = 24 * 3_600_000;

/** Energy asked of a charge-now plan: more than any connector can take within the horizon, so every period charges at the allowed current. */
const UNBOUNDED_ENERGY_WH = 1e12;

export interface ChargeNowTarget extends ChargingTarget {
  readonly chargeNow: true;
}

export const isChargeNow = (t: ChargingTarget): t is ChargeNowTarget => (t as Partial<ChargeNowTarget>).chargeNow === true;

/** The charge-now target of a configured connector with an open transaction and no target in force. */
export function chargeNowTarget(chargePointId: string, connectorId: number, ceiling: ConnectorCeiling, marketArea: string, nowMs: number): ChargeNowTarget {
  return {
    chargePointId,
    connectorId,
    marketArea,
    departureMs: nowMs + CHARGE_NOW_HORIZON_MS,
    energyWh: UNBOUNDED_ENERGY_WH,
    maxCurrentA: ceiling.maxCurrentA,
    minCurrentA: ceiling.minCurrentA,
    phases: ceiling.phases,
    voltageV: ceiling.voltageV,
    siteLimitA: null,
    siteOtherLoadA: null,
    updatedAtMs: nowMs,
    chargeNow: true,
  };
}

/** The one price period a charge-now plan is made over: from now to its horizon, priced 0 (it does not follow prices). */
export function chargeNowPeriod(target: ChargeNowTarget, nowMs: number): { startMs: number; durationS: number; pricePerMwh: number; lowerPerMwh: number; upperPerMwh: number; forecast: boolean } {
  return { startMs: nowMs, durationS: Math.max(1, Math.ceil((target.departureMs - nowMs) / 1000)), pricePerMwh: 0, lowerPerMwh: 0, upperPerMwh: 0, forecast: false };
}
