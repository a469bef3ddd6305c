// The site shared between two connectors charging at once, as TargetPlanner reads it from a
// real SQLite file (planning/target-plan.ts, docs/planning.md "Several chargers on one
// site"): with a site meter that measures the chargers too, both connectors' own draws
// (their Current.Import, stored as MeterValues store them) are taken off the meter's reading,
// and the headroom is shared equally, up to what each car was seen to draw. Real NL prices
// of 2025-05-11.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configuredCeilings } from '../../src/planning/ceilings.js';
import type { SiteContext } from '../../src/planning/site-context.js';
import type { SiteMeterReading } from '../../src/planning/site-load.js';
import { TargetPlanner } from '../../src/planning/target-plan.js';
import { FollowStateStore } from '../../src/store/charging-follow-state.js';
import { ChargingTargetStore, type ChargingTarget } from '../../src/store/charging-targets.js';
import { openChargingStores } from '../../src/planning/charging-stores.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { chargingTarget } from '../helpers/charging-target.js';

const NOW = Date.parse('2025-05-11T06:20:00Z');
const target = (chargePointId: string, departure: string): ChargingTarget => chargingTarget(chargePointId, departure, NOW);

describe.skipIf(!hasSharedData)(`TargetPlanner shares the site between connectors charging at once${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let db: Db;
  let reading: SiteMeterReading;
  const transactions: Record<string, number> = {};
  const connector = { connector_id: 1, max_current_a: 16, min_current_a: 6, phases: 3 as const, voltage_v: 230 };
  const site = (): SiteContext => ({
    limitA: 25,
    ceilings: configuredCeilings({ site: { limit_a: 25 }, chargers: ['CP-A', 'CP-B', 'CP-C'].map((id) => ({ id, connectors: [connector] })) }),
    meter: { resourceId: 'grid', settings: { maxReadingAgeMs: 60_000, includesChargers: true, voltageV: 230 }, reading: () => reading },
  });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-site-share-'));
    db = openDatabase(join(dir, 'metergate.db'));
    expect(loadNl2025Prices(db)).toBeGreaterThan(10_000);
    const ocpp = new ChargerSessions(db, { marketArea: 'NL' });
    const targets = new ChargingTargetStore(db);
    // A three-phase car drawing 10 A and a one-phase car drawing 6 A on L1; a third target without a car plugged in.
    const draws: Record<string, [number, number, number]> = { 'CP-A': [10, 10, 10], 'CP-B': [6, 0, 0] };
    for (const [id, departure] of [['CP-A', '2025-05-11T16:00:00Z'], ['CP-B', '2025-05-11T18:00:00Z'], ['CP-C', '2025-05-11T17:00:00Z']] as const) {
      targets.put(target(id, departure));
      if (id === 'CP-C') continue;
      const { transaction } = ocpp.startTransaction({ chargePointId: id, connectorId: 1, idTag: 'T', meterStartWh: 0, startedAtMs: NOW - 30 * 60_000, reservationId: null, idTagStatus: 'Accepted' }, NOW - 30 * 60_000);
      transactions[id] = transaction.transactionId;
      ocpp.addMeterValues(id, 1, transaction.transactionId, draws[id]!.map((a, i) => ({ sampledAtMs: NOW - 5_000, measurand: 'Current.Import', phase: `L${i + 1}`, location: 'Outlet', context: 'Sample.Periodic', value: a, unit: 'A' })), NOW - 5_000);
    }
    // The grid meter sees the chargers and 6 A of other load on each phase.
    reading = { resourceId: 'grid', sampledAtMs: NOW - 2_000, currentsA: [22, 16, 16], powerW: null };
  });

  afterAll(() => {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('both draws are taken off the meter, and the headroom is shared equally between the two with a car plugged in', () => {
    const planner = new TargetPlanner(openChargingStores(db), false, site());
    const a = planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW);
    expect(a.site?.meter).toMatchObject({ state: 'measured', ownDrawA: [16, 10, 10], otherLoadA: 6 });
    expect(a.site?.share).toEqual({ connectors: 2, headroomA: 19, shareA: 9.5 });
    expect(a.allowedCurrentA).toBe(9.5);
    const b = planner.plan(target('CP-B', '2025-05-11T18:00:00Z'), NOW);
    expect(b.site?.share).toEqual({ connectors: 2, headroomA: 19, shareA: 9.5 });
    // The connector without a car, when its own plan is made (a PUT before plug-in), counts itself as a third:
    // minimums by departure (6 A each), the last 1 A in thirds.
    const c = planner.plan(target('CP-C', '2025-05-11T17:00:00Z'), NOW);
    expect(c.site?.share).toEqual({ connectors: 3, headroomA: 19, shareA: 6.33 });
    expect(a.allowedCurrentA + b.allowedCurrentA + a.site!.otherLoadA!).toBeLessThanOrEqual(25);
  });

  it('a car seen to draw at most 7 A leaves the rest to the other', () => {
    new FollowStateStore(db).setObserved('CP-B', 1, { transactionId: transactions['CP-B']!, maxCurrentA: 7, phases: 1, atMs: NOW - 60_000 });
    const planner = new TargetPlanner(openChargingStores(db), false, site());
    const a = planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW);
    expect(a.site?.share.shareA).toBe(12);
    const b = planner.plan(target('CP-B', '2025-05-11T18:00:00Z'), NOW);
    expect(b.observed).toMatchObject({ maxCurrentA: 7, phases: 1 });
    expect(b.allowedCurrentA).toBe(7);
    expect(b.allowedPowerW).toBe(7 * 230);
  });
});
