// A stored charging target as the planner tests set one: connector 1 of a 16 A, 6 A minimum,
// three-phase 230 V charger in NL, 30 kWh, set a minute before `nowMs`, nothing of the site
// given by the client. Each test names what differs.
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';
import { ChargingTargetStore, type ChargingTarget } from '../../src/store/charging-targets.js';
import type { Db } from '../../src/store/db.js';

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

/**
 * The planner tests' site of three cars charging on connector 1 since half an hour before
 * `nowMs`: CP-A (departs 16:00) and CP-B (18:00) on 2025-05-11 are planned; CP-FREE charges
 * with no target, drawing 8 A a phase (read 5 s before `nowMs`).
 */
export function seedTwoPlannedAndAFreeCar(db: Db, nowMs: number): void {
  const ocpp = new ChargerSessions(db, { marketArea: 'NL' });
  const targets = new ChargingTargetStore(db);
  targets.put(chargingTarget('CP-A', '2025-05-11T16:00:00Z', nowMs));
  targets.put(chargingTarget('CP-B', '2025-05-11T18:00:00Z', nowMs));
  for (const id of ['CP-A', 'CP-B', 'CP-FREE']) {
    const { transaction } = ocpp.startTransaction({ chargePointId: id, connectorId: 1, idTag: 'T', meterStartWh: 0, startedAtMs: nowMs - 30 * 60_000, reservationId: null, idTagStatus: 'Accepted' }, nowMs - 30 * 60_000);
    if (id === 'CP-FREE') ocpp.addMeterValues(id, 1, transaction.transactionId, [1, 2, 3].map((p) => ({ sampledAtMs: nowMs - 5_000, measurand: 'Current.Import', phase: `L${p}`, location: 'Outlet', context: 'Sample.Periodic', value: 8, unit: 'A' })), nowMs - 5_000);
  }
}
