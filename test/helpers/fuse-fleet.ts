// A simulated site for the fuse controller (issue 30 item 6): a fleet of 1–10 simulated
// chargers, a site limit, an other load that steps, a site meter read every 1 s or 10 s, the
// grid operator's dimming (§14a, issue 34 item 5) that starts and ends at random moments, and
// a simulated clock that steps 1 s. The same scenario drives two gateways:
// - AFTER: planning/fuse-cycle.ts (fuseCycle, one cycle per second: the 1 s timer, with the
//   last reading and, while dimmed, the dimmed total), acting on each 'send' decision;
// - BEFORE: a model of today's followers (ocpp/site-follower.ts with the profile dispatcher
//   under it): on each reading, one lowering or raise per connector whose last stored
//   answer is Accepted, the asked value taken as in force while its answer is pending,
//   an errored or unanswered call never sent again (until a reconnect sends the plan), no
//   escalation, and every connector shared as usual (nothing counted at its maximum). A
//   refusal falls through to the next profile purpose, as the dispatcher's strategy ladder
//   does (TxProfile -> TxDefaultProfile -> ChargePointMaxProfile), remembered for the charger.
//   It knows no dimming (the follower predates it): its over-dimmed figures show the measure
//   sees a gateway that does not dim.
//
// The dimmed total is the daemon's: P_min,14a for the scenario's chargers (each one connector,
// one controllable device) and its heat pump (dimmed-limit.ts minimumPowerW on para14a.json),
// less the heat pump's fixed load, as current per phase at 230 V on 3 phases
// (dimmedChargerCurrentA), shared with the site's headroom as the planner does
// (share-limits.ts, through fuseCycle). The other load does not count against it.
//
// The chargers are the worst case the issue names: one applies nothing it did not accept,
// works its messages in the order they came (one websocket), may take 0–120 s over each,
// may lose or duplicate its answer (a lost answer may or may not have been applied), may
// refuse a message, and takes only the means it takes (a charger may ignore
// SetChargingProfile and still take RemoteStopTransaction). TxProfile governs over
// TxDefaultProfile, ChargePointMaxProfile caps both, a stop or Inoperative ends the car's
// transaction (it leaves the site's fleet). Cars draw what their charger allows (the limit in
// force is the current), so over-limit ampere-seconds are the sum of the chargers' real
// limits plus the other load above the site limit.
import fc from 'fast-check';
import { initialControl, inForceA, LIMIT_MEANS, attemptAnswered, attemptSent, forgotten, ROUNDING_A, type ConnectorControl, type ControlHealth, type ControlRule, type LimitMeans } from '../../src/planning/connector-control.js';
import { dimmedChargerCurrentA, minimumPowerW } from '../../src/planning/dimmed-limit.js';
import { fuseCycle, type CycleConnector } from '../../src/planning/fuse-cycle.js';
import { siteGuardDecision } from '../../src/planning/site-guard.js';
import { shareSiteCurrent } from '../../src/planning/site-share.js';

export const MIN_A = 6;
/** The call timeout of a limit's call in the simulated gateway (s): half the deadline, as the daemon's. */
export const CALL_TIMEOUT_S = 10;
/** The daemon's rule at the config's defaults (site.lower_deadline_s 20, site.escalation_step_s 10), but a raise interval of 60 s, so that raises happen within a scenario. */
export const SIM_RULE: ControlRule = {
  lowerDeadlineMs: 20_000,
  escalationStepMs: 10_000,
  retryMinMs: 1_000,
  retryMaxMs: 8_000,
  guard: { raiseHysteresisA: 2, raiseIntervalMs: 60_000 },
};
/** A scenario runs until this long after its last event (a load step, a disconnect, a reconnect, a restart, a dimming's start or end), 10 minutes at most. */
export const TAIL_S = 120;
export const SIM_S = 600;
/** The chargers' voltage and phases: the dimmed power as current per phase. */
export const VOLTAGE_V = 230;
export const PHASES = 3;
/** grid_control.reaction_deadline_s's default: a dimming every connector confirmed later is late. */
export const REACTION_DEADLINE_S = 60;

/** How a charger handles one message: its script's entries are taken in turn, over and over, for each kind of call. */
export interface MessageBehaviour {
  /** Seconds from its arrival (or the end of the one before) until it is worked and answered. */
  readonly delayS: number;
  readonly refuse: boolean;
  /** The answer never reaches the gateway. */
  readonly lost: boolean;
  /** Whether a message whose answer was lost was applied all the same. */
  readonly appliedIfLost: boolean;
  /** The answer comes a second time this many seconds later (null: once). */
  readonly duplicateAfterS: number | null;
}

export interface SimCharger {
  readonly maxA: 16 | 32;
  /** The means this charger takes; the others it answers with `otherwise`. */
  readonly takes: Readonly<Record<LimitMeans, boolean>>;
  readonly otherwise: 'Rejected' | 'NotSupported' | 'silence';
  /** Whether ChangeAvailability Inoperative applies at this connector (the rest always do: one connector per charger, a transaction open). */
  readonly inoperativeApplies: boolean;
  readonly script: readonly MessageBehaviour[];
}

