// The fuse controller's rule for one connector (docs/planning.md "The fuse controller"). Pure:
// the connector's three facts (the limit wanted, the limit in force, the last attempt) and
// the clock in; what to do now, what the others must count it at, and how healthy it is out.
// ocpp/fuse-controller.ts runs it on every site-meter reading and on a timer, and acts.
//
// The rule:
// - The limit *in force* is only ever what the charger confirmed (an Accepted answer that
//   binds the limit). Unknown — never confirmed on this connection, the last answer an error,
//   a timeout or a refusal, the charger disconnected, the gateway restarted — counts as the
//   connector's configured maximum, never as a lower value it was only asked for.
// - Level-triggered: every cycle compares in force with the connector's share of the site.
//   Above it (or unknown and above), a lowering goes out at once; one that fails is sent again
//   after a bounded back-off (1 s, 2 s, 4 s, … up to retryMaxMs), with no special case for a
//   lost answer, a reconnect or a restart: the next cycle sees the same gap and acts.
// - A lowering not confirmed within lowerDeadlineMs of the cycle that first demanded it (with
//   the charger connected) escalates, one means per escalationStepMs: TxDefaultProfile,
//   ChargePointMaxProfile, RemoteStopTransaction, ChangeAvailability Inoperative; after the
//   last, the ladder starts again from the normal means. Meanwhile (and from the first
//   unknown moment) the others count it at its maximum, so they absorb it where they can.
// - Raising is not urgent: only by at least the hysteresis and no sooner than the raise
//   interval after the last change (site-guard.ts), and only from a confirmed limit.
// - A car with no target (a charge-now plan, charge-now.ts) whose transaction never got a
//   limit of ours holds the charger's own maximum: nothing is sent to it while its share is at
//   or above that maximum (chargers that never needed a profile get none); once the share
//   falls below it, it is lowered as any other, and raised by the same rule; once its share
//   reaches its maximum again it is raised back to that maximum (after the raise interval,
//   even by less than the hysteresis).
import type { SiteGuardRule } from './site-guard.js';

/** How a limit is put in force, the first the normal one (the strategy ladder), then the escalation ladder. */
export const LIMIT_MEANS = ['profile', 'tx-default-profile', 'charge-point-max-profile', 'remote-stop', 'inoperative'] as const;
export type LimitMeans = (typeof LIMIT_MEANS)[number];

export interface ControlRule {
  /** How long a lowering may stay unconfirmed after the cycle that demanded it before it escalates. */
  readonly lowerDeadlineMs: number;
  /** How long each escalation means has before the next one. */
  readonly escalationStepMs: number;
  /** The first retry's wait after a failed attempt; doubled each time up to retryMaxMs. */
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
  readonly guard: SiteGuardRule;
}

export type AttemptOutcome = 'in-flight' | 'accepted' | 'refused' | 'unanswered';

export interface Attempt {
  readonly limitA: number;
  readonly means: LimitMeans;
  readonly sentAtMs: number;
  readonly outcome: AttemptOutcome;
  readonly answeredAtMs: number | null;
  /** The charger's answer as it came (status or CallError code), for people. */
  readonly answer: string | null;
}

export type UnknownWhy = 'not-confirmed' | 'unanswered' | 'refused' | 'disconnected' | 'restarted';

export type InForce = { readonly known: true; readonly limitA: number; readonly sinceMs: number; readonly means: LimitMeans } | { readonly known: false; readonly why: UnknownWhy };

export interface ConnectorControl {
  readonly inForce: InForce;
  readonly attempt: Attempt | null;
  /** Failed attempts (unanswered or refused) since the last confirmation: the back-off's exponent. */
  readonly failures: number;
  /** When the current need to lower was first seen (null: none). */
  readonly lowerDemandedAtMs: number | null;
  /** The highest escalation means used for the current need (index in LIMIT_MEANS; 0: none). */
  readonly escalation: number;
  readonly escalatedAtMs: number | null;
  /** When a limit was last sent for the site (the raise interval runs from it). */
  readonly lastChangeMs: number | null;
}

