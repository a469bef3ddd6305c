// The fuse controller under a simulated fleet and a simulated clock (issue 30 item 6): random
// fleets of 1–10 chargers that lose, delay (0–120 s), duplicate and reorder answers, refuse,
// take only some means, disconnect, and a gateway that restarts, under an other load that
// steps (test/helpers/fuse-fleet.ts says what the chargers do and how both gateways are driven).
//
// AFTER (planning/fuse-cycle.ts, run every second and acting on each 'send') must hold:
// - always: no charger holds more than the gateway counts it at (its confirmed limit, its
//   maximum when unknown) or has in flight;
// - past the grace after anything outside the gateway changed (a load step, a disconnect, a
//   reconnect, a restart: one site-meter interval + the call timeout + lowerDeadlineMs) and
//   longer than the call timeout + lowerDeadlineMs after any connector's share fell, wherever
//   the site can be brought under its limit at all (the other load plus the maximum of every
//   connector the gateway cannot confirm, which it counts at its maximum, within the limit):
//   the chargers' real limits plus the other load within site.limit_a, and every connector
//   not counted at its maximum at or under its share;
// - a raise only from a confirmed limit, by the hysteresis, after the raise interval, never
//   above the share.
// BEFORE (a model of today's site follower and dispatcher) runs the same scenarios, to show
// the harness tells the two apart: its over-limit ampere-seconds are printed with AFTER's,
// counted past the grace and the escalation ladder where the chargers that cannot be
// controlled (by their traits, or disconnected now) fit under the limit with the other load
// (docs/planning.md "The fuse controller under simulation").
// About 7 s of CPU for the 1,000 scenarios (20 s wall on the shared 2-core machine under load).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { controllable, scenarioArbitrary, SIM_RULE, simulate, TAIL_S, type Scenario } from '../helpers/fuse-fleet.js';

// Locally each run explores new random cases (fast-check prints the seed of a failure to
// replay it); CI runs a fixed seed, so that a case found only today cannot fail a landing
// at random (METERGATE_FC_SEED replays any seed).
const SEED = process.env.METERGATE_FC_SEED !== undefined ? Number(process.env.METERGATE_FC_SEED) : process.env.CI ? 20261129 : undefined;
const SCENARIOS = 1000;
// Float noise of summed limits (A): a hundredth of a milliampere.
const NOISE_A = 1e-5;

interface Totals {
  scenarios: number;
  worstAs: number;
  totalAs: number;
  overScenarios: number;
  /** Over-limit A·s where the site can be brought under, the graces included. */
  bringableAs: number;
}
const totals = (): Totals => ({ scenarios: 0, worstAs: 0, totalAs: 0, overScenarios: 0, bringableAs: 0 });
const add = (t: Totals, r: { overBringableAs: number; overAfterGraceAs: number }) => {
  const after = r.overAfterGraceAs > NOISE_A ? r.overAfterGraceAs : 0;
  t.scenarios++;
  t.worstAs = Math.max(t.worstAs, after);
  t.totalAs += after;
  t.bringableAs += r.overBringableAs;
  if (after > 0) t.overScenarios++;
};
const fmt = (t: Totals) => `worst ${t.worstAs.toFixed(0)} A·s, total ${t.totalAs.toFixed(0)} A·s in ${t.overScenarios} scenarios (the graces included: total ${t.bringableAs.toFixed(0)} A·s)`;

describe('fuse controller under a simulated fleet and clock', () => {
  it('keeps the site within its limit after the deadline wherever it can be, where today\'s followers do not', { timeout: 600_000 }, () => {
    const before = totals();
    const after = totals();
    let checkedS = 0;
    let escalated = 0;
    let sends = 0;
    fc.assert(
      fc.property(scenarioArbitrary, (sc: Scenario) => {
        const a = simulate(sc, 'after');
        expect(a.violations).toEqual([]);
        add(after, a);
        add(before, simulate(sc, 'before'));
        checkedS += a.checkedS;
        escalated += a.escalated;
        sends += a.sends;
      }),
      { numRuns: SCENARIOS, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
    const per1000 = 1000 / after.scenarios;
    console.log(
      `fuse simulation, ${after.scenarios} scenarios${SEED !== undefined ? ` (seed ${SEED})` : ''}, over-limit ampere-seconds after the grace where the site can be brought under, per 1,000 scenarios: ` +
        `BEFORE (today's followers) ${fmt({ ...before, totalAs: before.totalAs * per1000, bringableAs: before.bringableAs * per1000 })}; ` +
        `AFTER (fuseCycle) ${fmt({ ...after, totalAs: after.totalAs * per1000, bringableAs: after.bringableAs * per1000 })}; ` +
        `AFTER's invariant checked over ${checkedS} simulated s, ${sends} calls sent, ${escalated} limits confirmed by an escalation means`,
    );
    // The harness tells the two apart: today's followers leave a site over its limit long after a load step.
    expect(before.worstAs).toBeGreaterThan(0);
    // Not vacuous: the invariant's precondition held for a good part of the time, and the ladder was used and worked.
    expect(checkedS).toBeGreaterThan(after.scenarios * 60);
    expect(escalated).toBeGreaterThan(0);
  });

  it('the case of the issue: a charger stops answering SetChargingProfile after a load step; AFTER retries it, BEFORE never does', () => {
    // site.limit_a 25, 9 A of other load rising to 19 A, one car holding 16 A: the charger loses
    // the answer to the first lowering (it does not apply it) and answers the next ones.
    const all = { profile: true, 'tx-default-profile': true, 'charge-point-max-profile': true, 'remote-stop': true, inoperative: true };
    const sc: Scenario = {
      limitA: 25,
      readingEveryS: 10,
      initialOtherA: 9,
      loadSteps: [{ atS: 5, otherA: 19 }],
      chargers: [{ maxA: 16, takes: all, otherwise: 'Rejected', inoperativeApplies: true, script: [{ delayS: 0, refuse: false, lost: true, appliedIfLost: false, duplicateAfterS: null }, { delayS: 0, refuse: false, lost: false, appliedIfLost: true, duplicateAfterS: null }] }],
      disconnects: [],
      restarts: [],
    };
    expect(controllable(sc.chargers[0]!)).toBe(true);
    const b = simulate(sc, 'before');
    const a = simulate(sc, 'after');
    expect(a.violations).toEqual([]);
    // BEFORE: 16 + 19 = 35 A on a 25 A fuse from the step (5 s) to the end of the scenario.
    expect(b.overAs).toBeGreaterThanOrEqual(10 * (5 + TAIL_S - 5));
    // AFTER: the lowering goes again after the call timeout and its back-off, well within the deadline (simulated seconds).
    expect(a.overAs).toBeLessThan(10 * (SIM_RULE.lowerDeadlineMs / 1000));
    expect(a.overAfterGraceAs).toBe(0);
  });
});
