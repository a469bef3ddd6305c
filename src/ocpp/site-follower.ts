// Keeps the site's chargers within the site limit as its load changes (docs/planning.md
// "When the site's load changes"). On the bus (wired in daemon.ts): every sample.taken of
// the site meter (config site.meter). For each connector planned on the site now (a target
// in force, an open transaction, a TxProfile its charger accepted for it), its plan is made
// again under what the site leaves it now (planning/target-plan.ts: the other load, shared
// between the connectors, planning/site-share.ts) and compared with the plan in force
// (planning/site-guard.ts, pure): above its share it is lowered at once; when the load fell
// it is raised again no sooner than site.raise_interval_s after the last change and only
// by at least site.raise_hysteresis_a. The new plan is told as plan.updated (reason
// site-load), which the central system sends as SetChargingProfile. A meter that falls
// silent is checked on a timer: once its reading is older than site.max_reading_age_s the
// plans fall back to the minimum current (the planner's stale rule), lowered the same way.
// The site's share changes too when a car joins it (charger.transaction-started, a plan
// made for a connector: plan.updated), with or without a site meter: the other connectors
// are checked at once, so a new car's current is never added on top of what the others
// still hold above their new share (site.limit_a is a ceiling for them together); and when
// a car leaves it (charger.transaction-stopped), so that the others may be raised (after the
// raise interval) and a car stopped for the site started again. Without a site meter the
// follower runs for site.limit_a alone, and the timer raises again too.
import type { AppContext } from '../context.js';
import type { MeterSample } from '../domain.js';
import type { Module } from '../lifecycle.js';
import { siteGuardDecision, siteGuardRuleFrom, siteResumeDecision, type SiteGuardRule } from '../planning/site-guard.js';
import type { ChargingServices } from '../planning/charging-services.js';
import type { TargetPlanner, TargetPlan } from '../planning/target-plan.js';
import type { ChargingStrategyStore } from '../store/charging-strategies.js';
import type { FollowStateStore } from '../store/charging-follow-state.js';
import type { ChargingProfileStore } from '../store/charging-profiles.js';
import type { ChargingTargetStore, ChargingTarget } from '../store/charging-targets.js';
import type { ConnectorDrawStore } from '../store/connector-draw.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import { scheduleSegments, type SetChargingProfileRequest } from './charging-profile.js';

export class SiteFollower implements Module {
  readonly name = 'site-follower';
  private readonly targets: ChargingTargetStore;
  private readonly profiles: ChargingProfileStore;
  private readonly draws: ConnectorDrawStore;
  private readonly state: FollowStateStore;
  private readonly strategies: ChargingStrategyStore;
  private readonly planner: TargetPlanner;
  private readonly writes: StoreWriteQueue;
  private timer?: NodeJS.Timeout;
  private lastSampleMs: number | null = null;
  private started = false;

  constructor(
    private readonly ctx: Pick<AppContext, 'clock' | 'events' | 'logger' | 'config'>,
    charging: ChargingServices,
  ) {
    const { stores } = charging;
    this.targets = stores.targets;
    this.profiles = stores.profiles;
    this.draws = stores.draws;
    this.state = stores.follow;
    this.strategies = stores.strategies;
    this.planner = charging.planner;
    this.writes = charging.writes;
  }

  private get rule(): SiteGuardRule {
    return siteGuardRuleFrom(this.ctx.config.site).rule;
  }

