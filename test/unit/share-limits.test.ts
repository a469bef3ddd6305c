// A connector's share under the site's headroom and the §14a dimmed total at once
// (planning/share-limits.ts, which the planner's siteOf and fuse-cycle.ts share), worked by hand.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { minimumPowerW, dimmedChargerCurrentA } from '../../src/planning/dimmed-limit.js';
import { limitedShare, limitedShares, siteHeadroomA, type ShareLimits } from '../../src/planning/share-limits.js';
import type { CountedConnector } from '../../src/planning/site-share.js';

const H = 3_600_000;
const c = (key: string, departureH: number, countedA: number | null = null): CountedConnector => ({ key, maxCurrentA: 16, minCurrentA: 6, departureMs: departureH * H, countedA });

describe('limitedShare', () => {
  // Three wallboxes: P_min,14a 10.5 kW, at 230 V on 3 phases 15.21 A for the three together.
  const dimmedA = dimmedChargerCurrentA(minimumPowerW(3, []), 0, 230, 3);
  const three = [c('a', 1), c('b', 2), c('c', 3)];

  it('dimmed: the lower of the site share and the dimmed one; the dimmed total is not reduced by the other load', () => {
    expect(dimmedA).toBe(15.21);
    // Site: 50 A less 10 A of other load, 13.33 A each. Dimmed: two minimums fit (12 A), the third waits, 3.21 A more shared by the two.
    const headroomA = siteHeadroomA(50, 10);
    expect(headroomA).toBe(40);
    const share = (key: string) => limitedShare({ siteHeadroomA: headroomA, dimmedA }, three, key);
    expect(share('a')).toEqual({ siteShareA: expect.closeTo(40 / 3, 9), dimmedShareA: 7.6, shareA: 7.6 });
    expect(share('c')).toEqual({ siteShareA: expect.closeTo(40 / 3, 9), dimmedShareA: 0, shareA: 0 });
    // Not dimmed: the site's share, rounded down.
    expect(limitedShare({ siteHeadroomA: headroomA, dimmedA: null }, three, 'a')).toEqual({ siteShareA: expect.closeTo(40 / 3, 9), dimmedShareA: null, shareA: 13.33 });
    // The site is the lower: 7 A of headroom, only the earliest departure's minimum fits, and the rest goes to it (7 A < 7.6 A).
    expect(limitedShare({ siteHeadroomA: siteHeadroomA(50, 43), dimmedA }, three, 'a').shareA).toBe(7);
  });

  it('a connector counted at its maximum takes it off the dimmed total too; without a site limit the dimmed total is the only one', () => {
    // b is unknown (16 A counted): 15.21 − 16 leaves nothing for a.
    expect(limitedShare({ siteHeadroomA: 100, dimmedA }, [c('a', 1), c('b', 2, 16)], 'a').shareA).toBe(0);
    expect(limitedShare({ siteHeadroomA: null, dimmedA }, three, 'b')).toEqual({ siteShareA: null, dimmedShareA: 7.6, shareA: 7.6 });
  });

  it('a feed-in (negative other load) gives no more than the limit', () => {
    expect(siteHeadroomA(25, -5)).toBe(25);
    expect(siteHeadroomA(25, 30)).toBe(0);
  });
});

describe('limitedShares', () => {
  it('gives every connector exactly what limitedShare gives it (the fuse cycle and the planner agree to the last bit)', () => {
    const connector = fc.record({
      maxCurrentA: fc.constantFrom(0, 6, 10, 16, 32),
      minCurrentA: fc.constantFrom(0, 6, 8),
      departureH: fc.integer({ min: 1, max: 4 }),
      countedA: fc.option(fc.double({ min: -2, max: 40, noNaN: true }), { freq: 3 }),
    });
    const limits: fc.Arbitrary<ShareLimits> = fc.oneof(
      fc.record({ siteHeadroomA: fc.double({ min: -5, max: 120, noNaN: true }), dimmedA: fc.option(fc.double({ min: -5, max: 40, noNaN: true })) }),
      fc.record({ siteHeadroomA: fc.constant(null), dimmedA: fc.double({ min: -5, max: 40, noNaN: true }) }),
    );
    fc.assert(
      fc.property(limits, fc.array(connector, { minLength: 1, maxLength: 10 }), (l, cs) => {
        const connectors: CountedConnector[] = cs.map((c, i) => ({ key: `c${i}`, maxCurrentA: c.maxCurrentA, minCurrentA: c.minCurrentA, departureMs: c.departureH * H, countedA: c.countedA }));
        const all = limitedShares(l, connectors);
        for (const c of connectors) expect(all.get(c.key)).toEqual(limitedShare(l, connectors, c.key));
      }),
      { numRuns: 500 },
    );
  });
});
