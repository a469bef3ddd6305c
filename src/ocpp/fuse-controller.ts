// The fuse controller (docs/planning.md "The fuse controller"): one controller per connector
// that holds a plan on the site, keeping the site within site.limit_a whatever its charger
// does. Each connector's three facts — the limit wanted (its plan under its share of the
// site), the limit in force (only what the charger confirmed; unknown counts as its
// maximum) and the last attempt — are compared on every site-meter reading (sample.taken,
// wired in daemon.ts) and on a timer, by the pure rule of planning/connector-control.ts:
// a lowering goes out at once and is sent again after a bounded back-off until confirmed;
// past site.lower_deadline_s it escalates (TxDefaultProfile, ChargePointMaxProfile,
// RemoteStopTransaction, ChangeAvailability Inoperative), each logged, counted in /metrics
// and shown on the status page. Level-triggered: a lost answer, a reconnect or a gateway
// restart is corrected by the next cycle with no special case. While a connector's limit is
// unknown or its lowering overdue, the planner counts it at its maximum in every other
// connector's share (planning/target-plan.ts useCounting), so the others absorb it at once.
// The sends go through the profile dispatcher (its strategy ladder, or the escalation means),
// which reports every attempt and answer back here (LimitObserver).
//
// A charger without profiles (remote-start-stop) has no limit to lower: its running car draws
// the connector's configured current; it is stopped when the site leaves it less and started
// again once the site has room (checkRemoteStartStop, checkRemoteResume). A silent site meter
// is noticed on the timer: once its reading is older than site.max_reading_age_s the plans
// fall back to the minimum current (the planner's stale rule), lowered the same way.
import { Counter, Gauge, type Registry } from 'prom-client';
import { uncountedChargers } from '../config/load.js';
import type { AppContext } from '../context.js';
import type { MeterSample } from '../domain.js';
import type { Module } from '../lifecycle.js';
import type { ComponentHealth, FuseConnectorView, ModuleViews } from '../ops/observability/views.js';
import { attemptAnswered, attemptSent, decideControl, forgotten, countedA as controlCountedA, initialControl, inForceA as controlInForceA, type ConnectorControl, type ControlHealth, type ControlRule, type LimitMeans, type UnknownWhy } from '../planning/connector-control.js';
import { siteGuardRuleFrom, siteResumeDecision, type SiteGuardRule } from '../planning/site-guard.js';
import type { ChargingServices } from '../planning/charging-services.js';
import type { ConnectorCounting, TargetPlanner, TargetPlan } from '../planning/target-plan.js';
import { isChargeNow } from '../planning/charge-now.js';
import type { ChargingStrategyStore } from '../store/charging-strategies.js';
import type { FollowStateStore } from '../store/charging-follow-state.js';
import type { ChargingProfileStore } from '../store/charging-profiles.js';
import type { ChargingTargetStore, ChargingTarget } from '../store/charging-targets.js';
import type { ConnectorDraws as ConnectorDrawStore } from '../planning/connector-draws.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import { scheduleSegments, type SetChargingProfileRequest } from './charging-profile.js';
import type { LimitAnswered, LimitObserver, LimitSender, LimitSent } from './limit-attempts.js';

/** How often the timer looks while some connector is not settled (retries, deadlines, escalation steps). */
const UNSETTLED_TICK_MS = 1000;
/** A plan.updated the controller emitted whose send the dispatcher has not reported yet counts as in flight this long. */
const HANDOFF_MS = 2000;

/** One connector's controller: its three facts and what the status page shows of it. */
interface Controlled {
  readonly chargePointId: string;
  readonly connectorId: number;
  transactionId: number | null;
  state: ConnectorControl;
  /** The profile whose Accepted answer put the limit in force (its rest from now is the limit in force), with the charger's phases and voltage. */
  confirmed: { request: SetChargingProfileRequest; charger: { phases: number; voltageV: number } } | null;
  /** The request of the attempt in flight, kept to become `confirmed` when it binds. */
  sending: SetChargingProfileRequest | null;
  maxA: number;
  phases: number;
  voltageV: number;
  health: ControlHealth;
  why: string;
  shareA: number | null;
  /** A plan.updated emitted for it, not yet reported sent by the dispatcher (gateway time). */
  handedOffAtMs: number | null;
  /** A ChargePointMaxProfile an escalation set, cleared once its own profile holds again. */
  maxProfileSet: boolean;
  /** Set Inoperative by an escalation: it stays so until an operator makes it Operative (docs/chargers.md). */
  inoperative: boolean;
  lastEscalation: { means: LimitMeans; atMs: number; why: string } | null;
  /** Controlled with a charge-now plan (no target in force, planning/charge-now.ts). */
  chargeNow: boolean;
  /** Whether any limit of ours was sent in this transaction (a charge-now connector without one holds the charger's own maximum). */
  limitedInTransaction: boolean;
}

