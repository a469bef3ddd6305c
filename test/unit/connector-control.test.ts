// The fuse controller's rule for one connector (planning/connector-control.ts): pure, driven
// here cycle by cycle with a clock in ms and the charger's answers written out.
import { describe, expect, it } from 'vitest';
import {
  attemptAnswered,
  attemptSent,
  countedA,
  decideControl,
  forgotten,
  initialControl,
  LIMIT_MEANS,
  type ConnectorControl,
  type ControlDecision,
  type ControlInput,
  type ControlRule,
  type LimitMeans,
} from '../../src/planning/connector-control.js';
import { fuseCycle } from '../../src/planning/fuse-cycle.js';

const RULE: ControlRule = { lowerDeadlineMs: 30_000, escalationStepMs: 10_000, retryMinMs: 1_000, retryMaxMs: 16_000, guard: { raiseHysteresisA: 2, raiseIntervalMs: 60_000 } };
const T0 = 1_800_000_000_000;
const all = () => true;

const known = (limitA: number, over: Partial<ConnectorControl> = {}, means: LimitMeans = 'profile'): ConnectorControl => ({ ...initialControl('not-confirmed'), inForce: { known: true, limitA, sinceMs: T0 - 3_600_000, means }, ...over });

const decide = (state: ConnectorControl, nowMs: number, over: Partial<ControlInput> = {}, rule: ControlRule = RULE): ControlDecision =>
  decideControl({ state, shareA: 8, freshPlanA: 8, maxA: 16, connected: true, applicable: all, nowMs, ...over }, rule);

type Reply = { outcome: 'accepted' | 'refused'; confirmedA?: number | null } | 'silence';

/**
 * Runs the rule once a second from `fromMs` to `toMs` as the daemon would: each 'send' goes to
 * a charger that answers at once by `reply` (silence: the call times out after 10 s); returns
 * every send with its time (s after T0) and the state at the end.
 */
function drive(start: ConnectorControl, fromMs: number, toMs: number, reply: (means: LimitMeans, nowMs: number) => Reply, over: Partial<ControlInput> = {}, rule: ControlRule = RULE) {
  let state = start;
  const sends: { atS: number; means: LimitMeans; direction: string }[] = [];
  let timeoutAt: { sentAtMs: number; atMs: number } | null = null;
  for (let now = fromMs; now <= toMs; now += 1000) {
    if (timeoutAt && timeoutAt.atMs <= now) {
      state = attemptAnswered(state, { sentAtMs: timeoutAt.sentAtMs, outcome: 'unanswered', answer: 'timeout', atMs: now, confirmedA: null });
      timeoutAt = null;
    }
    const d = decide(state, now, over, rule);
    state = d.state;
    if (d.action.kind !== 'send') continue;
    const limitA = d.action.means === 'remote-stop' || d.action.means === 'inoperative' ? 0 : (over.shareA ?? 8);
    sends.push({ atS: (now - T0) / 1000, means: d.action.means, direction: d.action.direction });
    state = attemptSent(state, { limitA, means: d.action.means, atMs: now });
    const r = reply(d.action.means, now);
    if (r === 'silence') timeoutAt = { sentAtMs: now, atMs: now + 10_000 };
    else state = attemptAnswered(state, { sentAtMs: now, outcome: r.outcome, answer: r.outcome === 'accepted' ? 'Accepted' : 'Rejected', atMs: now, confirmedA: r.outcome === 'accepted' ? (r.confirmedA === undefined ? limitA : r.confirmedA) : null });
  }
  return { state, sends };
}

