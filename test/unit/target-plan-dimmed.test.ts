// The grid operator's dimming (§14a) in the planner's site share (planning/target-plan.ts
// siteOf, docs/planning.md "Dimmed by the grid operator"), as TargetPlanner reads it from a real
// SQLite file: the dimmed power less the other devices' fixed loads, as current per phase,
// shared by the same rule (a car without a target counted at its maximum, a connector the fuse
// controller does not know counted at its maximum in the others' shares); with a site limit
// the lower share wins; ended, the fuse's share again. Real NL prices of 2025-05-11.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configuredCeilings } from '../../src/planning/ceilings.js';
import { openChargingStores } from '../../src/planning/charging-stores.js';
import type { SiteContext } from '../../src/planning/site-context.js';
import { TargetPlanner } from '../../src/planning/target-plan.js';
import type { ChargingTarget } from '../../src/store/charging-targets.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { chargingTarget, seedTwoPlannedAndAFreeCar } from '../helpers/charging-target.js';

const NOW = Date.parse('2025-05-11T06:20:00Z');
const target = (chargePointId: string, departure: string): ChargingTarget => chargingTarget(chargePointId, departure, NOW);

describe.skipIf(!hasSharedData)(`the dimmed limit shared in the planner's site share${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let db: Db;
  const connector = { connector_id: 1, max_current_a: 16, min_current_a: 6, phases: 3 as const, voltage_v: 230 };
  const LIMIT_A = 40;
  const site = (limitA: number | undefined): SiteContext => ({
    limitA: limitA ?? null,
    ceilings: configuredCeilings({ site: limitA === undefined ? {} : { limit_a: limitA }, chargers: ['CP-A', 'CP-B', 'CP-FREE'].map((id) => ({ id, connectors: [connector] })) }),
    meter: null,
  });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-dimmed-share-'));
    db = openDatabase(join(dir, 'metergate.db'));
    expect(loadNl2025Prices(db)).toBeGreaterThan(10_000);
    // CP-A and CP-B are planned; CP-FREE charges with no target, drawing 8 A a phase.
    seedTwoPlannedAndAFreeCar(db, NOW);
  });

  afterAll(() => {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // 27.6 kW at 3 x 230 V is 40 A per phase; a heat pump's fixed 6.9 kW is 10 A of it.
  const DIMMED = { limitW: 27_600, fixedLoadsW: 6_900 };

  it('while dimmed the chargers together get the dimmed power less the fixed loads, the car without a target at its maximum, shared by the same rule', () => {
    const planner = new TargetPlanner(openChargingStores(db), false, site(undefined));
    expect(planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW).site).toBeNull();
    planner.useGridLimit({ dimmedAt: () => DIMMED });
    const a = planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW);
    const b = planner.plan(target('CP-B', '2025-05-11T18:00:00Z'), NOW);
    expect(a.site?.dimmed).toEqual({ limitW: 27_600, fixedLoadsW: 6_900, chargersA: 30, shareA: 7 });
    // 40 A - 10 A fixed - CP-FREE's 16 A = 14 A, equally: 7 A each (above the 6 A minimum).
    expect(a.site?.share.shareA).toBe(7);
    expect(b.site?.share.shareA).toBe(7);
    expect(16 + a.allowedCurrentA + b.allowedCurrentA).toBeLessThanOrEqual(30 + 1e-9);
  });

  it('with a site limit the share is the lower of the two; a connector the fuse controller does not know counts at its maximum in the others', () => {
    const planner = new TargetPlanner(openChargingStores(db), false, site(LIMIT_A));
    planner.useGridLimit({ dimmedAt: () => DIMMED });
    // The fuse alone: (40 - 16) / 2 = 12 A; dimmed: 7 A.
    expect(planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW).site?.share.shareA).toBe(7);
    planner.useCounting({ countedA: (cp) => (cp === 'CP-B' ? 16 : null) });
    // 30 - 16 (CP-FREE) - 16 (CP-B, unknown) < 6 A: CP-A waits.
    expect(planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW).site?.share.shareA).toBe(0);
    // Ended: the fuse's share again, nothing dimmed.
    planner.useGridLimit({ dimmedAt: () => null });
    const after = planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW);
    expect(after.site?.dimmed).toBeNull();
    expect(after.site?.share.shareA).toBe(LIMIT_A - 16 - 16);
  });
});