export const initialControl = (why: UnknownWhy): ConnectorControl => ({
  inForce: { known: false, why },
  attempt: null,
  failures: 0,
  lowerDemandedAtMs: null,
  escalation: 0,
  escalatedAtMs: null,
  lastChangeMs: null,
});

/** Limits go to the charger rounded down to 0.1 A: a smaller raise is rounding. */
export const ROUNDING_A = 0.05;
/** What is float noise in a comparison of currents (A). */
const NOISE_A = 1e-9;

/**
 * A limit sent. It starts the raise interval only where the limit in force was known: a send
 * that puts an unknown limit in force (after a gateway restart, a reconnect, a failed answer)
 * is not a change of the site's load, so once confirmed the connector may be raised to its
 * share at once instead of waiting site.raise_interval_s (after a restart every connector is
 * unknown and counted at its maximum for a moment, which would otherwise hold every car low
 * for the whole interval).
 */
export function attemptSent(s: ConnectorControl, a: { readonly limitA: number; readonly means: LimitMeans; readonly atMs: number; /** The first limit sent to a car with no target (it held the charger's own maximum): a change of the site's load. */ readonly firstOfChargeNow?: boolean }): ConnectorControl {
  return { ...s, attempt: { limitA: a.limitA, means: a.means, sentAtMs: a.atMs, outcome: 'in-flight', answeredAtMs: null, answer: null }, lastChangeMs: s.inForce.known || a.firstOfChargeNow ? a.atMs : s.lastChangeMs };
}

/**
 * The answer to the attempt in flight. `confirmedA`: the limit the answer puts in force
 * (null when an Accepted answer does not bind it, e.g. a TxDefaultProfile under a TxProfile
 * of ours). An answer to an attempt no longer in flight (late, duplicated) changes nothing.
 */
export function attemptAnswered(s: ConnectorControl, a: { readonly sentAtMs: number; readonly outcome: Exclude<AttemptOutcome, 'in-flight'>; readonly answer: string; readonly atMs: number; readonly confirmedA: number | null }): ConnectorControl {
  if (!s.attempt || s.attempt.sentAtMs !== a.sentAtMs || s.attempt.outcome !== 'in-flight') return s;
  const attempt: Attempt = { ...s.attempt, outcome: a.outcome, answeredAtMs: a.atMs, answer: a.answer };
  if (a.outcome === 'accepted') {
    if (a.confirmedA === null) return { ...s, attempt };
    return { ...s, attempt, failures: 0, inForce: { known: true, limitA: a.confirmedA, sinceMs: a.atMs, means: attempt.means } };
  }
  // Not taken or not heard: whatever it held before, it may hold anything up to its maximum now.
  return { ...s, attempt, failures: s.failures + 1, inForce: { known: false, why: a.outcome } };
}

/** The charger's connection closed, or the gateway does not know what it holds: unknown until confirmed again. */
export function forgotten(s: ConnectorControl, why: UnknownWhy): ConnectorControl {
  const attempt = s.attempt?.outcome === 'in-flight' ? null : s.attempt;
  return { ...s, attempt, inForce: { known: false, why } };
}

/** The limit in force, unknown counting as the connector's maximum. */
export const inForceA = (s: ConnectorControl, maxA: number): number => (s.inForce.known ? Math.min(maxA, s.inForce.limitA) : maxA);

/** Whether a lowering demanded since `lowerDemandedAtMs` is past its deadline. */
export const overdue = (s: ConnectorControl, nowMs: number, rule: ControlRule): boolean => s.lowerDemandedAtMs !== null && nowMs - s.lowerDemandedAtMs > rule.lowerDeadlineMs;

/**
 * What the other connectors count this one at in their shares, or null when it is shared as
 * usual (its limit confirmed at or under its share, or a lowering in flight within its
 * deadline: it counts at what it was asked, so one load step does not make every connector
 * lower the others too). Unknown, refused, unanswered or overdue: its maximum.
 */
export function countedA(s: ConnectorControl, maxA: number, nowMs: number, rule: ControlRule): number | null {
  if (overdue(s, nowMs, rule)) return maxA;
  if (s.attempt?.outcome === 'in-flight' && nowMs - s.attempt.sentAtMs <= rule.lowerDeadlineMs) return null;
  if (!s.inForce.known) return maxA;
  return null;
}