describe('decideControl: lowering', () => {
  it('a limit in force above the share is lowered at once, by the normal means, and the need is dated', () => {
    const d = decide(known(16), T0);
    expect(d.action).toMatchObject({ kind: 'send', means: 'profile', direction: 'lower' });
    expect(d.health).toBe('lowering');
    expect(d.state.lowerDemandedAtMs).toBe(T0);
  });

  it('at or under the share nothing is sent', () => {
    expect(decide(known(8), T0).action.kind).toBe('hold');
    expect(decide(known(7.9), T0, { shareA: 7.99, freshPlanA: 7.99 }).action.kind).toBe('hold');
    expect(decide(known(8), T0).health).toBe('settled');
  });

  it('an excess smaller than the 0.1 A rounding is lowered all the same: it adds up over the connectors', () => {
    // Nine connectors hold 10.7 A, the load rose by 1 A: each share is 10.66 A, so 0.36 A over the fuse for good if left.
    expect(decide(known(10.7), T0, { shareA: 10.66, freshPlanA: 10.66 }).action).toMatchObject({ kind: 'send', direction: 'lower' });
  });

  it('while an attempt is in flight nothing else is sent (one call at a time)', () => {
    const sent = attemptSent(decide(known(16), T0).state, { limitA: 8, means: 'profile', atMs: T0 });
    const d = decide(sent, T0 + 5_000);
    expect(d.action.kind).toBe('hold');
    expect(d.state.lowerDemandedAtMs).toBe(T0);
  });

  it('a failed lowering is sent again after a back-off of 1, 2, 4, 8 s, then at most retryMaxMs', () => {
    const slow = { ...RULE, lowerDeadlineMs: 3_600_000 };
    // Refused every time, answered at once: the gaps between sends are the back-off.
    const { sends } = drive(known(16), T0, T0 + 120_000, () => ({ outcome: 'refused' }), {}, slow);
    const gaps = sends.slice(1).map((s, i) => s.atS - sends[i]!.atS);
    expect(sends[0]).toEqual({ atS: 0, means: 'profile', direction: 'lower' });
    expect(gaps.slice(0, 7)).toEqual([1, 2, 4, 8, 16, 16, 16]);
    expect(new Set(sends.map((s) => s.means))).toEqual(new Set(['profile']));
  });

  it('a lowering confirmed ends the need; the back-off starts again from the first step after it', () => {
    let s = attemptSent(decide(known(16), T0).state, { limitA: 8, means: 'profile', atMs: T0 });
    s = attemptAnswered(s, { sentAtMs: T0, outcome: 'unanswered', answer: 'timeout', atMs: T0 + 10_000, confirmedA: null });
    expect(s.failures).toBe(1);
    expect(decide(s, T0 + 10_500).action.kind).toBe('hold');
    const retry = decide(s, T0 + 11_000);
    expect(retry.action).toMatchObject({ kind: 'send', means: 'profile', direction: 'lower' });
    s = attemptSent(retry.state, { limitA: 8, means: 'profile', atMs: T0 + 11_000 });
    s = attemptAnswered(s, { sentAtMs: T0 + 11_000, outcome: 'accepted', answer: 'Accepted', atMs: T0 + 12_000, confirmedA: 8 });
    expect(s.failures).toBe(0);
    const settled = decide(s, T0 + 13_000);
    expect(settled.health).toBe('settled');
    expect(settled.state.lowerDemandedAtMs).toBeNull();
  });
});

