// Sharing the site's headroom between planned connectors (planning/site-share.ts) and the
// decision to lower or raise a running plan when the site's load changes
// (planning/site-guard.ts): pure.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { siteGuardDecision, siteGuardRuleFrom, siteResumeDecision } from '../../src/planning/site-guard.js';
import { shareSiteCurrent, type SharingConnector } from '../../src/planning/site-share.js';

const H = 3_600_000;
const c = (key: string, over: Partial<SharingConnector> = {}): SharingConnector => ({ key, maxCurrentA: 16, minCurrentA: 6, departureMs: 10 * H, ...over });
const shares = (headroomA: number, cs: SharingConnector[]) => Object.fromEntries(shareSiteCurrent(headroomA, cs));

describe('shareSiteCurrent', () => {
  it('one connector gets the headroom up to its maximum', () => {
    expect(shares(20.5, [c('a')])).toEqual({ a: 16 });
    expect(shares(9.25, [c('a')])).toEqual({ a: 9.25 });
  });

  it('two connectors share equally, never more than the headroom together', () => {
    expect(shares(20.5, [c('a'), c('b')])).toEqual({ a: 10.25, b: 10.25 });
    expect(shares(40, [c('a'), c('b')])).toEqual({ a: 16, b: 16 });
  });

  it('what one connector cannot take (its car draws 8 A) goes to the other', () => {
    expect(shares(20, [c('a', { maxCurrentA: 8 }), c('b')])).toEqual({ a: 8, b: 12 });
  });

  it('too little for both minimums: the earlier departure charges, the other waits at 0 A', () => {
    expect(shares(10, [c('late', { departureMs: 12 * H }), c('early', { departureMs: 8 * H })])).toEqual({ early: 10, late: 0 });
    expect(shares(12, [c('late', { departureMs: 12 * H }), c('early', { departureMs: 8 * H })])).toEqual({ early: 6, late: 6 });
    expect(shares(5, [c('a'), c('b')])).toEqual({ a: 0, b: 0 });
  });

  it('three connectors: minimums first, then equal shares up to each maximum', () => {
    const got = shares(30, [c('a', { maxCurrentA: 7 }), c('b'), c('c')]);
    expect(got).toEqual({ a: 7, b: 11.5, c: 11.5 });
    expect(got.a + got.b + got.c).toBeCloseTo(30, 9);
  });
});

describe('siteGuardDecision', () => {
  const rule = { raiseHysteresisA: 1, raiseIntervalMs: 300_000 };
  const NOW = 100 * H;

  it('a plan in force above the share is lowered at once, whatever the interval', () => {
    expect(siteGuardDecision({ inForceA: 10.2, shareA: 7.25, freshPlanA: 7.25, lastSiteChangeMs: NOW - 1000, nowMs: NOW }, rule)).toBe('lower');
  });

  it('rounding of the sent limit (0.1 A down) is no reason to lower', () => {
    expect(siteGuardDecision({ inForceA: 10.2, shareA: 10.25, freshPlanA: 10.25, lastSiteChangeMs: null, nowMs: NOW }, rule)).toBe('hold');
    expect(siteGuardDecision({ inForceA: 10.29, shareA: 10.25, freshPlanA: 10.25, lastSiteChangeMs: null, nowMs: NOW }, rule)).toBe('hold');
  });

  it('more room is used only after the interval and by at least the hysteresis', () => {
    const base = { inForceA: 6.75, shareA: 10.25, freshPlanA: 10.25, nowMs: NOW };
    expect(siteGuardDecision({ ...base, lastSiteChangeMs: NOW - 299_000 }, rule)).toBe('hold');
    expect(siteGuardDecision({ ...base, lastSiteChangeMs: NOW - 300_000 }, rule)).toBe('raise');
    expect(siteGuardDecision({ ...base, freshPlanA: 7.5, lastSiteChangeMs: null }, rule)).toBe('hold');
  });

  it('a plan that needs less than its share (a partly needed last period) is not raised', () => {
    expect(siteGuardDecision({ inForceA: 7, shareA: 16, freshPlanA: 7, lastSiteChangeMs: null, nowMs: NOW }, rule)).toBe('hold');
  });
});