  async start(): Promise<void> {
    const { config } = this.ctx;
    this.started = true;
    const { raised } = siteGuardRuleFrom(config.site);
    if (raised.length > 0) this.ctx.logger.warn({ raised }, 'site raise settings below their floor are taken at the floor (docs/planning.md)');
    // A silent meter sends no samples: its staleness is noticed here. Without a meter nothing
    // else raises a connector again once a car has left the site.
    const maxAgeMs = config.site.max_reading_age_s * 1000;
    this.timer = setInterval(() => {
      if (config.site.meter === undefined || this.lastSampleMs === null || this.ctx.clock.now() - this.lastSampleMs > maxAgeMs) this.check();
    }, Math.max(1000, maxAgeMs / 2));
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
   * which is not this follower's own): every other planned connector is checked at once.
   */
  sharingChanged(e: { readonly chargePointId: string; readonly connectorId: number }): void {
    this.check(e);
  }

  /** Compares every planned connector's plan in force (but `except`'s) with what the site leaves it now. */
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
    const sent = this.profiles.get(chargePointId, connectorId);
    // Any purpose the charger took for this transaction (charging-strategy.ts) limits it.
    if (!sent || sent.status !== 'Accepted' || sent.transactionId !== transactionId) return;
    const state = this.state.get(chargePointId, connectorId);
    // A plan this sent and the charger has not answered yet is the one in force.
    const pending = state.siteChangedAtMs !== null && state.siteChangedAtMs > sent.plannedAtMs && state.siteCapA !== null;
    const plan = this.planner.plan(target, nowMs);
    const inForceA = pending ? state.siteCapA! : restMaxCurrentA(JSON.parse(sent.requestJson) as SetChargingProfileRequest, plan.limits, nowMs);
    const share = plan.site?.share;
    if (!share) return;
    const freshPlanA = planMaxCurrentA(plan, nowMs);
    const verdict = siteGuardDecision({ inForceA, shareA: share.shareA, freshPlanA, lastSiteChangeMs: state.siteChangedAtMs, nowMs }, this.rule);
    if (verdict === 'hold') return;
    // Half the hysteresis under the share: a wobble of the load by less lowers nothing again.
    const sentPlan = this.planner.plan(target, nowMs, { siteMarginA: this.rule.raiseHysteresisA / 2 });
    const sentA = planMaxCurrentA(sentPlan, nowMs);
    // Through the write queue: a store that refuses writes must not keep the current from being lowered.
    this.writes
      .run(`site change of ${chargePointId}`, () => this.state.setSiteChange(chargePointId, connectorId, nowMs, sentA))
      .catch((err: unknown) => this.ctx.logger.error({ err, charge_point_id: chargePointId, connector_id: connectorId }, 'site follower state not stored'));
    this.ctx.logger.info(
      {
        charge_point_id: chargePointId,
        connector_id: connectorId,
        transaction_id: transactionId,
        in_force_a: round2(inForceA),
        share_a: share.shareA,
        planned_a: round2(sentA),
        other_load_a: plan.site?.otherLoadA ?? null,
        connectors: share.connectors,
        site_meter: plan.site?.meter?.state ?? null,
      },
      verdict === 'lower' ? 'site load rose: charging current lowered' : 'site load fell: charging current raised again',
    );
    this.ctx.events.emit('plan.updated', { chargePointId, connectorId, marketArea: target.marketArea, reason: 'site-load', plannedAtMs: nowMs, plan: sentPlan });
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
    const plan = this.planner.plan(target, nowMs, { shareAskA: configuredA + this.rule.raiseHysteresisA });
    const site = plan.site;
    if (!site) return false;
    const chargingNow = plan.planned.slots.some((s) => s.startMs <= nowMs && nowMs < s.endMs && s.currentA > 0);
    const state = this.state.get(chargePointId, connectorId);
    const othersCapA = all.filter((t) => t !== target).reduce((sum, t) => sum + this.capInForceA(t, nowMs), 0);
    const freeA = site.limitA - Math.max(0, site.otherLoadA ?? 0) - othersCapA;
    if (!siteResumeDecision({ configuredA, shareA: site.share.shareA, allowedA: plan.allowedCurrentA, chargingNow, freeA, lastSiteChangeMs: state.siteChangedAtMs, nowMs }, this.rule)) return false;
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
      .catch((err: unknown) => this.ctx.logger.error({ err, charge_point_id: chargePointId, connector_id: connectorId }, 'site follower state not stored'));
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
