// The capacity cap in the planner (planning/target-plan.ts with capacity-limit.ts, docs/planning.md
// "The capacity peak"), on a real SQLite file and real NL prices of 2025-05-11: the cap lowers
// the site's headroom below the fuse's, and a departure that cannot be met under it is planned
// with the least new peak that meets it, whose cost is part of the plan's (or only reported).
// Expected figures are worked out in the comments from the readings, not taken from the code.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';
import type { SiteDemandReading } from '../../src/planning/capacity-limit.js';
import { configuredCeilings } from '../../src/planning/ceilings.js';
import { openChargingStores } from '../../src/planning/charging-stores.js';
import type { SiteContext } from '../../src/planning/site-context.js';
import type { SiteMeterReading } from '../../src/planning/site-load.js';
import { TargetPlanner } from '../../src/planning/target-plan.js';
import { ChargingTargetStore, type ChargingTarget } from '../../src/store/charging-targets.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { chargingTarget } from '../helpers/charging-target.js';

// Five minutes into the quarter-hour 06:15-06:30.
const NOW = Date.parse('2025-05-11T06:20:00Z');
const EUR_PER_KW_MONTH = 3.37;
const target = (departure: string, energyWh: number): ChargingTarget => chargingTarget('CP-A', departure, NOW, { energyWh });

describe.skipIf(!hasSharedData)(`the planner keeps charging under the month's peak${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let db: Db;
  // The car draws 10 A on each phase (6.9 kW); the site meter shows 7.9 kW: 1 kW is the rest of the site.
  const reading: SiteMeterReading = { resourceId: 'grid', sampledAtMs: NOW - 2_000, currentsA: null, powerW: 7_900 };
  // The quarter-hour so far at 7.9 kW; the month's peak 9 kW.
  const demand: SiteDemandReading = { sampledAtMs: NOW - 2_000, quarterHourAverageKw: 7.9, monthPeakKw: 9, monthPeakAtMs: NOW - 86_400_000 };
  const site = (raisePeakForDeparture: boolean): SiteContext => ({
    limitA: 25,
    ceilings: configuredCeilings({ site: { limit_a: 25 }, chargers: [{ id: 'CP-A', connectors: [{ connector_id: 1, max_current_a: 16, min_current_a: 6, phases: 3 as const, voltage_v: 230 }] }] }),
    meter: { resourceId: 'grid', settings: { maxReadingAgeMs: 60_000, includesChargers: true, voltageV: 230 }, reading: () => reading },
    capacity: { settings: { eurPerKwMonth: EUR_PER_KW_MONTH, targetKw: null, marginKw: 0.2, raisePeakForDeparture, maxReadingAgeMs: 60_000 }, demand: () => demand },
  });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-capacity-plan-'));
    db = openDatabase(join(dir, 'metergate.db'));
    expect(loadNl2025Prices(db)).toBeGreaterThan(10_000);
    const ocpp = new ChargerSessions(db, { marketArea: 'NL' });
    const { transaction } = ocpp.startTransaction({ chargePointId: 'CP-A', connectorId: 1, idTag: 'T', meterStartWh: 0, startedAtMs: NOW - 30 * 60_000, reservationId: null, idTagStatus: 'Accepted' }, NOW - 30 * 60_000);
    ocpp.addMeterValues('CP-A', 1, transaction.transactionId, [1, 2, 3].map((p) => ({ sampledAtMs: NOW - 5_000, measurand: 'Current.Import', phase: `L${p}`, location: 'Outlet', context: 'Sample.Periodic', value: 10, unit: 'A' })), NOW - 5_000);
  });

  afterAll(() => {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the cap, not the fuse, sets the headroom: cap − other load as a current per phase', () => {
    const t = target('2025-05-11T16:00:00Z', 10_000);
    new ChargingTargetStore(db).put(t);
    const plan = new TargetPlanner(openChargingStores(db), false, site(true)).plan(t, NOW);
    // limit 9 − 0.2 = 8.8 kW; drawn 7.9 kW × 300 s = 0.6583 kWh; rest (2.2 − 0.6583 − 1 × 1/6) × 6 = 8.25 kW;
    // steady 8.8 − 1 = 7.8 kW; 7.8 kW / (3 × 230 V) = 11.30 A. The fuse: 7.9 kW / 690 V = 11.45 A less 10 A, 23.55 A left.
    expect(plan.capacity?.limit).toMatchObject({ state: 'measured', capKw: 9, limitKw: 8.8, otherLoadKw: 1, allowedKw: 7.8, headroomA: 11.3 });
    expect(plan.capacity?.limit.allowance?.restKw).toBeCloseTo(8.25, 2);
    expect(plan.capacity).toMatchObject({ binding: true, newPeak: null });
    expect(plan.site?.share).toEqual({ connectors: 1, headroomA: 11.3, shareA: 11.3 });
    expect(plan.allowedCurrentA).toBe(11.3);
    expect(plan.meetsTarget).toBe(true);
    expect(plan.capacity?.totalCostExpected).toBe(plan.planned.cost.expected);
  });

  it('a departure that needs 10 kW for the hour left raises the peak by the least that meets it, and its cost is in the plan', () => {
    // 10 kWh in the hour to 07:20 needs 10 kW, 10000 / 690 = 14.49 A; at most 16 A under the fuse.
    const t = target('2025-05-11T07:20:00Z', 10_000);
    new ChargingTargetStore(db).put(t);
    const under = new TargetPlanner(openChargingStores(db), false, site(false)).plan(t, NOW);
    expect(under.meetsTarget).toBe(false);
    expect(under.allowedCurrentA).toBe(11.3);
    expect(under.capacity?.newPeak).toMatchObject({ applied: false, meetsTarget: true });

    const raised = new TargetPlanner(openChargingStores(db), false, site(true)).plan(t, NOW);
    expect(raised.meetsTarget).toBe(true);
    const newPeak = raised.capacity!.newPeak!;
    // 14.5 A (the charger's limits to the hundredth) × 690 V = 10.005 kW: a raise of 2.205 kW over 7.8, to within the 0.05 kW search step.
    expect(newPeak.raiseKw).toBeGreaterThanOrEqual(2.2);
    expect(newPeak.raiseKw).toBeLessThanOrEqual(2.3);
    expect(newPeak).toMatchObject({ applied: true, meetsTarget: true });
    expect(newPeak.peakKw).toBeCloseTo(9 + newPeak.raiseKw, 6);
    expect(newPeak.cost).toBeCloseTo(newPeak.raiseKw * EUR_PER_KW_MONTH, 4);
    expect(raised.capacity!.totalCostExpected).toBeCloseTo(raised.planned.cost.expected + newPeak.cost, 6);
    expect(raised.allowedCurrentA).toBeGreaterThanOrEqual(10_000 / 690);
    expect(raised.allowedCurrentA).toBeLessThan(16);
    expect(under.capacity?.newPeak?.raiseKw).toBe(newPeak.raiseKw);
  });
});
