// Every car drawing is counted in the site's share (docs/planning.md "The fuse controller";
// issue 30 items 2 and 5), as TargetPlanner reads it from a real SQLite file: a car charging
// with no target in force counts at the larger of its connector's max_current_a and its
// measured current (with a site meter that measures the chargers, only the part the meter
// does not already show), and a connector the fuse controller does not know the limit of
// counts at its maximum in every other connector's share. Real NL prices of 2025-05-11.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configuredCeilings } from '../../src/planning/ceilings.js';
import { openChargingStores } from '../../src/planning/charging-stores.js';
import type { SiteContext } from '../../src/planning/site-context.js';
import type { SiteMeterReading } from '../../src/planning/site-load.js';
import { TargetPlanner } from '../../src/planning/target-plan.js';
import type { ChargingTarget } from '../../src/store/charging-targets.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { chargingTarget, seedTwoPlannedAndAFreeCar } from '../helpers/charging-target.js';

const NOW = Date.parse('2025-05-11T06:20:00Z');
const target = (chargePointId: string, departure: string): ChargingTarget => chargingTarget(chargePointId, departure, NOW);

describe.skipIf(!hasSharedData)(`every car drawing counts in the site's share${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let db: Db;
  const connector = { connector_id: 1, max_current_a: 16, min_current_a: 6, phases: 3 as const, voltage_v: 230 };
  const LIMIT_A = 40;
  const site = (meter: 'none' | 'excludes-chargers' | 'includes-chargers', reading: SiteMeterReading | null): SiteContext => ({
    limitA: LIMIT_A,
    ceilings: configuredCeilings({ site: { limit_a: LIMIT_A }, chargers: ['CP-A', 'CP-B', 'CP-FREE'].map((id) => ({ id, connectors: [connector] })) }),
    meter: meter === 'none' ? null : { resourceId: 'grid', settings: { maxReadingAgeMs: 60_000, includesChargers: meter === 'includes-chargers', voltageV: 230 }, reading: () => reading },
  });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-fuse-counting-'));
    db = openDatabase(join(dir, 'metergate.db'));
    expect(loadNl2025Prices(db)).toBeGreaterThan(10_000);
    // CP-A and CP-B are planned; CP-FREE charges with no target, drawing 8 A a phase.
    seedTwoPlannedAndAFreeCar(db, NOW);
  });

  afterAll(() => {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a car with no target counts at its maximum where no meter sees it: without a site meter, and with one that measures only the rest of the site', () => {
    for (const [meter, reading] of [
      ['none', null],
      // 6 A of other load; the chargers are wired after this meter.
      ['excludes-chargers', { resourceId: 'grid', sampledAtMs: NOW - 2_000, currentsA: [6, 6, 6], powerW: null }],
    ] as const) {
      const planner = new TargetPlanner(openChargingStores(db), false, site(meter, reading));
      const a = planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW);
      const otherA = meter === 'none' ? 0 : 6;
      // The two planned ones share the limit less the other load and CP-FREE's 16 A maximum (not its 8 A, nor nothing).
      expect(a.site?.share.shareA).toBeCloseTo((LIMIT_A - otherA - 16) / 2, 2);
      const b = planner.plan(target('CP-B', '2025-05-11T18:00:00Z'), NOW);
      expect(otherA + 16 + a.allowedCurrentA + b.allowedCurrentA).toBeLessThanOrEqual(LIMIT_A + 1e-9);
    }
  });

  it('with a site meter that measures the chargers, only the part of its maximum the meter does not already show is added', () => {
    // 6 A of other load and CP-FREE's 8 A (the planned ones draw nothing yet).
    const planner = new TargetPlanner(openChargingStores(db), false, site('includes-chargers', { resourceId: 'grid', sampledAtMs: NOW - 2_000, currentsA: [14, 14, 14], powerW: null }));
    const a = planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW);
    expect(a.site?.otherLoadA).toBe(14);
    expect(a.site?.share.shareA).toBeCloseTo((LIMIT_A - 14 - (16 - 8)) / 2, 2);
  });

  it('a connector whose limit the fuse controller does not know counts at its maximum in the others\' shares, never in its own', () => {
    const planner = new TargetPlanner(openChargingStores(db), false, site('none', null));
    // The fuse controller's answer for CP-B: unknown (e.g. its last SetChargingProfile unanswered), counted at 16 A.
    planner.useCounting({ countedA: (cp) => (cp === 'CP-B' ? 16 : null) });
    const a = planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW);
    // CP-FREE 16 A and CP-B 16 A taken off first: CP-A gets the 8 A left.
    expect(a.site?.share.shareA).toBeCloseTo(LIMIT_A - 16 - 16, 2);
    // CP-B's own share is what it should be asked for: shared as usual with CP-A.
    const b = planner.plan(target('CP-B', '2025-05-11T18:00:00Z'), NOW);
    expect(b.site?.share.shareA).toBeCloseTo((LIMIT_A - 16) / 2, 2);
  });

  it('under a fuse controller that controls cars without a target, such a car shares the site equally with the planned ones (docs/planning.md "Cars without a target")', () => {
    const planner = new TargetPlanner(openChargingStores(db), false, site('none', null));
    planner.useCounting({ countedA: () => null, controlsChargeNow: true });
    const free = planner.chargeNowTargets(NOW);
    expect(free.map((f) => f.target.chargePointId)).toEqual(['CP-FREE']);
    // 40 A three ways: 13.33 A each, CP-FREE included (not 16 A off the top, not first come first served).
    const a = planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW);
    expect(a.site?.share).toMatchObject({ connectors: 3 });
    expect(a.site?.share.shareA).toBeCloseTo(13.33, 2);
    const f = planner.plan(free[0]!.target, NOW);
    expect(f.site?.share.shareA).toBeCloseTo(13.33, 2);
    // Its charge-now plan: its share from now on, not a price plan.
    expect(f.planned.slots[0]).toMatchObject({ startMs: NOW, currentA: f.site!.share.shareA });
    // Counted at its maximum while its limit is unknown (as any controlled connector): the others absorb it.
    planner.useCounting({ countedA: (cp) => (cp === 'CP-FREE' ? 16 : null), controlsChargeNow: true });
    expect(planner.plan(target('CP-A', '2025-05-11T16:00:00Z'), NOW).site?.share.shareA).toBeCloseTo((LIMIT_A - 16) / 2, 2);
  });
});