export interface ControlInput {
  readonly state: ConnectorControl;
  /** The connector's share of the site now (A). */
  readonly shareA: number;
  /** The highest current a plan made now would use without the raise margin (A). */
  readonly freshPlanA: number;
  /** The connector's configured maximum (A): what an unknown state counts as. */
  readonly maxA: number;
  /** Whether the charger is connected now (nothing can be sent otherwise). */
  readonly connected: boolean;
  /** Which escalation means apply to this connector now (e.g. RemoteStopTransaction needs a transaction). */
  readonly applicable: (means: LimitMeans) => boolean;
  readonly nowMs: number;
  /**
   * A charge-now connector (no target) whose transaction never got a limit of ours: it holds
   * the charger's own maximum, so an unknown limit is that maximum, and nothing is sent while
   * the share leaves it that much.
   */
  readonly neverLimited?: boolean;
  /**
   * A charge-now connector (no target): once the site leaves it its maximum again it is raised
   * back to that maximum even by less than the hysteresis (the share reaches the maximum only
   * where the site has that much room, so this cannot flap).
   */
  readonly chargeNow?: boolean;
}

export type ControlAction =
  | { readonly kind: 'hold'; readonly why: string }
  | { readonly kind: 'send'; readonly means: LimitMeans; readonly direction: 'lower' | 'raise' | 'confirm'; readonly why: string };

/**
 * settled: in force at or under the share; lowering: above it, within the deadline;
 * escalating: past the deadline, the ladder under way; uncontrollable: every applicable means
 * had its step, still not confirmed (the site may be above its limit; the ladder goes on).
 */
export type ControlHealth = 'settled' | 'lowering' | 'escalating' | 'uncontrollable';

export interface ControlDecision {
  readonly state: ConnectorControl;
  readonly action: ControlAction;
  readonly health: ControlHealth;
}

const backoffMs = (failures: number, rule: ControlRule) => Math.min(rule.retryMaxMs, rule.retryMinMs * 2 ** Math.max(0, failures - 1));