const keyOf = (chargePointId: string, connectorId: number) => `${chargePointId}\u0000${connectorId}`;

export class FuseController implements Module, ConnectorCounting, LimitObserver {
  readonly name = 'fuse-controller';
  /** Cars with no target share the site through it (planning/charge-now.ts): it lowers them. */
  readonly controlsChargeNow = true;
  private readonly targets: ChargingTargetStore;
  private readonly profiles: ChargingProfileStore;
  private readonly draws: ConnectorDrawStore;
  private readonly state: FollowStateStore;
  private readonly strategies: ChargingStrategyStore;
  private readonly planner: TargetPlanner;
  private readonly writes: StoreWriteQueue;
  private readonly controlled = new Map<string, Controlled>();
  readonly views: ModuleViews = { fuse: () => this.connectorViews(), health: { fuse: () => this.health() } };
  private readonly escalations: Counter<'means'>;
  private readonly answers: Counter<'means' | 'outcome'>;
  private timer?: NodeJS.Timeout;
  private lastSampleMs: number | null = null;
  private lastSlowCheckMs = -Infinity;
  private started = false;

  constructor(
    private readonly ctx: Pick<AppContext, 'clock' | 'events' | 'logger' | 'config'>,
    charging: ChargingServices,
    private readonly sender: LimitSender,
    /** Whether the charger is connected now. */
    private readonly connected: (chargePointId: string) => boolean,
    metrics: Registry,
  ) {
    const { stores } = charging;
    this.targets = stores.targets;
    this.profiles = stores.profiles;
    this.draws = stores.draws;
    this.state = stores.follow;
    this.strategies = stores.strategies;
    this.planner = charging.planner;
    this.writes = charging.writes;
    this.escalations = new Counter({ name: 'metergate_fuse_escalations_total', help: 'Escalations of a lowering the charger did not confirm within site.lower_deadline_s, by the means sent (tx-default-profile, charge-point-max-profile, remote-stop, inoperative)', labelNames: ['means'] as const, registers: [metrics] });
    this.answers = new Counter({ name: 'metergate_fuse_attempt_answers_total', help: "Answers to the calls that put a connector's limit in force, by means and outcome (accepted, refused, unanswered)", labelNames: ['means', 'outcome'] as const, registers: [metrics] });
    const views = () => this.connectorViews();
    new Gauge({
      name: 'metergate_fuse_connectors',
      help: 'Connectors under the fuse controller by health: settled, lowering (above their share, within the deadline), escalating, uncontrollable',
      labelNames: ['health'] as const,
      registers: [metrics],
      collect() {
        this.reset();
        for (const h of ['settled', 'lowering', 'escalating', 'uncontrollable'] as const) this.set({ health: h }, views().filter((v) => v.health === h).length);
      },
    });
    charging.planner.useCounting(this);
  }

  private get siteRule(): SiteGuardRule {
    return siteGuardRuleFrom(this.ctx.config.site).rule;
  }

  private get rule(): ControlRule {
    const site = this.ctx.config.site;
    return { lowerDeadlineMs: site.lower_deadline_s * 1000, escalationStepMs: site.escalation_step_s * 1000, retryMinMs: 1000, retryMaxMs: 8000, guard: this.siteRule };
  }