export interface Scenario {
  readonly limitA: number;
  readonly readingEveryS: 1 | 10;
  readonly initialOtherA: number;
  readonly loadSteps: readonly { readonly atS: number; readonly otherA: number }[];
  readonly chargers: readonly SimCharger[];
  readonly disconnects: readonly { readonly charger: number; readonly atS: number; readonly downS: number }[];
  readonly restarts: readonly { readonly atS: number; readonly reconnectAfterS: number }[];
  /** The grid operator's dimming (§14a): from atS for lastsS seconds; in order, none overlapping. */
  readonly dimmings: readonly { readonly atS: number; readonly lastsS: number }[];
  /** A heat pump behind the same energy manager the gateway does not control (grid_control.other_devices), or none. */
  readonly heatPump: { readonly connectionPowerKw: number; readonly fixedLoadKw: number } | null;
}

/** The scenario's dimmed total for its chargers (A per phase), as the daemon computes it (grid-control.ts, target-plan.ts siteOf). */
export function dimmedTotalA(sc: Pick<Scenario, 'chargers' | 'heatPump'>): number {
  const others = sc.heatPump ? [{ kind: 'heat-pump' as const, connectionPowerKw: sc.heatPump.connectionPowerKw }] : [];
  const fixedLoadsW = Math.round((sc.heatPump?.fixedLoadKw ?? 0) * 1000);
  return dimmedChargerCurrentA(minimumPowerW(sc.chargers.length, others), fixedLoadsW, VOLTAGE_V, PHASES);
}

const delayS = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 2 }) }, { weight: 2, arbitrary: fc.integer({ min: 3, max: 15 }) }, { weight: 1, arbitrary: fc.integer({ min: 16, max: 120 }) });
const sometimes = (weight: number) => fc.oneof({ weight: 10 - weight, arbitrary: fc.constant(false) }, { weight, arbitrary: fc.constant(true) });
const behaviour: fc.Arbitrary<MessageBehaviour> = fc.record({
  delayS,
  refuse: sometimes(1),
  lost: sometimes(3),
  appliedIfLost: fc.boolean(),
  duplicateAfterS: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 120 }) }),
});
const reliable: MessageBehaviour = { delayS: 0, refuse: false, lost: false, appliedIfLost: true, duplicateAfterS: null };
const charger: fc.Arbitrary<SimCharger> = fc.record({
  maxA: fc.constantFrom(16 as const, 32 as const),
  takes: fc.record({
    profile: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    'tx-default-profile': fc.boolean(),
    'charge-point-max-profile': fc.boolean(),
    'remote-stop': fc.boolean(),
    inoperative: fc.boolean(),
  }),
  otherwise: fc.constantFrom('Rejected' as const, 'NotSupported' as const, 'silence' as const),
  inoperativeApplies: fc.boolean(),
  // Half of them well behaved; the others with what the script draws.
  script: fc.oneof({ weight: 1, arbitrary: fc.constant([reliable]) }, { weight: 1, arbitrary: fc.array(behaviour, { minLength: 1, maxLength: 6 }) }),
});

const eventAtS = fc.integer({ min: 1, max: 240 });

export const scenarioArbitrary: fc.Arbitrary<Scenario> = fc
  .record({
    limitA: fc.integer({ min: 16, max: 100 }),
    readingEveryS: fc.constantFrom(1 as const, 10 as const),
    initialOtherFraction: fc.double({ min: 0, max: 0.8, noNaN: true }),
    // Mostly a load the site can carry; now and then more than the limit on its own.
    loadSteps: fc.array(fc.record({ atS: eventAtS, otherFraction: fc.oneof({ weight: 4, arbitrary: fc.double({ min: 0, max: 0.9, noNaN: true }) }, { weight: 1, arbitrary: fc.double({ min: 0.9, max: 1.1, noNaN: true }) }) }), { maxLength: 5 }),
    chargers: fc.array(charger, { minLength: 1, maxLength: 10 }),
    disconnects: fc.array(fc.record({ charger: fc.nat(9), atS: eventAtS, downS: fc.integer({ min: 1, max: 120 }) }), { maxLength: 2 }),
    restarts: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.record({ atS: eventAtS, reconnectAfterS: fc.integer({ min: 1, max: 60 }) }), { minLength: 1, maxLength: 2 }) }),
    // Half the sites dimmed once or twice, for seconds to two minutes (shorter and longer than the raise interval).
    dimmings: fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.record({ atS: eventAtS, lastsS: fc.integer({ min: 5, max: 120 }) }), { minLength: 1, maxLength: 2 }) }),
    // Now and then a heat pump, small (no controllable device, a fixed load all the same) or large (above 11 kW: 0.4 x its power is the first term).
    heatPump: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.record({ connectionPowerKw: fc.integer({ min: 3, max: 16 }), fixedFraction: fc.double({ min: 0, max: 1, noNaN: true }) }) }),
  })
  .map((r) => ({
    limitA: r.limitA,
    readingEveryS: r.readingEveryS,
    initialOtherA: Math.round(r.initialOtherFraction * r.limitA),
    loadSteps: [...r.loadSteps].sort((a, b) => a.atS - b.atS).map((s) => ({ atS: s.atS, otherA: Math.round(s.otherFraction * r.limitA) })),
    chargers: r.chargers,
    disconnects: r.disconnects.filter((d) => d.charger < r.chargers.length),
    restarts: r.restarts,
    dimmings: [...r.dimmings].sort((a, b) => a.atS - b.atS).filter((d, i, all) => i === 0 || d.atS > all[i - 1]!.atS + all[i - 1]!.lastsS),
    heatPump: r.heatPump === null ? null : { connectionPowerKw: r.heatPump.connectionPowerKw, fixedLoadKw: Math.round(r.heatPump.fixedFraction * r.heatPump.connectionPowerKw * 10) / 10 },
  }));

// ---------------------------------------------------------------------------------------
// The wire and the chargers (shared by both gateways).

