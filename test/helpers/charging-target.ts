// A stored charging target as the planner tests set one: connector 1 of a 16 A, 6 A minimum,
// three-phase 230 V charger in NL, 30 kWh, set a minute before `nowMs`, nothing of the site
// given by the client. Each test names what differs.
import type { ChargingTarget } from '../../src/store/charging-targets.js';

export function chargingTarget(chargePointId: string, departure: string, nowMs: number, differs: Partial<ChargingTarget> = {}): ChargingTarget {
  return {
    chargePointId,
    connectorId: 1,
    marketArea: 'NL',
    departureMs: Date.parse(departure),
    energyWh: 30_000,
    maxCurrentA: 16,
    minCurrentA: 6,
    phases: 3,
    voltageV: 230,
    siteLimitA: null,
    siteOtherLoadA: null,
    updatedAtMs: nowMs - 60_000,
    ...differs,
  };
}