  async start(): Promise<void> {
    const { config } = this.ctx;
    this.started = true;
    const { raised } = siteGuardRuleFrom(config.site);
    if (raised.length > 0) this.ctx.logger.warn({ raised }, 'site raise settings below their floor are taken at the floor (docs/planning.md)');
    if (config.site.uncounted_chargers === 'allow') {
      const uncounted = uncountedChargers({ ...config, site: { ...config.site, uncounted_chargers: 'refuse' } });
      if (uncounted.length > 0) this.ctx.logger.warn({ problems: uncounted }, 'site.limit_a is not a ceiling for every charger (site.uncounted_chargers: allow): a car on a charger without its connectors listed is not counted');
    }
    // A silent meter sends no samples: its staleness is noticed here. Without a meter nothing
    // else raises a connector again once a car has left the site. While a connector is not
    // settled (a retry, a deadline or an escalation step due) every second.
    const maxAgeMs = config.site.max_reading_age_s * 1000;
    const slowMs = Math.max(1000, maxAgeMs / 2);
    this.timer = setInterval(() => {
      const nowMs = this.ctx.clock.now();
      const silent = config.site.meter === undefined || this.lastSampleMs === null || nowMs - this.lastSampleMs > maxAgeMs;
      if (this.unsettled(nowMs) || (silent && nowMs - this.lastSlowCheckMs >= slowMs)) {
        this.lastSlowCheckMs = nowMs;
        this.check();
      }
    }, UNSETTLED_TICK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
  }

  /** A sample of any meter (sample.taken): the site meter's checks every planned connector. */
  sampleTaken(sample: MeterSample): void {
    if (sample.resourceId !== this.ctx.config.site.meter) return;
    this.lastSampleMs = Math.max(this.lastSampleMs ?? -Infinity, sample.sampledAtMs);
    this.check();
  }

  /**
   * Who shares the site may have changed (a transaction started, a connector got a new plan,
   * which is not this controller's own): every other planned connector is checked at once.
   */
  sharingChanged(e: { readonly chargePointId: string; readonly connectorId: number }): void {
    this.check(e);
  }

  /** The charger's connection opened or closed: what its connectors hold is unknown until confirmed again. */
  connectionChanged(chargePointId: string, why: 'disconnected' | 'not-confirmed'): void {
    for (const c of this.controlled.values()) {
      if (c.chargePointId !== chargePointId) continue;
      c.state = forgotten(c.state, why);
      c.confirmed = null;
      c.sending = null;
      c.handedOffAtMs = null;
    }
  }

  /**
   * A connector's status (charger.connector-status): one set Inoperative by an escalation that
   * is available again (an operator made it Operative, or the charger rebooted) is no longer
   * held against /healthz.
   */
  connectorStatus(e: { readonly chargePointId: string; readonly connectorId: number; readonly status: string }): void {
    if (e.status === 'Unavailable' || e.status === 'Faulted') return;
    for (const c of this.controlled.values()) {
      if (c.chargePointId !== e.chargePointId || (e.connectorId !== 0 && c.connectorId !== e.connectorId) || !c.inoperative) continue;
      c.inoperative = false;
      this.ctx.logger.info({ charge_point_id: c.chargePointId, connector_id: c.connectorId, status: e.status }, 'connector set Inoperative for the fuse is available again');
    }
  }

  // --- ConnectorCounting (the planner asks while sharing the site) ---

  countedA(chargePointId: string, connectorId: number, openTransactionId: number | null, nowMs: number): number | null {
    const c = this.controlled.get(keyOf(chargePointId, connectorId));
    // Not controlled yet (no transaction seen, or just restarted): shared as usual until its first cycle, which follows at once.
    if (!c) return null;
    if (c.transactionId !== openTransactionId) return null;
    return controlCountedA(c.state, c.maxA, nowMs, this.rule);
  }

  // --- LimitObserver (the dispatcher reports every call for a connector's limit) ---

  limitSent(e: LimitSent): void {
    const c = this.entry(e.chargePointId, e.connectorId, e.transactionId);
    if (!c) return;
    const limitA = e.request === null ? 0 : restMaxCurrentA(e.request, { phases: c.phases, voltageV: c.voltageV }, e.atMs);
    c.state = attemptSent(c.state, { limitA, means: e.means, atMs: e.atMs, firstOfChargeNow: c.chargeNow && !c.limitedInTransaction });
    c.limitedInTransaction = true;
    c.sending = e.request;
    c.handedOffAtMs = null;
  }

  limitAnswered(e: LimitAnswered): void {
    const c = this.controlled.get(keyOf(e.chargePointId, e.connectorId));
    if (!c) return;
    const attempt = c.state.attempt;
    if (!attempt || attempt.sentAtMs !== e.sentAtMs || attempt.outcome !== 'in-flight') return;
    this.answers.inc({ means: attempt.means, outcome: e.outcome });
    const binds = e.outcome === 'accepted' && e.binds;
    c.state = attemptAnswered(c.state, { sentAtMs: e.sentAtMs, outcome: e.outcome, answer: e.answer, atMs: e.atMs, confirmedA: binds ? attempt.limitA : null });
    if (binds) {
      c.confirmed = c.sending ? { request: c.sending, charger: { phases: c.phases, voltageV: c.voltageV } } : null;
      if (attempt.means === 'charge-point-max-profile') c.maxProfileSet = true;
      if (attempt.means === 'inoperative') c.inoperative = true;
      // Its own profile holds again: the charger-wide cap an escalation set is cleared.
      if (attempt.means === 'profile' && c.maxProfileSet) {
        c.maxProfileSet = false;
        void this.sender.clearEscalationProfile(c.chargePointId, c.connectorId);
      }
    } else if (e.outcome !== 'accepted') {
      c.confirmed = null;
      this.ctx.logger.warn({ charge_point_id: c.chargePointId, connector_id: c.connectorId, means: attempt.means, outcome: e.outcome, answer: e.answer, limit_a: attempt.limitA }, 'charging limit not confirmed by the charger: counted at its maximum until it is');
    }
    c.sending = null;
  }

  /** Every controlled connector, for the status page, /healthz and /metrics. */
  connectorViews(): FuseConnectorView[] {
    const nowMs = this.ctx.clock.now();
    return [...this.controlled.values()].map((c) => ({
      charge_point_id: c.chargePointId,
      connector_id: c.connectorId,
      transaction_id: c.transactionId,
      health: c.health,
      why: c.why,
      share_a: c.shareA,
      in_force_a: c.state.inForce.known ? round2(controlInForceA(c.state, c.maxA)) : null,
      in_force_unknown: c.state.inForce.known ? null : c.state.inForce.why,
      counted_a: round2(controlCountedA(c.state, c.maxA, nowMs, this.rule) ?? controlInForceA(c.state, c.maxA)),
      last_attempt: c.state.attempt ? { means: c.state.attempt.means, outcome: c.state.attempt.outcome, answer: c.state.attempt.answer, sent_at: new Date(c.state.attempt.sentAtMs).toISOString() } : null,
      last_escalation: c.lastEscalation ? { means: c.lastEscalation.means, at: new Date(c.lastEscalation.atMs).toISOString(), why: c.lastEscalation.why } : null,
      inoperative_by_fuse: c.inoperative,
    }));
  }

  /** Connectors that cannot be brought within their share (or were set Inoperative for it): /healthz degraded, named by doctor. */
  problems(): FuseConnectorView[] {
    return this.connectorViews().filter((v) => v.health === 'uncontrollable' || v.inoperative_by_fuse);
  }

  /** degraded while a connector cannot be brought within its share, or was set Inoperative for it. */
  private health(): ComponentHealth {
    const problems = this.problems();
    const all = this.connectorViews();
    if (problems.length === 0) return { status: 'ok', reason: `${all.length} connector(s) under the fuse controller, ${all.filter((v) => v.health === 'settled').length} settled` };
    return {
      status: 'degraded',
      reason: problems
        .map((p) =>
          p.inoperative_by_fuse
            ? `${p.charge_point_id} connector ${p.connector_id} set Inoperative: it did not confirm a lower limit (fix the charger, then: metergate charger change-availability ${p.charge_point_id} --connector ${p.connector_id} --type operative)`
            : `${p.charge_point_id} connector ${p.connector_id} cannot be brought within its share of site.limit_a: ${p.why}`,
        )
        .join('; '),
    };
  }

  private unsettled(nowMs: number): boolean {
    for (const c of this.controlled.values()) {
      // Nothing can be sent to a charger that is away: its next connection starts a cycle (a transaction, a plan).
      if (c.transactionId === null || !this.connected(c.chargePointId)) continue;
      // A car with no target never limited holds its own maximum within its share: nothing to settle.
      if (c.chargeNow && !c.limitedInTransaction && c.health === 'settled') continue;
      if (c.health !== 'settled' || !c.state.inForce.known || c.state.attempt?.outcome === 'in-flight') return true;
      if (c.state.inForce.means !== 'profile' && nowMs - (c.state.lastChangeMs ?? 0) >= this.rule.escalationStepMs) return true;
    }
    return false;
  }

  /** The connector's controller, made when first needed; a new transaction starts it afresh (nothing of ours is in force for it). */
  private entry(chargePointId: string, connectorId: number, transactionId: number | null): Controlled | null {
    const key = keyOf(chargePointId, connectorId);
    let c = this.controlled.get(key);
    const ceiling = this.planner.ceilingOf(chargePointId, connectorId);
    if (!ceiling) return null;
    if (c && transactionId !== null && c.transactionId !== transactionId) {
      c.transactionId = transactionId;
      c.state = { ...initialControl('not-confirmed'), lastChangeMs: c.state.lastChangeMs };
      c.limitedInTransaction = false;
      c.confirmed = null;
      c.sending = null;
      c.handedOffAtMs = null;
    }
    if (!c) {
      c = {
        chargePointId,
        connectorId,
        transactionId,
        state: initialControl('restarted'),
        confirmed: null,
        sending: null,
        maxA: ceiling.maxCurrentA,
        phases: ceiling.phases,
        voltageV: ceiling.voltageV,
        health: 'settled',
        why: '',
        shareA: null,
        handedOffAtMs: null,
        maxProfileSet: false,
        inoperative: false,
        lastEscalation: null,
        chargeNow: false,
        limitedInTransaction: false,
      };
      this.controlled.set(key, c);
    }
    return c;
  }

  /** Compares every planned connector's limit in force (but `except`'s) with what the site leaves it now, and acts. */
  check(except?: { readonly chargePointId: string; readonly connectorId: number }): void {
    if (!this.started) return;
    const nowMs = this.ctx.clock.now();
    let targets: ChargingTarget[];
    try {
      targets = this.targets.upcoming(nowMs);
    } catch (err) {
      // Also run from a timer: an error here (a store that cannot be read) must not escape it. Checked again on the next reading.
      this.ctx.logger.error({ err }, 'site load check failed');
      return;
    }
    // At most one stopped car is started again per check: the next check counts it (restart pending) among the others.
    const once = { resumed: false };
    for (const target of targets) {
      if (except && target.chargePointId === except.chargePointId && target.connectorId === except.connectorId) continue;
      // A connector that is not configured is never planned (planning/ceilings.ts).
      if (!this.planner.bounded(target)) continue;
      try {
        this.checkConnector(target, targets, nowMs, once);
      } catch (err) {
        this.ctx.logger.error({ err, charge_point_id: target.chargePointId, connector_id: target.connectorId }, 'site load check failed');
      }
    }
    // Cars charging with no target: controlled with a charge-now plan (planning/charge-now.ts). Never
    // skipped as `except`: nothing else sends them anything when their transaction starts.
    try {
      for (const { target, transactionId } of this.planner.chargeNowTargets(nowMs, targets)) this.control(target, transactionId, nowMs);
    } catch (err) {
      this.ctx.logger.error({ err }, 'site load check of cars without a target failed');
    }
    // Controllers of connectors whose transaction ended (and that nothing holds Inoperative) are done.
    for (const [key, c] of this.controlled) {
      if (c.inoperative || c.state.attempt?.outcome === 'in-flight') continue;
      if (this.draws.openTransactionId(c.chargePointId, c.connectorId) === null) this.controlled.delete(key);
    }
  }

  private checkConnector(target: ChargingTarget, all: readonly ChargingTarget[], nowMs: number, once: { resumed: boolean }): void {
    const { chargePointId, connectorId } = target;
    const transactionId = this.draws.openTransactionId(chargePointId, connectorId);
    const strategy = this.strategies.get(chargePointId, connectorId);
    if (transactionId === null) {
      // A car the gateway stopped for the site (remote-start-stop; site cap 0, stored with the stop) has no transaction while it waits.
      if (!once.resumed && strategy?.strategy === 'remote-start-stop' && strategy.pausedTransactionId !== null && this.state.get(chargePointId, connectorId).siteCapA === 0) {
        once.resumed = this.checkRemoteResume(target, all, strategy.pausedTransactionId, nowMs);
      }
      return;
    }
    if (strategy?.strategy === 'remote-start-stop') {
      this.checkRemoteStartStop(target, transactionId, strategy.pausedTransactionId, nowMs);
      return;
    }
    this.control(target, transactionId, nowMs);
  }

  /** The connector's rule (planning/connector-control.ts) on its three facts, and the act it asks for. */
  private control(target: ChargingTarget, transactionId: number, nowMs: number): void {
    const { chargePointId, connectorId } = target;
    const c = this.entry(chargePointId, connectorId, transactionId);
    if (!c) return;
    const rule = this.rule;
    // The limit in force is the confirmed profile's highest from now on (it falls as its periods pass).
    let state = c.state;
    if (state.inForce.known && c.confirmed) state = { ...state, inForce: { ...state.inForce, limitA: restMaxCurrentA(c.confirmed.request, c.confirmed.charger, nowMs) } };
    const plan = this.planner.plan(target, nowMs);
    c.chargeNow = isChargeNow(target);
    // Without a site limit there is no share to keep: only an unconfirmed plan is sent again.
    const shareA = plan.site?.share.shareA ?? c.maxA;
    const connected = this.connected(chargePointId);
    const handedOff = c.handedOffAtMs !== null && nowMs - c.handedOffAtMs < HANDOFF_MS;
    const decision = decideControl(
      { state, shareA, freshPlanA: planMaxCurrentA(plan, nowMs), maxA: c.maxA, connected, applicable: (m) => this.applicable(m, chargePointId, connectorId), nowMs, neverLimited: c.chargeNow && !c.limitedInTransaction, chargeNow: c.chargeNow },
      rule,
    );
    const before = c.health;
    c.state = decision.state;
    c.health = decision.health;
    c.shareA = shareA;
    c.why = decision.action.why;
    if (before !== c.health && (c.health === 'escalating' || c.health === 'uncontrollable')) {
      this.ctx.logger.error({ charge_point_id: chargePointId, connector_id: connectorId, transaction_id: transactionId, health: c.health, share_a: shareA, in_force: state.inForce, last_attempt: state.attempt }, c.health === 'uncontrollable' ? 'connector cannot be brought within its share of the site: every means tried' : 'lowering not confirmed within site.lower_deadline_s: escalating');
    }
    if (decision.action.kind === 'hold' || handedOff) return;
    const { means, direction, why } = decision.action;
    // A car with no target whose share is its maximum goes back to that maximum: no margin under it (it cannot flap, connector-control.ts).
    const backToMax = c.chargeNow && planMaxCurrentA(plan, nowMs) >= c.maxA - 1e-9;
    const sentPlan = backToMax ? plan : this.planner.plan(target, nowMs, { siteMarginA: this.siteRule.raiseHysteresisA / 2 });
    const limitA = means === 'remote-stop' || means === 'inoperative' ? 0 : planMaxCurrentA(sentPlan, nowMs);
    const fields = {
      charge_point_id: chargePointId,
      connector_id: connectorId,
      transaction_id: transactionId,
      means,
      direction,
      why,
      in_force_a: state.inForce.known ? round2(state.inForce.limitA) : null,
      share_a: shareA,
      planned_a: round2(limitA),
      other_load_a: plan.site?.otherLoadA ?? null,
      connectors: plan.site?.share.connectors ?? null,
      site_meter: plan.site?.meter?.state ?? null,
    };
    if (direction !== 'confirm') {
      // Through the write queue: a store that refuses writes must not keep the current from being lowered.
      this.writes
        .run(`site change of ${chargePointId}`, () => this.state.setSiteChange(chargePointId, connectorId, nowMs, limitA))
        .catch((err: unknown) => this.ctx.logger.error({ err, charge_point_id: chargePointId, connector_id: connectorId }, 'fuse controller state not stored'));
    }
    if (means === 'profile') {
      this.ctx.logger.info(fields, direction === 'lower' ? 'site load rose: charging current lowered' : direction === 'raise' ? 'site load fell: charging current raised again' : 'charging limit not confirmed: the plan sent again');
      c.handedOffAtMs = nowMs;
      // A car with no target has no stored target for the dispatcher to plan from: its plan goes as it is.
      if (c.chargeNow) {
        void this.sender.sendPlan({ chargePointId, connectorId, plan: sentPlan, target, plannedAtMs: nowMs });
        return;
      }
      // The dispatcher sends it by the connector's strategy ladder and reports the call and its answer here.
      this.ctx.events.emit('plan.updated', { chargePointId, connectorId, marketArea: target.marketArea, reason: 'site-load', plannedAtMs: nowMs, plan: sentPlan });
      return;
    }
    c.lastEscalation = { means, atMs: nowMs, why };
    this.escalations.inc({ means });
    this.ctx.logger.error(fields, `lowering not confirmed: escalated to ${means}`);
    c.handedOffAtMs = nowMs;
    void this.sender.sendLimit({ chargePointId, connectorId, means, plan: sentPlan, target, plannedAtMs: nowMs, limitA, transactionId });
  }

  /** Which escalation means can act on the connector now. */
  private applicable(means: LimitMeans, chargePointId: string, connectorId: number): boolean {
    if (means === 'charge-point-max-profile') {
      // It caps the whole charger: only where this connector is the only one charging on it.
      return this.draws.openConnectors().every((o) => o.chargePointId !== chargePointId || o.connectorId === connectorId);
    }
    return true;
  }

  /**
   * A charger on remote-start-stop (docs/chargers.md "Chargers that say no") has no profile
   * to lower: its running car draws the connector's configured current. Once the site leaves
   * it less, its plan goes again (plan.updated, site-load) and the dispatcher stops the car;
   * it is started again once the site leaves it that current again (checkRemoteResume), or
   * where a later plan does.
   */
  private checkRemoteStartStop(target: ChargingTarget, transactionId: number, pausedTransactionId: number | null, nowMs: number): void {
    const { chargePointId, connectorId } = target;
    if (pausedTransactionId === transactionId) return;
    const configuredA = this.configuredA(chargePointId, connectorId);
    if (configuredA === undefined) return;
    const plan = this.planner.plan(target, nowMs);
    if (plan.allowedCurrentA + 1e-9 >= configuredA) {
      // Running again within the site (started by a new plan, or at its boundary): no longer stopped for the site.
      const state = this.state.get(chargePointId, connectorId);
      if (state.siteCapA === 0) this.recordSiteChange(chargePointId, connectorId, state.siteChangedAtMs ?? nowMs, configuredA);
      return;
    }
    // The stop (site cap 0) is the site's change of this connector's plan: the raise interval runs from it (checkRemoteResume).
    this.recordSiteChange(chargePointId, connectorId, nowMs, 0);
    this.ctx.logger.info(
      { charge_point_id: chargePointId, connector_id: connectorId, transaction_id: transactionId, allowed_a: round2(plan.allowedCurrentA), configured_a: configuredA, other_load_a: plan.site?.otherLoadA ?? null },
      'site leaves a charger without profiles less than it draws: its car is stopped',
    );
    this.ctx.events.emit('plan.updated', { chargePointId, connectorId, marketArea: target.marketArea, reason: 'site-load', plannedAtMs: nowMs, plan });
  }

  /**
   * A car stopped on remote-start-stop (for the site, or where its plan held it at 0) is
   * started again as soon as the site leaves it its configured current plus
   * site.raise_hysteresis_a, its plan charges now, and site.raise_interval_s has passed since
   * the site last changed its plan (site-guard.ts siteResumeDecision). Its plan goes again
   * (plan.updated, site-load) and the dispatcher sends RemoteStartTransaction; the others are
   * checked once its transaction starts (charger.transaction-started), as for any car joining.
   * Only where the limit less the other load and what every other connector may draw now
   * leaves it that much (not its share alone: the others may still hold more than theirs).
   * Returns whether it was started.
   */
  private checkRemoteResume(target: ChargingTarget, all: readonly ChargingTarget[], pausedTransactionId: number, nowMs: number): boolean {
    const { chargePointId, connectorId } = target;
    const configuredA = this.configuredA(chargePointId, connectorId);
    if (configuredA === undefined) return false;
    // Its share if it could take its current plus the hysteresis: whether that much is left for it beside the others.
    const plan = this.planner.plan(target, nowMs, { shareAskA: configuredA + this.siteRule.raiseHysteresisA });
    const site = plan.site;
    if (!site) return false;
    const chargingNow = plan.planned.slots.some((s) => s.startMs <= nowMs && nowMs < s.endMs && s.currentA > 0);
    const state = this.state.get(chargePointId, connectorId);
    const othersCapA = all.filter((t) => t !== target).reduce((sum, t) => sum + this.capInForceA(t, nowMs), 0);
    const freeA = site.limitA - Math.max(0, site.otherLoadA ?? 0) - othersCapA;
    if (!siteResumeDecision({ configuredA, shareA: site.share.shareA, allowedA: plan.allowedCurrentA, chargingNow, freeA, lastSiteChangeMs: state.siteChangedAtMs, nowMs }, this.siteRule)) return false;
    // Stored first: the next reading before the car's StartTransaction does not start it again within the raise interval, and counts it as drawing its current (restart pending).
    this.recordSiteChange(chargePointId, connectorId, nowMs, configuredA);
    this.ctx.logger.info(
      { charge_point_id: chargePointId, connector_id: connectorId, paused_transaction_id: pausedTransactionId, share_a: site.share.shareA, free_a: round2(freeA), others_cap_a: round2(othersCapA), allowed_a: round2(plan.allowedCurrentA), configured_a: configuredA, other_load_a: site.otherLoadA },
      'site load fell: a car stopped for the site is started again',
    );
    // The plan as any other (its share within the connector's maximum) goes to the dispatcher, which starts the car.
    this.ctx.events.emit('plan.updated', { chargePointId, connectorId, marketArea: target.marketArea, reason: 'site-load', plannedAtMs: nowMs, plan: this.planner.plan(target, nowMs) });
    return true;
  }

  private configuredA(chargePointId: string, connectorId: number): number | undefined {
    return this.ctx.config.chargers.find((c) => c.id === chargePointId)?.connectors?.find((c) => c.connector_id === connectorId)?.max_current_a;
  }

  /**
   * What a planned connector may draw right now per phase (A): a running car on
   * remote-start-stop or without an accepted profile its configured current, a car on a
   * profile the limit in force (the one sent for the site and not yet answered, else the
   * accepted one), a stopped car whose restart went out its configured current; else 0.
   */
  private capInForceA(target: ChargingTarget, nowMs: number): number {
    const { chargePointId, connectorId } = target;
    const configuredA = this.configuredA(chargePointId, connectorId);
    if (configuredA === undefined) return 0;
    const transactionId = this.draws.openTransactionId(chargePointId, connectorId);
    if (transactionId === null) return this.planner.restartPending(chargePointId, connectorId) ? configuredA : 0;
    const strategy = this.strategies.get(chargePointId, connectorId);
    if (strategy?.strategy === 'remote-start-stop') return strategy.pausedTransactionId === transactionId ? 0 : configuredA;
    const sent = this.profiles.get(chargePointId, connectorId);
    if (!sent || sent.status !== 'Accepted' || sent.transactionId !== transactionId) return configuredA;
    const state = this.state.get(chargePointId, connectorId);
    const pending = state.siteChangedAtMs !== null && state.siteChangedAtMs > sent.plannedAtMs && state.siteCapA !== null;
    const bounded = this.planner.bounded(target);
    const inForceA = bounded ? restMaxCurrentA(JSON.parse(sent.requestJson) as SetChargingProfileRequest, bounded.limits, nowMs) : configuredA;
    // Lowered but not answered yet: the higher of the two holds until the charger takes the lower.
    return Math.min(configuredA, pending ? Math.max(state.siteCapA!, inForceA) : inForceA);
  }

  /** Through the write queue: a store that refuses writes must not keep a car from being stopped. */
  private recordSiteChange(chargePointId: string, connectorId: number, atMs: number, capA: number | null): void {
    this.writes
      .run(`site change of ${chargePointId}`, () => this.state.setSiteChange(chargePointId, connectorId, atMs, capA))
      .catch((err: unknown) => this.ctx.logger.error({ err, charge_point_id: chargePointId, connector_id: connectorId }, 'fuse controller state not stored'));
  }
}

const round2 = (v: number) => Math.round(v * 100) / 100;

/** The highest current per phase a sent schedule allows from nowMs to its end (a limit in W turned into A at the phases it allows). */
function restMaxCurrentA(request: SetChargingProfileRequest, charger: { phases: number; voltageV: number }, nowMs: number): number {
  const schedule = request.csChargingProfiles.chargingSchedule;
  const segments = scheduleSegments(request, charger);
  let maxA = 0;
  schedule.chargingSchedulePeriod.forEach((p, i) => {
    if (segments[i]!.endMs <= nowMs) return;
    maxA = Math.max(maxA, schedule.chargingRateUnit === 'A' ? p.limit : p.limit / ((p.numberPhases ?? charger.phases) * charger.voltageV));
  });
  return maxA;
}

/** The highest current per phase a plan uses from nowMs on. */
function planMaxCurrentA(plan: TargetPlan, nowMs: number): number {
  let maxA = 0;
  for (const s of plan.planned.slots) if (s.endMs > nowMs) maxA = Math.max(maxA, s.currentA);
  return maxA;
}