interface Message {
  readonly id: number;
  readonly charger: number;
  readonly means: LimitMeans;
  readonly limitA: number;
  /** The gateway's clock when it went (ms): the attempt it answers. */
  readonly sentAtMs: number;
  /** The connection it went on: an answer on a closed connection is lost. */
  readonly epoch: number;
}

type Answer = 'Accepted' | 'Rejected' | 'NotSupported';

interface ChargerState {
  txProfileA: number | null;
  txDefaultA: number | null;
  cpMaxA: number | null;
  stopped: boolean;
  /** Messages received by means: the next one of a means takes the script's entry after the last one's (the script is how the charger handles each kind of call). */
  readonly received: Record<LimitMeans, number>;
  /** When it finishes the message it works on (s): the next waits for it. */
  busyUntilS: number;
}

/** The limit the charger really applies (A): 0 once stopped. */
const appliedA = (c: SimCharger, s: ChargerState): number => (s.stopped ? 0 : Math.min(c.maxA, s.cpMaxA ?? Infinity, s.txProfileA ?? s.txDefaultA ?? c.maxA));

interface Link {
  connected: boolean;
  epoch: number;
  inFlight: { readonly msg: Message; readonly timeoutAtS: number } | null;
  /** ocpp-rpc sends one call at a time per connection: the rest wait here. */
  readonly queue: Message[];
}

type SimEvent =
  | { readonly atS: number; readonly kind: 'work'; readonly msg: Message; readonly behaviour: MessageBehaviour }
  | { readonly atS: number; readonly kind: 'answer'; readonly msg: Message; readonly answer: Answer }
  | { readonly atS: number; readonly kind: 'disconnect' | 'reconnect'; readonly charger: number }
  | { readonly atS: number; readonly kind: 'restart' }
  | { readonly atS: number; readonly kind: 'dimming'; readonly dimmed: boolean }
  | { readonly atS: number; readonly kind: 'load'; readonly otherA: number };

/** What a gateway (BEFORE or AFTER) does; the world calls it. */
interface Gateway {
  /** The answer to the call in flight on the connection (ocpp-rpc resolves it). */
  answered(msg: Message, answer: Answer, nowS: number): void;
  /** An answer to no call in flight (late, duplicated): ocpp-rpc drops it. */
  stray(msg: Message, answer: Answer, nowS: number): void;
  /** The call in flight timed out, or failed as its connection closed. */
  failed(msg: Message, why: 'timeout' | 'closed', nowS: number): void;
  disconnected(charger: number, nowS: number): void;
  reconnected(charger: number, nowS: number): void;
  restarted(nowS: number): void;
  /** The control box's contacts changed: the dimmed total now (A per phase), null when the dimming ended. */
  dimmed(dimmedA: number | null, nowS: number): void;
  /** The charger ended the car's transaction (StopTransaction). */
  stopped(charger: number, nowS: number): void;
  /** One second of the gateway's clock: `reading` is the site meter's other load when it was read this second. */
  tick(nowS: number, reading: number | null): void;
}

export interface RunResult {
  /** Over-limit ampere-seconds, all of them (also where the other load alone is above the limit). */
  readonly overAs: number;
  /** Over-limit ampere-seconds where the site can be brought under (as overAfterGraceAs), the graces included. */
  readonly overBringableAs: number;
  /**
   * Over-limit ampere-seconds where the fleet should be within the limit by the scenario alone:
   * longer than the grace and the escalation ladder after anything outside the gateway changed
   * (a load step up, a disconnect, a reconnect, a restart), and the other load plus the maximum
   * of every charger that cannot be controlled (takes no applicable means that binds, never
   * answers in time, or is disconnected now) within the limit.
   */
  readonly overAfterGraceAs: number;
  /** AFTER only: the invariant's breaches (empty for BEFORE). */
  readonly violations: readonly string[];
  readonly sends: number;
  /** AFTER only: seconds after the grace where the invariant was checked (its precondition held). */
  readonly checkedS: number;
  /** AFTER only: limits confirmed by an escalation means, and connectors that left by a stop or Inoperative. */
  readonly escalated: number;
  /** Seconds dimmed, and the chargers' real limits above the dimmed total (A·s), as overAs, overBringableAs and overAfterGraceAs (counted where the chargers that cannot be controlled fit in the dimmed total, past the grace from the dimming's start too). */
  readonly dimmedS: number;
  readonly overDimmedAs: number;
  readonly overDimmedBringableAs: number;
  readonly overDimmedAfterGraceAs: number;
  /** AFTER only: dimmed seconds after the grace where the dimmed invariant was checked (its precondition held). */
  readonly dimmedCheckedS: number;
  /**
   * AFTER only: each dimming, and when every connector was first within its share (as
   * grid-control.ts confirms an event), s from its start; null: never while it lasted.
   * leftUnconfirmed: a connector whose car's transaction ended (a stop or Inoperative of the
   * ladder) before it was confirmed, which grid-control.ts keeps unconfirmed for good.
   */
  readonly dimmings: readonly { readonly lastsS: number; readonly confirmS: number | null; readonly leftUnconfirmed: boolean }[];
  /** AFTER only: raises sent after a dimming ended (each checked by the raise invariant). */
  readonly raisesAfterDimming: number;
  /** What each charger applies at the end of the scenario (A; 0 once stopped). */
  readonly endAppliedA: readonly number[];
}

const floor01 = (a: number) => Math.floor(a * 10 + 1e-9) / 10;
const departureMs = (i: number) => (i + 1) * 3_600_000;