describe('siteResumeDecision (a car stopped for the site, remote-start-stop)', () => {
  const rule = { raiseHysteresisA: 2, raiseIntervalMs: 300_000 };
  const NOW = 100 * H;
  const base = { configuredA: 16, shareA: 20, allowedA: 16, chargingNow: true, freeA: 40, lastSiteChangeMs: NOW - 300_000, nowMs: NOW };

  it('starts it again once the share holds its configured current plus the hysteresis, after the interval', () => {
    expect(siteResumeDecision(base, rule)).toBe(true);
    expect(siteResumeDecision({ ...base, shareA: 18 }, rule)).toBe(true);
    expect(siteResumeDecision({ ...base, lastSiteChangeMs: null }, rule)).toBe(true);
  });

  it('a share between the configured current and the hysteresis above it starts nothing: no stop and start on every reading', () => {
    expect(siteResumeDecision({ ...base, shareA: 17.9 }, rule)).toBe(false);
    expect(siteResumeDecision({ ...base, shareA: 16 }, rule)).toBe(false);
  });

  it('not within the interval, not where the plan holds the car at 0, not above a ceiling', () => {
    expect(siteResumeDecision({ ...base, lastSiteChangeMs: NOW - 299_000 }, rule)).toBe(false);
    expect(siteResumeDecision({ ...base, chargingNow: false }, rule)).toBe(false);
    // A site limit (or any ceiling) under the connector's current: the car would draw more than it allows.
    expect(siteResumeDecision({ ...base, allowedA: 13 }, rule)).toBe(false);
  });
});

describe('siteResumeDecision: held + restarted current stays within the limit', () => {
  const NOW = 100 * H;

  it('a share that fits is not enough: a car on a profile still holding 32 A of 40 A leaves 8 A, not 16 + 2', () => {
    const rule = { raiseHysteresisA: 2, raiseIntervalMs: 300_000 };
    const input = { configuredA: 16, shareA: 18, allowedA: 16, chargingNow: true, lastSiteChangeMs: null, nowMs: NOW };
    expect(siteResumeDecision({ ...input, freeA: 40 - 32 }, rule)).toBe(false);
    expect(siteResumeDecision({ ...input, freeA: 40 - 22 }, rule)).toBe(true);
  });

  it('stopped cars started one per check, each counting the caps of those started before: never above the limit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 6, max: 63 }),
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.integer({ min: 0, max: 32 }), { maxLength: 4 }),
        fc.array(fc.integer({ min: 6, max: 32 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 4 }),
        (limitA, otherLoadA, heldA, stoppedA, hysteresisA) => {
          const rule = { raiseHysteresisA: hysteresisA, raiseIntervalMs: 0 };
          const capsA = [...heldA];
          // Checks follow each other until none starts a car: each starts at most one, counted as drawing its current at the next.
          const waiting = [...stoppedA];
          for (let started = true; started; ) {
            started = false;
            for (let i = 0; i < waiting.length && !started; i++) {
              const freeA = limitA - otherLoadA - capsA.reduce((a, b) => a + b, 0);
              // The share as the planner may give it (even a generous one): the decision must not rest on it.
              if (siteResumeDecision({ configuredA: waiting[i]!, shareA: limitA, allowedA: waiting[i]!, chargingNow: true, freeA, lastSiteChangeMs: null, nowMs: NOW }, rule)) {
                capsA.push(waiting.splice(i, 1)[0]!);
                started = true;
              }
            }
          }
          const restartedA = capsA.slice(heldA.length).reduce((a, b) => a + b, 0);
          const heldTotalA = heldA.reduce((a, b) => a + b, 0);
          // Held load above the limit already (lowered by the profile guard) starts nobody; otherwise the total stays within it.
          if (restartedA > 0) expect(otherLoadA + heldTotalA + restartedA).toBeLessThanOrEqual(limitA);
        },
      ),
    );
  });
});

describe('siteGuardRuleFrom (the config\'s raise settings, at least their floor)', () => {
  it('takes an interval under 5 s and a hysteresis under 0.5 A at the floor and names them; keeps higher values', () => {
    expect(siteGuardRuleFrom({ raise_interval_s: 0, raise_hysteresis_a: 0 })).toEqual({
      rule: { raiseIntervalMs: 5000, raiseHysteresisA: 0.5 },
      raised: ['site.raise_interval_s 0 -> 5', 'site.raise_hysteresis_a 0 -> 0.5'],
    });
    expect(siteGuardRuleFrom({ raise_interval_s: 300, raise_hysteresis_a: 2 })).toEqual({ rule: { raiseIntervalMs: 300_000, raiseHysteresisA: 2 }, raised: [] });
    expect(siteGuardRuleFrom({ raise_interval_s: 5, raise_hysteresis_a: 0.5 }).raised).toEqual([]);
  });
});