describe('decideControl: escalation', () => {
  it('past the deadline: TxDefaultProfile, ChargePointMaxProfile, RemoteStopTransaction, ChangeAvailability Inoperative, one per step', () => {
    const { sends } = drive(known(16), T0, T0 + 65_000, () => ({ outcome: 'refused' }));
    const firsts = LIMIT_MEANS.map((m) => sends.find((s) => s.means === m)?.atS);
    // The normal means from the first cycle; the ladder from the deadline (30 s after the need), 10 s a step.
    expect(firsts).toEqual([0, 31, 41, 51, 61]);
    // Within the deadline only the normal means goes out; each escalation goes out with its direction 'lower'.
    expect(sends.filter((s) => s.atS <= 30).every((s) => s.means === 'profile')).toBe(true);
    expect(sends.every((s) => s.direction === 'lower')).toBe(true);
  });

  it('health: lowering within the deadline, escalating on the ladder, uncontrollable once every means had its step', () => {
    const run = (toS: number) => drive(known(16), T0, T0 + toS * 1000, () => 'silence').state;
    expect(decide(run(20), T0 + 21_000).health).toBe('lowering');
    expect(decide(run(45), T0 + 46_000).health).toBe('escalating');
    expect(decide(run(90), T0 + 91_000).health).toBe('uncontrollable');
  });

  it('a means that does not apply to the connector is skipped', () => {
    const applicable = (m: LimitMeans) => m !== 'charge-point-max-profile' && m !== 'inoperative';
    const { sends } = drive(known(16), T0, T0 + 60_000, () => ({ outcome: 'refused' }), { applicable });
    const ladder = sends.filter((s) => s.means !== 'profile');
    expect(ladder.map((s) => s.means).filter((m, i, a) => a.indexOf(m) === i)).toEqual(['tx-default-profile', 'remote-stop']);
    expect(ladder.find((s) => s.means === 'remote-stop')?.atS).toBe(41);
  });

  it('a limit confirmed by an escalation means ends the need; the normal profile is tried again once a step later', () => {
    const reply = (m: LimitMeans): Reply => (m === 'charge-point-max-profile' ? { outcome: 'accepted' } : 'silence');
    const { state, sends } = drive(known(16), T0, T0 + 80_000, reply);
    const cpMax = sends.find((s) => s.means === 'charge-point-max-profile')!;
    expect(state.inForce).toMatchObject({ known: true, limitA: 8 });
    expect(sends.find((s) => s.atS > cpMax.atS)).toMatchObject({ means: 'profile', direction: 'confirm' });
  });

  it('after the ladder the normal means is tried again: a charger that missed one deadline is not lost for good', () => {
    // Busy firmware: it does not answer for the first 60 s, then takes TxProfiles and nothing else.
    const reply = (m: LimitMeans, nowMs: number): Reply => (nowMs < T0 + 60_000 ? 'silence' : m === 'profile' ? { outcome: 'accepted' } : { outcome: 'refused' });
    const { state } = drive(known(16), T0, T0 + 180_000, reply);
    expect(state.inForce).toMatchObject({ known: true, limitA: 8, means: 'profile' });
    expect(decide(state, T0 + 181_000).health).toBe('settled');
  });

  it('a need that went while the limit was still unknown leaves no ladder: the next need starts from the normal means', () => {
    const refused = (): Reply => ({ outcome: 'refused' });
    // Refused all through the ladder, up to Inoperative.
    const first = drive(known(16), T0, T0 + 65_000, refused);
    expect(first.sends.at(-1)?.means).toBe('inoperative');
    // The load falls: the share is the connector's maximum, nothing to lower (it is only asked to confirm).
    const gone = drive(first.state, T0 + 66_000, T0 + 90_000, refused, { shareA: 16, freshPlanA: 16 });
    expect(gone.sends.every((s) => s.direction === 'confirm')).toBe(true);
    // It rises again: the first lowering is the plan's own profile, not the car's stop or Inoperative.
    const again = drive(gone.state, T0 + 91_000, T0 + 100_000, refused);
    expect(again.sends[0]).toMatchObject({ means: 'profile', direction: 'lower' });
  });

  it('a limit held by an escalation means keeps that means for the next lowering', () => {
    const reply = (m: LimitMeans): Reply => (m === 'charge-point-max-profile' ? { outcome: 'accepted' } : { outcome: 'refused' });
    const held = drive(known(16), T0, T0 + 45_000, reply);
    expect(held.state.inForce).toMatchObject({ known: true, limitA: 8, means: 'charge-point-max-profile' });
    const lower = drive(held.state, T0 + 46_000, T0 + 47_000, reply, { shareA: 6, freshPlanA: 6 });
    expect(lower.sends[0]).toMatchObject({ means: 'charge-point-max-profile', direction: 'lower' });
    expect(lower.state.inForce).toMatchObject({ known: true, limitA: 6 });
  });

  it('a need seen while the charger is not connected has its deadline from the reconnect: the normal means goes first', () => {
    // Gateway restarted: unknown, counted at its maximum, above its share, charger away for 2 minutes.
    const away = drive(initialControl('restarted'), T0, T0 + 120_000, () => ({ outcome: 'accepted' }), { connected: false });
    expect(away.sends).toEqual([]);
    const back = drive(away.state, T0 + 121_000, T0 + 125_000, () => ({ outcome: 'accepted' }));
    expect(back.sends[0]).toMatchObject({ means: 'profile', direction: 'lower' });
    expect(back.state.inForce).toMatchObject({ known: true, limitA: 8 });
  });
});

describe('decideControl: raising', () => {
  const settled = (lastChangeMs: number) => known(8, { lastChangeMs });

  it('only after the raise interval since the last change', () => {
    expect(decide(settled(T0 - 59_000), T0, { shareA: 16, freshPlanA: 16 }).action.kind).toBe('hold');
    expect(decide(settled(T0 - 60_000), T0, { shareA: 16, freshPlanA: 16 }).action).toMatchObject({ kind: 'send', means: 'profile', direction: 'raise' });
  });

  it('only by at least the hysteresis', () => {
    expect(decide(settled(T0 - 600_000), T0, { shareA: 9.9, freshPlanA: 9.9 }).action.kind).toBe('hold');
    expect(decide(settled(T0 - 600_000), T0, { shareA: 10, freshPlanA: 10 }).action).toMatchObject({ kind: 'send', direction: 'raise' });
  });

  it('never from an unknown limit: an unknown connector within its share is only asked to confirm', () => {
    const d = decide(initialControl('restarted'), T0, { shareA: 16, freshPlanA: 16 });
    expect(d.action).toMatchObject({ kind: 'send', means: 'profile', direction: 'confirm' });
  });
});