/** Whether a charger can confirm a limit in time by its traits alone: an applicable means it takes that binds, some answer that arrives within the timeout, and on average it works a message faster than the timeout (else its backlog only grows). */
export function controllable(c: SimCharger): boolean {
  const means = (['profile', 'tx-default-profile', 'charge-point-max-profile', 'remote-stop', 'inoperative'] as const).filter((m) => c.takes[m] && (m !== 'inoperative' || c.inoperativeApplies) && m !== 'tx-default-profile');
  // It keeps up with one call per timeout on average, and some answer arrives in time.
  const meanDelayS = c.script.reduce((s, b) => s + b.delayS, 0) / c.script.length;
  return means.length > 0 && meanDelayS < CALL_TIMEOUT_S && c.script.some((b) => !b.refuse && !b.lost && b.delayS < CALL_TIMEOUT_S);
}

/**
 * Runs one scenario against one gateway, a second at a time. `trace` gets a line per second
 * (the load, what each charger applies, and for AFTER each connector's share, state and last
 * decision): how a counterexample fast-check prints is read.
 */
export function simulate(sc: Scenario, which: 'before' | 'after', rule: ControlRule = SIM_RULE, trace?: (line: string) => void): RunResult {
  const n = sc.chargers.length;
  const chargers: ChargerState[] = sc.chargers.map(() => ({ txProfileA: null, txDefaultA: null, cpMaxA: null, stopped: false, received: { profile: 0, 'tx-default-profile': 0, 'charge-point-max-profile': 0, 'remote-stop': 0, inoperative: 0 }, busyUntilS: 0 }));
  const links: Link[] = sc.chargers.map(() => ({ connected: true, epoch: 0, inFlight: null, queue: [] }));
  const events: SimEvent[] = [];
  let nextId = 1;
  let other = sc.initialOtherA;
  let reading = sc.initialOtherA;

  // Settled at the start: every charger holds the share of the first reading as its accepted TxProfile.
  const initialShares = shareSiteCurrent(sc.limitA - sc.initialOtherA, sc.chargers.map((c, i) => ({ key: String(i), maxCurrentA: c.maxA, minCurrentA: MIN_A, departureMs: departureMs(i) })));
  const initialA = sc.chargers.map((_, i) => floor01(initialShares.get(String(i))!));
  initialA.forEach((a, i) => (chargers[i]!.txProfileA = a));

  for (const s of sc.loadSteps) events.push({ atS: s.atS, kind: 'load', otherA: s.otherA });
  for (const d of sc.disconnects) {
    events.push({ atS: d.atS, kind: 'disconnect', charger: d.charger });
    events.push({ atS: d.atS + d.downS, kind: 'reconnect', charger: d.charger });
  }
  for (const r of sc.restarts) {
    events.push({ atS: r.atS, kind: 'restart' });
    for (let i = 0; i < n; i++) events.push({ atS: r.atS + r.reconnectAfterS + ((i * 7) % 13), kind: 'reconnect', charger: i });
  }
  for (const d of sc.dimmings) {
    events.push({ atS: d.atS, kind: 'dimming', dimmed: true });
    events.push({ atS: d.atS + d.lastsS, kind: 'dimming', dimmed: false });
  }
  const dimmedA = dimmedTotalA(sc);
  let dimmedNowA: number | null = null;
  let dimmedSinceS = -Infinity;

  // The gateway side of the wire.
  const wire = {
    send(msg: Omit<Message, 'id' | 'epoch'>, nowS: number): void {
      const link = links[msg.charger]!;
      if (!link.connected) return;
      const m: Message = { ...msg, id: nextId++, epoch: link.epoch };
      if (link.inFlight) link.queue.push(m);
      else transmit(m, nowS);
    },
    connected: (i: number) => links[i]!.connected,
  };
  function transmit(m: Message, nowS: number): void {
    const link = links[m.charger]!;
    link.inFlight = { msg: m, timeoutAtS: nowS + CALL_TIMEOUT_S };
    const c = chargers[m.charger]!;
    const script = sc.chargers[m.charger]!.script;
    const behaviour = script[c.received[m.means]++ % script.length]!;
    c.busyUntilS = Math.max(c.busyUntilS, nowS) + behaviour.delayS;
    events.push({ atS: c.busyUntilS, kind: 'work', msg: m, behaviour });
  }
  function nextCall(i: number, nowS: number): void {
    const link = links[i]!;
    link.inFlight = null;
    const m = link.queue.shift();
    if (m) transmit(m, nowS);
  }

  const after = which === 'after' ? afterGateway(sc, rule, wire, initialA) : null;
  const gateway: Gateway & { sends: number } = after ?? beforeGateway(sc, rule, wire, initialA);

  // The charger works one message: applies it if it takes it, answers (or not).
  function work(m: Message, b: MessageBehaviour, nowS: number): void {
    const spec = sc.chargers[m.charger]!;
    const c = chargers[m.charger]!;
    if (c.stopped) return; // Its transaction is over: it has nothing to say about this car any more.
    let answer: Answer | null;
    if (!spec.takes[m.means]) answer = spec.otherwise === 'silence' ? null : spec.otherwise;
    else if (b.refuse) answer = 'Rejected';
    else answer = 'Accepted';
    const applies = answer === 'Accepted' && (!b.lost || b.appliedIfLost);
    if (applies) {
      if (m.means === 'profile') c.txProfileA = m.limitA;
      else if (m.means === 'tx-default-profile') c.txDefaultA = m.limitA;
      else if (m.means === 'charge-point-max-profile') c.cpMaxA = m.limitA;
      else c.stopped = true;
    }
    if (answer !== null && !b.lost) {
      events.push({ atS: nowS, kind: 'answer', msg: m, answer });
      if (b.duplicateAfterS !== null) events.push({ atS: nowS + b.duplicateAfterS, kind: 'answer', msg: m, answer });
    }
    // The car's transaction ends: StopTransaction reaches the gateway now, or when the charger is back.
    if (c.stopped && links[m.charger]!.connected) gateway.stopped(m.charger, nowS);
  }

  const staticU = sc.chargers.map((c) => !controllable(c));
  let lastDisturbanceS = -Infinity;
  // AFTER's invariant holds from one reading, a call timeout and the deadline after a change
  // (the others then count whatever is not confirmed at its maximum); the figures printed for
  // both gateways allow the escalation ladder as well (a charger that takes only a later means
  // is brought under by it), and count only where the chargers that can never be controlled fit.
  const graceS = sc.readingEveryS + CALL_TIMEOUT_S + rule.lowerDeadlineMs / 1000 + 2;
  const ladderGraceS = graceS + ((LIMIT_MEANS.length - 1) * rule.escalationStepMs) / 1000;
  let overAs = 0;
  let overAfterGraceAs = 0;
  let overBringableAs = 0;
  let dimmedS = 0;
  let overDimmedAs = 0;
  let overDimmedBringableAs = 0;
  let overDimmedAfterGraceAs = 0;

  const endS = Math.min(SIM_S, Math.max(0, ...events.map((e) => e.atS)) + TAIL_S);
  for (let t = 0; t <= endS; t++) {
    // Everything due this second, in order of time (then of creation).
    for (;;) {
      let k = -1;
      for (let j = 0; j < events.length; j++) if (events[j]!.atS <= t && (k < 0 || events[j]!.atS < events[k]!.atS)) k = j;
      if (k < 0) break;
      const e = events.splice(k, 1)[0]!;
      switch (e.kind) {
        case 'load':
          if (e.otherA > other) lastDisturbanceS = t;
          other = e.otherA;
          break;
        case 'work':
          work(e.msg, e.behaviour, t);
          break;
        case 'answer': {
          const link = links[e.msg.charger]!;
          if (!link.connected || link.epoch !== e.msg.epoch) break; // Its connection is gone.
          if (link.inFlight?.msg.id === e.msg.id) {
            gateway.answered(e.msg, e.answer, t);
            nextCall(e.msg.charger, t);
          } else gateway.stray(e.msg, e.answer, t);
          break;
        }
        case 'disconnect':
        case 'restart': {
          const which = e.kind === 'restart' ? [...links.keys()] : [e.charger];
          for (const i of which) {
            const link = links[i]!;
            if (!link.connected) continue;
            link.connected = false;
            link.epoch++;
            const dropped = [...(link.inFlight ? [link.inFlight.msg] : []), ...link.queue];
            link.inFlight = null;
            link.queue.length = 0;
            if (e.kind === 'disconnect') {
              for (const m of dropped) gateway.failed(m, 'closed', t);
              gateway.disconnected(i, t);
            }
          }
          if (e.kind === 'restart') gateway.restarted(t);
          lastDisturbanceS = t;
          break;
        }
        case 'reconnect':
          if (links[e.charger]!.connected) break;
          links[e.charger]!.connected = true;
          gateway.reconnected(e.charger, t);
          if (chargers[e.charger]!.stopped) gateway.stopped(e.charger, t);
          lastDisturbanceS = t;
          break;
        case 'dimming':
          // The contacts reach the gateway at once (grid.limit-changed checks every connector): its share falls from now.
          dimmedNowA = e.dimmed ? dimmedA : null;
          if (e.dimmed) dimmedSinceS = t;
          gateway.dimmed(dimmedNowA, t);
          break;
      }
    }
    // Calls the charger did not answer in time.
    for (let i = 0; i < n; i++) {
      const f = links[i]!.inFlight;
      if (f && f.timeoutAtS <= t) {
        gateway.failed(f.msg, 'timeout', t);
        nextCall(i, t);
      }
    }
    if (t % sc.readingEveryS === 0) reading = other;
    gateway.tick(t, t % sc.readingEveryS === 0 ? reading : null);

    let sumA = 0;
    for (let i = 0; i < n; i++) sumA += appliedA(sc.chargers[i]!, chargers[i]!);
    const overA = Math.max(0, other + sumA - sc.limitA);
    trace?.(`t=${t} other=${other} reading=${reading}${dimmedNowA === null ? '' : ` dimmed=${dimmedNowA}`} applied=${chargers.map((c, i) => appliedA(sc.chargers[i]!, c)).join('/')} over=${overA} sinceDisturbance=${t - lastDisturbanceS}${after ? ` ${after.describe()}` : ''}`);
    overAs += overA;
    // What no gateway can lower now: chargers that can never be controlled, and those away.
    const uncontrolledA = sc.chargers.reduce((s, c, i) => s + ((staticU[i] || !links[i]!.connected) && !chargers[i]!.stopped ? c.maxA : 0), 0);
    if (other + uncontrolledA <= sc.limitA) {
      overBringableAs += overA;
      if (t - lastDisturbanceS > ladderGraceS) overAfterGraceAs += overA;
    }
    if (dimmedNowA !== null) {
      // The chargers' real limits together above the dimmed total, counted as the fuse's: where
      // what no gateway can lower fits in it, past the grace and the ladder from the dimming's start too.
      const overDimmedA = Math.max(0, sumA - dimmedNowA);
      dimmedS++;
      overDimmedAs += overDimmedA;
      if (uncontrolledA <= dimmedNowA) {
        overDimmedBringableAs += overDimmedA;
        if (t - Math.max(lastDisturbanceS, dimmedSinceS) > ladderGraceS) overDimmedAfterGraceAs += overDimmedA;
      }
    }
    after?.check(t, other, chargers.map((c, i) => appliedA(sc.chargers[i]!, c)), t - lastDisturbanceS > graceS, dimmedNowA);
  }
  after?.dimmingEnded(endS);
  return {
    overAs,
    overBringableAs,
    overAfterGraceAs,
    violations: after?.violations ?? [],
    sends: gateway.sends,
    checkedS: after?.checkedS ?? 0,
    escalated: after?.escalated ?? 0,
    dimmedS,
    overDimmedAs,
    overDimmedBringableAs,
    overDimmedAfterGraceAs,
    dimmedCheckedS: after?.dimmedCheckedS ?? 0,
    dimmings: after?.dimmings ?? [],
    raisesAfterDimming: after?.raisesAfterDimming ?? 0,
    endAppliedA: chargers.map((c, i) => appliedA(sc.chargers[i]!, c)),
  };
}