export function decideControl(input: ControlInput, rule: ControlRule): ControlDecision {
  const { nowMs } = input;
  if (input.neverLimited && !input.state.inForce.known && input.shareA + NOISE_A >= input.maxA) {
    return { state: { ...input.state, lowerDemandedAtMs: null, escalation: 0, escalatedAtMs: null }, action: { kind: 'hold', why: `no target: charging at its maximum ${input.maxA} A within its share ${input.shareA} A, nothing sent` }, health: 'settled' };
  }
  const inForce = inForceA(input.state, input.maxA);
  // Any excess is lowered, however small: a tolerance per connector adds up over the site
  // (ten connectors 0.05 A over each are 0.5 A over the fuse, for good). The limit sent is
  // rounded down to 0.1 A under the share, so a share that wobbles by less sends nothing again.
  const needsLower = inForce > input.shareA + NOISE_A;
  // The need and its deadline run from the cycle that first saw it with the charger connected (a
  // lowering that cannot be sent cannot be late, and the ladder must not start with the car's
  // stop when the charger comes back; while away it is unknown, so the others count it at its
  // maximum anyway); a need met ends the escalation.
  let state: ConnectorControl = needsLower
    ? { ...input.state, lowerDemandedAtMs: input.state.lowerDemandedAtMs ?? (input.connected ? nowMs : null) }
    : // A limit held by an escalation means keeps that means for the next lowering (the normal one did not work); a need that
      // ended otherwise (met by the normal means, or gone while still unknown) leaves no ladder: the next starts from the normal means.
      input.state.inForce.known && input.state.inForce.means !== 'profile'
      ? { ...input.state, lowerDemandedAtMs: null }
      : { ...input.state, lowerDemandedAtMs: null, escalation: 0, escalatedAtMs: null };
  const late = overdue(state, nowMs, rule);
  // Every applicable means had its step (the ladder then starts again from the normal means, below).
  // Asked only once late: `applicable` may read the stores, and most cycles are settled.
  const exhausted = () => state.lowerDemandedAtMs !== null && nowMs - state.lowerDemandedAtMs > rule.lowerDeadlineMs + LIMIT_MEANS.slice(1).filter((m) => input.applicable(m)).length * rule.escalationStepMs;
  const health: ControlHealth = !needsLower ? 'settled' : !late ? 'lowering' : exhausted() ? 'uncontrollable' : 'escalating';
  const hold = (why: string): ControlDecision => ({ state, action: { kind: 'hold', why }, health });
  if (!input.connected) return hold('charger not connected');
  const attempt = state.attempt;
  if (attempt?.outcome === 'in-flight') return hold(`${attempt.means} in flight since ${new Date(attempt.sentAtMs).toISOString()}`);
  const failedAt = attempt && (attempt.outcome === 'refused' || attempt.outcome === 'unanswered') ? attempt.answeredAtMs ?? attempt.sentAtMs : null;
  const retryDue = failedAt === null || nowMs - failedAt >= backoffMs(state.failures, rule);
  if (needsLower) {
    if (late) {
      // The next applicable means once the one in use had its step (the first escalation at the
      // deadline itself). After the last the ladder starts again from the normal means: a charger
      // that missed one deadline (busy, or away) and takes only that means is not lost for good.
      const stepDue = state.escalatedAtMs === null || nowMs - state.escalatedAtMs >= rule.escalationStepMs;
      if (stepDue) {
        let next = (state.escalation + 1) % LIMIT_MEANS.length;
        while (next !== 0 && !input.applicable(LIMIT_MEANS[next]!)) next = (next + 1) % LIMIT_MEANS.length;
        state = { ...state, escalation: next, escalatedAtMs: nowMs };
        const why = next === 0 ? 'every means had its step: the normal means again' : `lowering not confirmed ${Math.round((nowMs - state.lowerDemandedAtMs!) / 1000)} s after it was demanded`;
        return { state, action: { kind: 'send', means: LIMIT_MEANS[next]!, direction: 'lower', why }, health };
      }
      // The means in use is sent again after the back-off while its step runs.
      if (!retryDue) return hold('escalated: waiting for the back-off');
      return { state, action: { kind: 'send', means: LIMIT_MEANS[state.escalation]!, direction: 'lower', why: 'escalated means sent again' }, health };
    }
    if (!retryDue) return hold(`lowering failed (${attempt!.answer ?? attempt!.outcome}): next try after the back-off`);
    return { state, action: { kind: 'send', means: LIMIT_MEANS[state.escalation]!, direction: 'lower', why: state.inForce.known ? `in force ${inForce} A above the share ${input.shareA} A` : `limit in force unknown (${state.inForce.why}): counted at the maximum ${input.maxA} A, above the share ${input.shareA} A` }, health };
  }
  if (!state.inForce.known) {
    // At or under its share even at its maximum: the plan is still what it should hold.
    if (!retryDue) return hold('unconfirmed: next try after the back-off');
    return { state, action: { kind: 'send', means: 'profile', direction: 'confirm', why: `limit in force unknown (${state.inForce.why})` }, health };
  }
  const since = state.lastChangeMs === null ? Infinity : nowMs - state.lastChangeMs;
  const backToMax = input.chargeNow === true && input.freshPlanA >= input.maxA - NOISE_A && inForce < input.maxA - ROUNDING_A;
  if ((backToMax || input.freshPlanA >= inForce + Math.max(ROUNDING_A, rule.guard.raiseHysteresisA)) && since >= rule.guard.raiseIntervalMs) {
    return { state, action: { kind: 'send', means: 'profile', direction: 'raise', why: `the site leaves ${input.freshPlanA} A, ${inForce} A in force` }, health };
  }
  // Confirmed by an escalation means only: the normal profile is tried again once per step, so the escalation can end.
  if (state.inForce.means !== 'profile' && state.inForce.known && since >= rule.escalationStepMs && retryDue) {
    return { state, action: { kind: 'send', means: 'profile', direction: 'confirm', why: `held by ${state.inForce.means}: the plan's own profile tried again` }, health };
  }
  return hold('in force within the share');
}