describe('what the others count a connector at (countedA)', () => {
  it('unknown (never confirmed, refused, unanswered, disconnected, restarted): its maximum', () => {
    for (const why of ['not-confirmed', 'refused', 'unanswered', 'disconnected', 'restarted'] as const) expect(countedA(initialControl(why), 32, T0, RULE)).toBe(32);
  });

  it('confirmed: shared as usual; a lowering in flight within its deadline: as asked; overdue: its maximum', () => {
    expect(countedA(known(16), 32, T0, RULE)).toBeNull();
    const demanded = decide(known(16), T0).state;
    const inFlight = attemptSent(demanded, { limitA: 8, means: 'profile', atMs: T0 });
    expect(countedA(inFlight, 32, T0 + 5_000, RULE)).toBeNull();
    expect(countedA(inFlight, 32, T0 + 31_000, RULE)).toBe(32);
  });

  it('in a cycle, an unknown connector takes its maximum off the others\' headroom at once', () => {
    const rule = RULE;
    const conn = (key: string, state: ConnectorControl, departureMs: number) => ({ key, maxA: 16, minA: 6, departureMs, state, connected: true, applicable: all });
    const out = fuseCycle({ limitA: 32, otherLoadA: 4 }, [conn('a', known(14), T0 + 3_600_000), conn('b', initialControl('disconnected'), T0 + 7_200_000)], T0, rule);
    // b counts at 16 A for a: 32 - 4 - 16 = 12 A, so a (14 A in force) is lowered.
    expect(out.get('a')).toMatchObject({ shareA: 12, countedA: null });
    expect(out.get('a')!.decision.action).toMatchObject({ kind: 'send', direction: 'lower' });
    expect(out.get('b')!.countedA).toBe(16);
  });
});

describe('answers (attemptAnswered)', () => {
  const inFlight = attemptSent(known(16), { limitA: 8, means: 'profile', atMs: T0 });

  it('an Accepted answer puts the limit in force; one that does not bind (confirmedA null) changes nothing in force', () => {
    expect(attemptAnswered(inFlight, { sentAtMs: T0, outcome: 'accepted', answer: 'Accepted', atMs: T0 + 1_000, confirmedA: 8 }).inForce).toMatchObject({ known: true, limitA: 8 });
    expect(attemptAnswered(inFlight, { sentAtMs: T0, outcome: 'accepted', answer: 'Accepted', atMs: T0 + 1_000, confirmedA: null }).inForce).toMatchObject({ known: true, limitA: 16 });
  });

  it('a refusal or a timeout leaves the limit unknown (counted at the maximum)', () => {
    expect(attemptAnswered(inFlight, { sentAtMs: T0, outcome: 'refused', answer: 'Rejected', atMs: T0 + 1_000, confirmedA: null }).inForce).toEqual({ known: false, why: 'refused' });
    expect(attemptAnswered(inFlight, { sentAtMs: T0, outcome: 'unanswered', answer: 'timeout', atMs: T0 + 10_000, confirmedA: null }).inForce).toEqual({ known: false, why: 'unanswered' });
  });

  it('late, duplicated and stray answers are ignored: only the attempt in flight takes its answer', () => {
    const timedOut = attemptAnswered(inFlight, { sentAtMs: T0, outcome: 'unanswered', answer: 'timeout', atMs: T0 + 10_000, confirmedA: null });
    const next = attemptSent(timedOut, { limitA: 8, means: 'profile', atMs: T0 + 11_000 });
    // The first attempt's Accepted comes late, while the second is in flight: nothing changes.
    expect(attemptAnswered(next, { sentAtMs: T0, outcome: 'accepted', answer: 'Accepted', atMs: T0 + 12_000, confirmedA: 8 })).toBe(next);
    const refused = attemptAnswered(next, { sentAtMs: T0 + 11_000, outcome: 'refused', answer: 'Rejected', atMs: T0 + 12_000, confirmedA: null });
    // The second's answer duplicated, as Accepted: the attempt is answered already.
    expect(attemptAnswered(refused, { sentAtMs: T0 + 11_000, outcome: 'accepted', answer: 'Accepted', atMs: T0 + 13_000, confirmedA: 8 })).toBe(refused);
    // The charger disconnected with the attempt in flight: its answer, if it ever comes, is ignored.
    const gone = forgotten(next, 'disconnected');
    expect(attemptAnswered(gone, { sentAtMs: T0 + 11_000, outcome: 'accepted', answer: 'Accepted', atMs: T0 + 14_000, confirmedA: 8 })).toBe(gone);
    expect(gone.inForce).toEqual({ known: false, why: 'disconnected' });
  });

  it('a send from an unknown limit does not start the raise interval: after a restart a connector lowered while unknown is raised to its share as soon as it confirms', () => {
    // Restarted: unknown, counted at its 16 A maximum; the site leaves it 4 A for a moment (the others counted at theirs).
    const unknown = initialControl('restarted');
    const sent = attemptSent(unknown, { limitA: 4, means: 'profile', atMs: 1_000 });
    expect(sent.lastChangeMs).toBeNull();
    const confirmed = attemptAnswered(sent, { sentAtMs: 1_000, outcome: 'accepted', answer: 'Accepted', atMs: 1_500, confirmedA: 4 });
    // The others confirmed too: its share is 10 A again, two seconds later; the raise goes out at once.
    const d = decideControl({ state: confirmed, shareA: 10, freshPlanA: 10, maxA: 16, connected: true, applicable: () => true, nowMs: 3_000 }, RULE);
    expect(d.action).toMatchObject({ kind: 'send', direction: 'raise' });
    // A lowering from a known limit does start it.
    expect(attemptSent(confirmed, { limitA: 3, means: 'profile', atMs: 4_000 }).lastChangeMs).toBe(4_000);
  });
});