interface Wire {
  send(msg: Omit<Message, 'id' | 'epoch'>, nowS: number): void;
  connected(i: number): boolean;
}

// ---------------------------------------------------------------------------------------
// AFTER: fuseCycle every second, acting on each 'send'.

interface AfterGateway extends Gateway {
  sends: number;
  readonly violations: string[];
  checkedS: number;
  escalated: number;
  dimmedCheckedS: number;
  readonly dimmings: { lastsS: number; confirmS: number | null; leftUnconfirmed: boolean }[];
  raisesAfterDimming: number;
  /** `dimmedA`: the dimmed total in force in the world now (null: not dimmed). */
  check(t: number, otherA: number, appliedA: readonly number[], pastGrace: boolean, dimmedA: number | null): void;
  /** The scenario ends: a dimming still on is recorded as it stands. */
  dimmingEnded(nowS: number): void;
  /** Each connector's share, state and last action, for a trace. */
  describe(): string;
}

function afterGateway(sc: Scenario, rule: ControlRule, wire: Wire, initialA: readonly number[]): AfterGateway {
  const n = sc.chargers.length;
  let states: ConnectorControl[] = initialA.map((a) => ({ ...initialControl('not-confirmed'), inForce: { known: true, limitA: a, sinceMs: 0, means: 'profile' } }));
  const inFleet = sc.chargers.map(() => true);
  let reading = sc.initialOtherA;
  // From the last cycle: each connector's share and whether the others counted it at its maximum.
  const shareA: number[] = initialA.slice();
  const counted: boolean[] = sc.chargers.map(() => false);
  // When each connector's share last fell (the others counted one at its maximum, the load rose,
  // or fell so that one more connector gets its minimum): its lowering has the deadline from then.
  const shareFellS: number[] = sc.chargers.map(() => -Infinity);
  const lastAction: string[] = sc.chargers.map(() => '');
  const health: ControlHealth[] = sc.chargers.map(() => 'settled');
  // The dimmed total the gateway shares (grid control's limit in force), and the dimming event
  // under way: each connector's first second within its share (grid-control.ts confirm()).
  let dimmedA: number | null = null;
  let event: { readonly startS: number; readonly tracked: Map<number, number | null>; confirmedAtS: number | null } | null = null;
  let dimmingEndedBefore = false;
  const applicable = sc.chargers.map((c) => (m: LimitMeans) => m !== 'inoperative' || c.inoperativeApplies);
  const confirmedBy = (m: Message): number | null => (m.means === 'tx-default-profile' ? null : m.means === 'profile' || m.means === 'charge-point-max-profile' ? m.limitA : 0);
  const answer = (m: Message, a: Answer, nowS: number) => {
    states[m.charger] = attemptAnswered(states[m.charger]!, { sentAtMs: m.sentAtMs, outcome: a === 'Accepted' ? 'accepted' : 'refused', answer: a, atMs: nowS * 1000, confirmedA: a === 'Accepted' ? confirmedBy(m) : null });
    const now = states[m.charger]!;
    if (a === 'Accepted' && m.means !== 'profile' && now.attempt?.sentAtMs === m.sentAtMs && now.attempt.answeredAtMs === nowS * 1000) g.escalated++;
  };
  const g: AfterGateway = {
    sends: 0,
    violations: [],
    checkedS: 0,
    escalated: 0,
    dimmedCheckedS: 0,
    dimmings: [],
    raisesAfterDimming: 0,
    answered: answer,
    // Stricter than ocpp-rpc, which drops these: the rule itself must ignore an answer to an attempt no longer in flight.
    stray: answer,
    failed(m, why, nowS) {
      if (why === 'timeout') states[m.charger] = attemptAnswered(states[m.charger]!, { sentAtMs: m.sentAtMs, outcome: 'unanswered', answer: 'timeout', atMs: nowS * 1000, confirmedA: null });
    },
    disconnected(i) {
      states[i] = forgotten(states[i]!, 'disconnected');
    },
    reconnected() {},
    restarted() {
      states = states.map(() => initialControl('restarted'));
    },
    stopped(i) {
      inFleet[i] = false;
    },
    dimmed(a, nowS) {
      if (a !== null && event === null) event = { startS: nowS, tracked: new Map(), confirmedAtS: null };
      if (a === null) g.dimmingEnded(nowS);
      dimmedA = a;
    },
    dimmingEnded(nowS) {
      if (event === null) return;
      const leftUnconfirmed = [...event.tracked].some(([i, at]) => at === null && !inFleet[i]);
      g.dimmings.push({ lastsS: nowS - event.startS, confirmS: event.confirmedAtS === null ? null : event.confirmedAtS - event.startS, leftUnconfirmed });
      event = null;
      dimmingEndedBefore = true;
    },
    tick(nowS, r) {
      if (r !== null) reading = r;
      const conns: CycleConnector[] = [];
      for (let i = 0; i < n; i++) {
        if (!inFleet[i]) continue;
        conns.push({ key: String(i), maxA: sc.chargers[i]!.maxA, minA: MIN_A, departureMs: departureMs(i), state: states[i]!, connected: wire.connected(i), applicable: applicable[i]! });
      }
      const out = fuseCycle({ limitA: sc.limitA, otherLoadA: reading, dimmedA }, conns, nowS * 1000, rule);
      for (const [key, res] of out) {
        const i = Number(key);
        let state = res.decision.state;
        if (res.shareA < shareA[i]! - 1e-9) shareFellS[i] = nowS;
        shareA[i] = res.shareA;
        counted[i] = res.countedA !== null;
        health[i] = res.decision.health;
        const action = res.decision.action;
        lastAction[i] = action.kind === 'send' ? `send ${action.direction} ${action.means}` : `hold: ${action.why}`;
        if (action.kind === 'send') {
          const limitA = action.means === 'remote-stop' || action.means === 'inoperative' ? 0 : floor01(res.shareA);
          if (action.direction === 'raise') {
            if (dimmingEndedBefore && dimmedA === null) g.raisesAfterDimming++;
            const was = inForceA(states[i]!, sc.chargers[i]!.maxA);
            const sinceMs = states[i]!.lastChangeMs === null ? Infinity : nowS * 1000 - states[i]!.lastChangeMs!;
            if (limitA > res.shareA + 1e-9 || limitA < was + rule.guard.raiseHysteresisA - ROUNDING_A - 0.1 || !states[i]!.inForce.known || sinceMs < rule.guard.raiseIntervalMs)
              g.violations.push(`t=${nowS}s connector ${i}: raise to ${limitA} A from ${was} A with the share at ${res.shareA} A`);
          }
          state = attemptSent(state, { limitA, means: action.means, atMs: nowS * 1000 });
          wire.send({ charger: i, means: action.means, limitA, sentAtMs: nowS * 1000 }, nowS);
          g.sends++;
        }
        states[i] = state;
      }
    },
    describe: () => states.map((s, i) => `[${i}${inFleet[i] ? '' : ' gone'} ${health[i]} share ${shareA[i]} ${s.inForce.known ? `${s.inForce.limitA} A by ${s.inForce.means}` : `unknown (${s.inForce.why})`} ${s.attempt ? `${s.attempt.means} ${s.attempt.limitA} A ${s.attempt.outcome}` : '-'} esc ${s.escalation} ${lastAction[i]}]`).join(' '),
    check(t, otherA, applied, pastGrace, dimmedNowA) {
      // The dimming event: a connector is confirmed the first second it is settled with its
      // limit in force (what its charger accepted) within its share; the event once all are.
      if (event !== null) {
        for (let i = 0; i < n; i++) {
          if (!inFleet[i]) continue;
          const s = states[i]!;
          const within = health[i] === 'settled' && s.inForce.known && inForceA(s, sc.chargers[i]!.maxA) <= shareA[i]! + 0.01;
          event.tracked.set(i, event.tracked.get(i) ?? (within ? t : null));
        }
        const at = [...event.tracked.values()];
        if (event.confirmedAtS === null && at.every((a) => a !== null)) event.confirmedAtS = Math.max(event.startS, ...(at as number[]));
      }
      // Always: a charger never holds more than the gateway counts it at (its confirmed limit, its maximum when unknown) or has in flight.
      for (let i = 0; i < n; i++) {
        if (!inFleet[i]) continue;
        const s = states[i]!;
        const believedA = Math.max(inForceA(s, sc.chargers[i]!.maxA), s.attempt?.outcome === 'in-flight' ? s.attempt.limitA : 0);
        if (applied[i]! > believedA + 1e-9 && g.violations.length < 20) g.violations.push(`t=${t}s connector ${i}: applies ${applied[i]} A, the gateway counts ${believedA} A (${JSON.stringify(s)})`);
      }
      // After the grace, and longer than the deadline (from an unanswered call's timeout) since any
      // connector's share fell (a dimming's start is such a fall): where the others can absorb
      // every connector counted at its maximum, the site is within its limit; while dimmed, where
      // the dimmed total can absorb them, the chargers together are within it; and where every
      // limit in force can be met, every connector not counted so holds no more than its share.
      const windowS = CALL_TIMEOUT_S + rule.lowerDeadlineMs / 1000 + 2;
      if (!pastGrace || shareFellS.some((s, i) => inFleet[i] && t - s <= windowS)) return;
      let countedMaxA = 0;
      for (let i = 0; i < n; i++) if (inFleet[i] && counted[i]) countedMaxA += sc.chargers[i]!.maxA;
      const siteMet = otherA + countedMaxA <= sc.limitA;
      const dimmedMet = dimmedNowA !== null && countedMaxA <= dimmedNowA;
      const sumA = applied.reduce((a, b) => a + b, 0);
      if (dimmedMet) {
        g.dimmedCheckedS++;
        if (sumA > dimmedNowA + 1e-9 && g.violations.length < 20) g.violations.push(`t=${t}s chargers at ${sumA} A (${applied.join('/')}) over the dimmed total ${dimmedNowA} A`);
      }
      if (!siteMet) return;
      g.checkedS++;
      if (otherA + sumA > sc.limitA + 1e-9 && g.violations.length < 20) g.violations.push(`t=${t}s site at ${otherA + sumA} A (other ${otherA} A, chargers ${applied.join('/')}) over ${sc.limitA} A`);
      if (dimmedNowA !== null && !dimmedMet) return;
      for (let i = 0; i < n; i++) {
        if (inFleet[i] && !counted[i] && applied[i]! > shareA[i]! + 1e-9 && g.violations.length < 20) g.violations.push(`t=${t}s connector ${i}: applies ${applied[i]} A over its share ${shareA[i]} A`);
      }
    },
  };
  return g;
}

