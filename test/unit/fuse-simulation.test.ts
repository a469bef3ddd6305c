// The fuse controller under a simulated fleet and a simulated clock (issue 30 item 6): random
// fleets of 1–10 chargers that lose, delay (0–120 s), duplicate and reorder answers, refuse,
// take only some means, disconnect, and a gateway that restarts, under an other load that
// steps and the grid operator's dimming (§14a, issue 34 item 5) that starts and ends at random
// moments (test/helpers/fuse-fleet.ts says what the chargers do and how both gateways are driven).
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
// - likewise while dimmed (the dimming's start is a fall of the shares), wherever the
//   connectors counted at their maximum fit in the dimmed total: the chargers' real limits
//   together within it (P_min,14a for the chargers and a heat pump, less its fixed load, per
//   phase: dimmed-limit.ts), each connector's share being the lower of the site's and the
//   dimmed one (share-limits.ts, as the planner);
// - a raise only from a confirmed limit, by the hysteresis, after the raise interval, never
//   above the share (also when a dimming ends).
// BEFORE (a model of today's site follower and dispatcher) runs the same scenarios, to show
// the harness tells the two apart: its over-limit ampere-seconds are printed with AFTER's,
// counted past the grace and the escalation ladder where the chargers that cannot be
// controlled (by their traits, or disconnected now) fit under the limit with the other load
// (docs/planning.md "The fuse controller under simulation").
// Each dimming is confirmed as grid-control.ts confirms an event (every connector settled with
// its limit in force within its share); the test prints how long that took.
// About 7 s of CPU for the 1,000 scenarios (20 s wall on the shared 2-core machine under load).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { controllable, dimmedTotalA, REACTION_DEADLINE_S, scenarioArbitrary, SIM_RULE, simulate, TAIL_S, type Scenario, type SimCharger } from '../helpers/fuse-fleet.js';

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
    // The same figures over the dimmed total, while dimmed.
    const beforeDimmed = totals();
    const afterDimmed = totals();
    const dimmedOf = (r: { overDimmedBringableAs: number; overDimmedAfterGraceAs: number }) => ({ overBringableAs: r.overDimmedBringableAs, overAfterGraceAs: r.overDimmedAfterGraceAs });
    let checkedS = 0;
    let escalated = 0;
    let sends = 0;
    let dimmedScenarios = 0;
    let dimmedS = 0;
    let dimmedCheckedS = 0;
    let raisesAfterDimming = 0;
    const confirmS: number[] = [];
    let neverConfirmed = 0;
    let leftUnconfirmed = 0;
    fc.assert(
      fc.property(scenarioArbitrary, (sc: Scenario) => {
        const a = simulate(sc, 'after');
        expect(a.violations).toEqual([]);
        const b = simulate(sc, 'before');
        add(after, a);
        add(before, b);
        checkedS += a.checkedS;
        escalated += a.escalated;
        sends += a.sends;
        if (a.dimmedS === 0) return;
        dimmedScenarios++;
        add(afterDimmed, dimmedOf(a));
        add(beforeDimmed, dimmedOf(b));
        dimmedS += a.dimmedS;
        dimmedCheckedS += a.dimmedCheckedS;
        raisesAfterDimming += a.raisesAfterDimming;
        for (const d of a.dimmings) {
          if (d.confirmS !== null) confirmS.push(d.confirmS);
          else {
            neverConfirmed++;
            if (d.leftUnconfirmed) leftUnconfirmed++;
          }
        }
      }),
      { numRuns: SCENARIOS, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
    const per1000 = 1000 / after.scenarios;
    const sorted = [...confirmS].sort((x, y) => x - y);
    const pct = (q: number) => (sorted.length === 0 ? '-' : String(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]));
    console.log(
      `fuse simulation, ${after.scenarios} scenarios${SEED !== undefined ? ` (seed ${SEED})` : ''}, over-limit ampere-seconds after the grace where the site can be brought under, per 1,000 scenarios: ` +
        `BEFORE (today's followers) ${fmt({ ...before, totalAs: before.totalAs * per1000, bringableAs: before.bringableAs * per1000 })}; ` +
        `AFTER (fuseCycle) ${fmt({ ...after, totalAs: after.totalAs * per1000, bringableAs: after.bringableAs * per1000 })}; ` +
        `AFTER's invariant checked over ${checkedS} simulated s, ${sends} calls sent, ${escalated} limits confirmed by an escalation means; ` +
        `dimmed (§14a) in ${dimmedScenarios} scenarios for ${dimmedS} simulated s, over-dimmed-limit ampere-seconds after the grace where the dimmed total can be met, per 1,000 scenarios: ` +
        `AFTER ${fmt({ ...afterDimmed, totalAs: afterDimmed.totalAs * per1000, bringableAs: afterDimmed.bringableAs * per1000 })}, ` +
        `checked over ${dimmedCheckedS} dimmed s (a gateway that does not dim, BEFORE: ${fmt({ ...beforeDimmed, totalAs: beforeDimmed.totalAs * per1000, bringableAs: beforeDimmed.bringableAs * per1000 })}); ` +
        `${confirmS.length + neverConfirmed} dimmings confirmed by every connector in p50 ${pct(0.5)} s, p90 ${pct(0.9)} s, max ${pct(1)} s: ${confirmS.filter((s) => s <= REACTION_DEADLINE_S).length} within the ${REACTION_DEADLINE_S} s deadline, ` +
        `${confirmS.filter((s) => s > REACTION_DEADLINE_S).length} later, ${neverConfirmed} not while dimmed (${leftUnconfirmed} of them with a car stopped by the ladder before its connector was confirmed, the rest with a charger not brought within its share by then); ` +
        `${raisesAfterDimming} raises after a dimming ended`,
    );
    // The harness tells the two apart: today's followers leave a site over its limit long after a load step.
    expect(before.worstAs).toBeGreaterThan(0);
    // Not vacuous: the invariant's precondition held for a good part of the time, and the ladder was used and worked.
    expect(checkedS).toBeGreaterThan(after.scenarios * 60);
    expect(escalated).toBeGreaterThan(0);
    // Likewise for the dimming: a gateway that does not dim is seen over the dimmed total; AFTER's
    // dimmed invariant held for a good part of the dimmed time, and dimmings ended into raises.
    expect(beforeDimmed.worstAs).toBeGreaterThan(0);
    expect(dimmedCheckedS).toBeGreaterThan(dimmedS / 8);
    expect(raisesAfterDimming).toBeGreaterThan(0);
  });

  it('dim, share, confirm, end: three chargers dimmed to P_min,14a of three devices, shared fairly, confirmed within the deadline, raised again from their confirmed limits', () => {
    // site.limit_a 63 with 10 A of other load: three 16 A cars at their maximum (48 A), then the
    // control box dims at 30 s. Three wallboxes: 4.2 kW + 2 x 0.75 x 4.2 kW = 10.5 kW, 15.21 A
    // per phase at 230 V. Shared as the fuse: the two earliest departures get their 6 A minimum,
    // the third waits (3.21 A left), the rest equally: 7.6 / 7.6 / 0 A.
    const all = { profile: true, 'tx-default-profile': true, 'charge-point-max-profile': true, 'remote-stop': true, inoperative: true };
    const car: SimCharger = { maxA: 16, takes: all, otherwise: 'Rejected', inoperativeApplies: true, script: [{ delayS: 0, refuse: false, lost: false, appliedIfLost: true, duplicateAfterS: null }] };
    const dimAtS = 30;
    // Longer than the raise interval (raised as it ends) and shorter (raised once the interval from the lowering is over).
    for (const lastsS of [90, 20]) {
      const sc: Scenario = { limitA: 63, readingEveryS: 10, initialOtherA: 10, loadSteps: [], chargers: [car, car, car], disconnects: [], restarts: [], dimmings: [{ atS: dimAtS, lastsS }], heatPump: null };
      expect(dimmedTotalA(sc)).toBe(15.21);
      const applied = new Map<number, number[]>();
      const a = simulate(sc, 'after', SIM_RULE, (line) => applied.set(Number(/^t=(\d+)/.exec(line)![1]), /applied=(\S+)/.exec(line)![1]!.split('/').map(Number)));
      expect(a.violations).toEqual([]);
      // Confirmed by every connector once the chargers answered (the second after the lowering went), well within the deadline.
      expect(a.dimmings).toEqual([{ lastsS, confirmS: 1, leftUnconfirmed: false }]);
      expect(a.dimmings[0]!.confirmS).toBeLessThanOrEqual(REACTION_DEADLINE_S);
      // Over the dimmed total only in the second before the chargers applied it.
      expect(a.overDimmedAs).toBeCloseTo(48 - 15.21, 6);
      for (let t = dimAtS + 1; t < dimAtS + lastsS; t++) expect(applied.get(t)).toEqual([7.6, 7.6, 0]);
      // Ended: each raised once, back to its maximum, not before the raise interval from the lowering.
      const raisedAtS = Math.max(dimAtS + lastsS, dimAtS + SIM_RULE.guard.raiseIntervalMs / 1000) + 1;
      expect(applied.get(raisedAtS - 1)).toEqual([7.6, 7.6, 0]);
      expect(applied.get(raisedAtS)).toEqual([16, 16, 16]);
      expect(a.raisesAfterDimming).toBe(3);
      expect(a.endAppliedA).toEqual([16, 16, 16]);
      // A gateway that does not dim stays over the dimmed total for the whole dimming.
      expect(simulate(sc, 'before').overDimmedAs).toBeCloseTo((48 - 15.21) * lastsS, 6);
    }
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
      dimmings: [],
      heatPump: null,
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