describe('a car with no target (charge-now)', () => {
  const fresh = () => initialControl('not-confirmed');

  it('never limited and its share at or above its maximum: nothing is sent, and it is settled', () => {
    for (const shareA of [16, 20]) {
      const d = decide(fresh(), T0, { shareA, freshPlanA: 16, neverLimited: true, chargeNow: true });
      expect(d.action.kind).toBe('hold');
      expect(d.health).toBe('settled');
      expect(d.state.lowerDemandedAtMs).toBeNull();
    }
    // A planned connector in the same state is asked to confirm its plan.
    expect(decide(fresh(), T0, { shareA: 16, freshPlanA: 16 }).action).toMatchObject({ kind: 'send', direction: 'confirm' });
  });

  it('never limited and its share below its maximum: lowered at once, by the same ladder as a planned one (escalated past the deadline)', () => {
    const d = decide(fresh(), T0, { shareA: 7.5, freshPlanA: 7.5, neverLimited: true, chargeNow: true });
    expect(d.action).toMatchObject({ kind: 'send', means: 'profile', direction: 'lower' });
    expect(d.health).toBe('lowering');
    // Unanswered: sent again after the back-off, then escalated past the deadline (neverLimited no longer holds once a limit went out).
    const { sends } = drive(fresh(), T0, T0 + 45_000, () => 'silence', { shareA: 7.5, freshPlanA: 7.5, chargeNow: true });
    expect(sends[0]).toMatchObject({ atS: 0, means: 'profile', direction: 'lower' });
    expect(sends.filter((s) => s.means === 'profile').length).toBeGreaterThanOrEqual(2);
    expect(sends.some((s) => s.means === 'tx-default-profile' && s.atS > 30)).toBe(true);
  });

  it('the first limit sent to it starts the raise interval (it held its own maximum: a real change)', () => {
    const sent = attemptSent(fresh(), { limitA: 7.5, means: 'profile', atMs: T0, firstOfChargeNow: true });
    expect(sent.lastChangeMs).toBe(T0);
    expect(attemptSent(fresh(), { limitA: 7.5, means: 'profile', atMs: T0 }).lastChangeMs).toBeNull();
  });

  it('raised back to its maximum once its share reaches it, even by less than the hysteresis, but not before the raise interval', () => {
    const low = known(15, { lastChangeMs: T0 - 30_000 });
    expect(decide(low, T0, { shareA: 16, freshPlanA: 16, chargeNow: true }).action.kind).toBe('hold');
    expect(decide(low, T0 + 30_000, { shareA: 16, freshPlanA: 16, chargeNow: true }).action).toMatchObject({ kind: 'send', means: 'profile', direction: 'raise' });
    // A planned connector 1 A under its share waits for the hysteresis.
    expect(decide(low, T0 + 30_000, { shareA: 16, freshPlanA: 16 }).action.kind).toBe('hold');
    // Below its maximum the usual hysteresis holds for it too.
    expect(decide(known(9, { lastChangeMs: T0 - 600_000 }), T0, { shareA: 10, freshPlanA: 10, chargeNow: true }).action.kind).toBe('hold');
    // At its maximum: nothing more.
    expect(decide(known(16, { lastChangeMs: T0 - 600_000 }), T0, { shareA: 16, freshPlanA: 16, chargeNow: true }).action.kind).toBe('hold');
  });
});