// ---------------------------------------------------------------------------------------
// BEFORE: today's site follower and profile dispatcher.

const PURPOSES = ['profile', 'tx-default-profile', 'charge-point-max-profile'] as const satisfies readonly LimitMeans[];

function beforeGateway(sc: Scenario, rule: ControlRule, wire: Wire, initialA: readonly number[]): Gateway & { sends: number } {
  const n = sc.chargers.length;
  // The stored answer of the latest SetChargingProfile (charging-profiles store) and the follower's state (charging-follow-state store): both survive a restart.
  const record = initialA.map((a) => ({ status: 'Accepted', plannedAtS: -1, limitA: a }));
  const follow = sc.chargers.map(() => ({ siteChangedAtS: null as number | null, siteCapA: null as number | null }));
  // Refusals the dispatcher remembers per charger (strategy ladder, ocpp.refusal_retry_h: for good here).
  const refused = sc.chargers.map(() => new Set<LimitMeans>());
  let reading = sc.initialOtherA;
  const shares = (): Map<string, number> => shareSiteCurrent(sc.limitA - Math.max(0, reading), sc.chargers.map((c, i) => ({ key: String(i), maxCurrentA: c.maxA, minCurrentA: MIN_A, departureMs: departureMs(i) })));
  const g = {
    sends: 0,
    /** The dispatcher: the plan by the first purpose the charger has not refused. */
    dispatch(i: number, limitA: number, plannedAtS: number, nowS: number): void {
      const means = PURPOSES.find((p) => !refused[i]!.has(p));
      if (!means || !wire.connected(i)) return;
      wire.send({ charger: i, means, limitA, sentAtMs: plannedAtS * 1000 }, nowS);
      g.sends++;
    },
    answered(m: Message, a: Answer, nowS: number): void {
      const plannedAtS = m.sentAtMs / 1000;
      if (a !== 'Accepted') {
        // A refusal: the next strategy at once (the dispatcher's ladder), the refusal stored.
        record[m.charger] = { status: a, plannedAtS, limitA: m.limitA };
        // NotSupported refuses profiles outright (charging-strategy.ts refusesAllProfiles): no purpose is tried any more.
        for (const p of a === 'NotSupported' ? PURPOSES : [m.means]) refused[m.charger]!.add(p);
        g.dispatch(m.charger, m.limitA, plannedAtS, nowS);
        return;
      }
      record[m.charger] = { status: a, plannedAtS, limitA: m.limitA };
    },
    stray(): void {},
    failed(m: Message, why: 'timeout' | 'closed'): void {
      void why;
      record[m.charger] = { status: 'error', plannedAtS: m.sentAtMs / 1000, limitA: m.limitA };
    },
    disconnected(): void {},
    /** A charger that connects (or boots) gets its plan again (applyStoredTargets): the share now, no margin. */
    reconnected(i: number, nowS: number): void {
      g.dispatch(i, floor01(Math.min(sc.chargers[i]!.maxA, shares().get(String(i))!)), nowS, nowS);
    },
    restarted(): void {},
    stopped(): void {},
    /** Today's follower knows no dimming. */
    dimmed(): void {},
    tick(nowS: number, r: number | null): void {
      if (r === null) return; // The follower checks on each site-meter reading only (its timer is for a silent meter).
      reading = r;
      const sh = shares();
      for (let i = 0; i < n; i++) {
        const rec = record[i]!;
        if (rec.status !== 'Accepted') continue;
        const st = follow[i]!;
        const pending = st.siteChangedAtS !== null && st.siteChangedAtS > rec.plannedAtS && st.siteCapA !== null;
        const inForce = pending ? st.siteCapA! : rec.limitA;
        const share = sh.get(String(i))!;
        const maxA = sc.chargers[i]!.maxA;
        const freshPlanA = Math.min(maxA, share);
        const verdict = siteGuardDecision({ inForceA: inForce, shareA: share, freshPlanA, lastSiteChangeMs: st.siteChangedAtS === null ? null : st.siteChangedAtS * 1000, nowMs: nowS * 1000 }, rule.guard);
        if (verdict === 'hold') continue;
        // target-plan.ts withMargin: half the hysteresis under the share, not under the minimum.
        const margin = rule.guard.raiseHysteresisA / 2;
        const sentA = floor01(Math.min(maxA, share >= MIN_A ? Math.max(MIN_A, share - margin) : share));
        follow[i] = { siteChangedAtS: nowS, siteCapA: sentA };
        g.dispatch(i, sentA, nowS, nowS);
      }
    },
  };
  return g;
}
