// Follows each connector's plan against what its charger measures (docs/planning.md
// "Following the plan"). On the bus (wired in daemon.ts): charger.energy-measured (the
// central system stored Energy.Active.Import.Register values of an open transaction) and
// charger.connector-status. When the session has fallen so far behind the schedule its
// charger accepted that the rest of that schedule cannot deliver the remaining energy by
// departure (planning/progress.ts, pure), the rest is planned again from now and told as
// plan.updated (reason behind-plan), which the central system sends as SetChargingProfile.
// A connector that comes back from Unavailable or Faulted is checked at once (reason
// charger-available): the time it was off is time the plan counted on. When the
// transaction stops (charger.transaction-stopped) the connector's target has ended and the
// profiles set for it are cleared (plan.cleared).
import type { AppContext } from '../context.js';
import type { Events } from '../events.js';
import type { Module } from '../lifecycle.js';
import { defaultTarget } from '../planning/default-target.js';
import { observeCarDraw } from '../planning/car-draw.js';
import { followProgress, registerAtWh, FOLLOW_RULE, type FollowRule, type Progress } from '../planning/progress.js';
import type { ChargingServices } from '../planning/charging-services.js';
import type { TargetPlanner } from '../planning/target-plan.js';
import { requireMarket } from '../prices/markets.js';
import type { ChargingStrategyStore } from '../store/charging-strategies.js';
import type { FollowStateStore } from '../store/charging-follow-state.js';
import type { ChargingProfileStore } from '../store/charging-profiles.js';
import type { DeliveryReader as ChargingProgressStore } from '../planning/progress.js';
import type { ChargingTargetStore, ChargingTarget } from '../store/charging-targets.js';
import type { ConnectorDraws as ConnectorDrawStore } from '../planning/connector-draws.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import { scheduleSegments, type SetChargingProfileRequest } from './charging-profile.js';

/** A connector in one of these cannot charge; back in one of CHARGEABLE it can again. */
const OFF = new Set(['Unavailable', 'Faulted']);
const CHARGEABLE = new Set(['Available', 'Preparing', 'Charging', 'SuspendedEV', 'SuspendedEVSE']);

type Reason = 'behind-plan' | 'charger-available' | 'car-limit';

/** How far back the car's draw is looked at on each MeterValues (a run of 10 minutes is looked for in it). */
const LEARN_WINDOW_MS = 30 * 60_000;

export class PlanFollower implements Module {
  readonly name = 'plan-follower';
  private readonly targets: ChargingTargetStore;
  private readonly profiles: ChargingProfileStore;
  private readonly progress: ChargingProgressStore;
  private readonly planner: TargetPlanner;
  private readonly writes: StoreWriteQueue;
  /** When each connector was last planned again here (the answer to a new profile takes a while to be stored), kept across restarts. */
  private readonly state: FollowStateStore;
  private readonly draws: ConnectorDrawStore;
  private readonly strategies: ChargingStrategyStore;
  /** When each connector was last planned again for coming back (charger-available), in memory. */
  private readonly backReplanAtMs = new Map<string, number>();

  constructor(
    private readonly ctx: Pick<AppContext, 'clock' | 'events' | 'logger' | 'config'>,
    charging: ChargingServices,
    private readonly rule: FollowRule = FOLLOW_RULE,
  ) {
    const { stores } = charging;
    this.targets = stores.targets;
    this.profiles = stores.profiles;
    this.progress = stores.progress;
    this.state = stores.follow;
    this.draws = stores.draws;
    this.strategies = stores.strategies;
    this.planner = charging.planner;
    this.writes = charging.writes;
  }

  async start(): Promise<void> {}

  /**
   * Writes through the charging write queue (store/write-queue.ts): while the store refuses
   * writes they wait in memory and following goes on; one that fails is logged here.
   */
  private write(what: string, chargePointId: string, connectorId: number, work: () => void): void {
    this.writes.run(`${what} of ${chargePointId}`, work).catch((err: unknown) => this.ctx.logger.error({ err, charge_point_id: chargePointId, connector_id: connectorId }, `plan follower: ${what} not stored`));
  }

  async stop(): Promise<void> {}

  energyMeasured(e: Events['charger.energy-measured']): void {
    // A car newly seen to draw less than allowed: the rest is planned with what it draws, at once.
    const learnt = this.learnCarDraw(e.chargePointId, e.connectorId, e.transactionId);
    this.follow(e.chargePointId, e.connectorId, learnt ? 'car-limit' : 'behind-plan');
  }

  /**
   * Learns the car's observed maximum draw in its transaction (planning/car-draw.ts) from the
   * charger's Current.Import / Power.Active.Import under the TxProfile in force; stores it
   * when it is new or higher. True when it changed what the rest is planned with.
   */
  private learnCarDraw(chargePointId: string, connectorId: number, transactionId: number): boolean {
    const nowMs = this.ctx.clock.now();
    const target = this.targets.get(chargePointId, connectorId);
    if (!target || target.departureMs <= nowMs) return false;
    // The limits within the configured ceilings; a connector not configured is not planned.
    const limits = this.planner.bounded(target)?.limits;
    if (!limits) return false;
    const sent = this.profiles.get(chargePointId, connectorId);
    // Only the profile in force is known: the car's draw is judged against it alone.
    // Any purpose the charger took for this transaction (charging-strategy.ts) limits it.
    if (!sent || sent.status !== 'Accepted' || sent.transactionId !== transactionId) return false;
    const known = this.planner.observedDraw(target);
    const charger = { phases: this.phasesOf(target, limits.phases, sent.plannedAtMs), voltageV: limits.voltageV };
    const segments = scheduleSegments(JSON.parse(sent.requestJson) as SetChargingProfileRequest, charger);
    const allowedPowerW = (atMs: number) => segments.find((g) => g.startMs <= atMs && atMs < g.endMs)?.powerW ?? 0;
    const samples = this.draws.samples(transactionId, Math.max(sent.plannedAtMs, nowMs - LEARN_WINDOW_MS), Number.MAX_SAFE_INTEGER);
    const observed = observeCarDraw(samples, allowedPowerW, charger);
    if (!observed) return false;
    // The most the car was seen to take: a later, lower run (a battery tapering off) does not lower it.
    if (known && observed.maxCurrentA * observed.phases <= known.maxCurrentA * known.phases + 0.05) return false;
    const maxCurrentA = Math.min(observed.maxCurrentA, limits.maxCurrentA);
    const phases = Math.min(observed.phases, limits.phases);
    this.write('car draw', chargePointId, connectorId, () => this.state.setObserved(chargePointId, connectorId, { transactionId, maxCurrentA, phases, atMs: nowMs }));
    this.ctx.logger.info(
      { charge_point_id: chargePointId, connector_id: connectorId, transaction_id: transactionId, observed_max_current_a: maxCurrentA, observed_phases: phases, charger_max_current_a: limits.maxCurrentA, charger_phases: limits.phases },
      'car draws less than allowed: the rest of its session is planned with what it draws',
    );
    return true;
  }

  /** The phases a profile planned at plannedAtMs was made for: the car's observed ones once learnt, else the target's (within its ceiling). */
  private phasesOf(target: ChargingTarget, phases: number, plannedAtMs: number): number {
    const observed = this.planner.observedDraw(target);
    return observed && plannedAtMs >= observed.atMs ? Math.min(phases, observed.phases) : phases;
  }

  connectorStatus(e: Events['charger.connector-status']): void {
    // The previous status is the stored one (the central system reads it before storing this), so an outage across a restart counts.
    const previous = e.previous;
    // A late StatusNotification (older than the one known) says nothing about now.
    if (previous && previous.atMs > e.atMs) return;
    if (!previous || !OFF.has(previous.status) || !CHARGEABLE.has(e.status)) return;
    // Connector 0 is the whole charger: every connector of it was off.
    const connectors = e.connectorId === 0 ? this.targets.upcoming(this.ctx.clock.now()).filter((t) => t.chargePointId === e.chargePointId).map((t) => t.connectorId) : [e.connectorId];
    for (const connectorId of connectors) this.follow(e.chargePointId, connectorId, 'charger-available');
  }

  /**
   * A transaction started: a connector with a configured default target and no target in
   * force (none, ended, or past its departure) gets the default one (planning/default-target.ts),
   * stored before the central system plans the connector for the new transaction.
   */
  transactionStarted(e: Events['charger.transaction-started']): void {
    const { config, clock, logger } = this.ctx;
    const connector = config.chargers.find((c) => c.id === e.chargePointId)?.connectors?.find((c) => c.connector_id === e.connectorId);
    if (!connector?.default_target) return;
    const nowMs = clock.now();
    const existing = this.targets.get(e.chargePointId, e.connectorId);
    if (existing && existing.endedAtMs == null && existing.departureMs > nowMs) return;
    const target = defaultTarget(e.chargePointId, connector, requireMarket(config.ocpp.market_area ?? config.prices.regions[0] ?? 'NL'), e.startedAtMs);
    if (!target || target.departureMs <= nowMs) return;
    // Without a single price to plan on, the plan would hold the car at 0 A: leave it unmanaged.
    const plan = this.planner.plan(target, nowMs);
    if (plan.planned.energyWh === 0 && plan.shortfallReason === 'prices-end-before-departure') {
      logger.warn({ charge_point_id: e.chargePointId, connector_id: e.connectorId, market_area: target.marketArea }, 'default charging target not applied: no stored prices before its departure');
      return;
    }
    this.write('default target', e.chargePointId, e.connectorId, () => this.targets.put(target));
    logger.info({ charge_point_id: e.chargePointId, connector_id: e.connectorId, transaction_id: e.transactionId, departure: new Date(target.departureMs).toISOString(), energy_wh: target.energyWh }, 'default charging target applied');
  }

  /**
   * The transaction a target was for stopped: the target has ended (planned no more) and
   * the profiles set for it are cleared from the charger (plan.cleared).
   */
  transactionStopped(e: Events['charger.transaction-stopped']): void {
    // The gateway stopped it to pause the car (remote-start-stop, docs/chargers.md "Chargers that say no"): the target goes on.
    if (this.strategies.get(e.chargePointId, e.connectorId)?.pausedTransactionId === e.transactionId) {
      this.ctx.logger.info({ charge_point_id: e.chargePointId, connector_id: e.connectorId, transaction_id: e.transactionId }, 'transaction stopped by the gateway to pause the car: its charging target goes on');
      return;
    }
    // Kept across tries: a try that ended the target and then found the store refusing goes on from there.
    let ended = false;
    this.write('target end', e.chargePointId, e.connectorId, () => {
      ended ||= this.targets.end(e.chargePointId, e.connectorId, e.stoppedAtMs);
      if (!ended) return;
      this.state.setReplanned(e.chargePointId, e.connectorId, null);
      this.targetEnded(e);
    });
  }


  private targetEnded(e: Events['charger.transaction-stopped']): void {
    this.ctx.logger.info({ charge_point_id: e.chargePointId, connector_id: e.connectorId, transaction_id: e.transactionId }, 'charging target ended with its transaction; its charging profiles are cleared');
    this.ctx.events.emit('plan.cleared', { chargePointId: e.chargePointId, connectorId: e.connectorId, reason: 'transaction-stopped', atMs: this.ctx.clock.now() });
  }

  /** Compares the connector's open transaction with the schedule its charger accepted; plans the rest again when behind. */
  private follow(chargePointId: string, connectorId: number, reason: Reason): Progress | null {
    const { clock, logger, events } = this.ctx;
    const nowMs = clock.now();
    const target = this.targets.get(chargePointId, connectorId);
    if (!target || target.departureMs <= nowMs) return null;
    const limits = this.planner.bounded(target)?.limits;
    if (!limits) return null;
    const sent = this.profiles.get(chargePointId, connectorId);
    // Only a schedule the charger took for this transaction is one to follow (any purpose: charging-strategy.ts).
    if (!sent || sent.status !== 'Accepted' || sent.transactionId === null) return null;
    // Coming back is one event per outage, though a charger reports it for connector 0 and
    // the connector: while the plan made for it is not answered yet, that plan counts it.
    const key = `${chargePointId}\u0000${connectorId}`;
    if (reason === 'charger-available' && (this.backReplanAtMs.get(key) ?? -Infinity) > sent.plannedAtMs) return null;
    const delivery = this.progress.delivery(chargePointId, connectorId, target.updatedAtMs, [sent.plannedAtMs]);
    if (!delivery || delivery.transactionId !== sent.transactionId) return null;
    const lastReplanMs = this.state.get(chargePointId, connectorId).replannedAtMs ?? -Infinity;
    const countFromMs = Math.max(target.updatedAtMs, delivery.startedAtMs);
    const startWh = registerAtWh(delivery.readings, countFromMs)!;
    const request = JSON.parse(sent.requestJson) as SetChargingProfileRequest;
    // Checked at once, whatever the interval: one event per outage, or per car limit learnt.
    const immediate = reason === 'charger-available' || reason === 'car-limit';
    const progress = followProgress(
      {
        plannedAtMs: sent.plannedAtMs,
        segments: scheduleSegments(request, { phases: this.phasesOf(target, limits.phases, sent.plannedAtMs), voltageV: limits.voltageV }),
        departureMs: target.departureMs,
        energyNeededWh: target.energyWh,
        deliveredAtPlanWh: Math.max(0, registerAtWh(delivery.readings, Math.max(sent.plannedAtMs, countFromMs))! - startWh),
        deliveredWh: delivery.deliveredWh,
        // Back from being off: nothing was delivered since the last reading, so it holds until now.
        measuredAtMs: reason === 'charger-available' ? Math.max(nowMs, delivery.measuredAtMs) : delivery.measuredAtMs,
        nowMs,
        ignoreInterval: immediate,
      },
      this.rule,
    );
    const fields = {
      charge_point_id: chargePointId,
      connector_id: connectorId,
      transaction_id: delivery.transactionId,
      expected_wh: Math.round(progress.expectedWh),
      delivered_wh: Math.round(progress.deliveredWh),
      remaining_wh: Math.round(progress.remainingWh),
      rest_planned_wh: Math.round(progress.restPlannedWh),
      threshold_wh: Math.round(progress.thresholdWh),
      reason,
    };
    // The plan sent last may not be answered yet: the interval also runs from our own last replan.
    const tooSoon = !immediate && nowMs - lastReplanMs < this.rule.minReplanIntervalMs;
    // A car limit learnt makes the plan in force one the car cannot follow, behind yet or not.
    const carLimit = reason === 'car-limit' && progress.verdict !== 'done';
    if (!carLimit && (progress.verdict !== 'replan' || tooSoon)) {
      if (progress.verdict === 'replan' || progress.verdict === 'behind-wait') logger.debug(fields, 'charging session behind its plan; within the minimum interval, not planned again yet');
      return progress;
    }
    let plan;
    try {
      plan = this.planner.plan(target, nowMs);
    } catch (err) {
      logger.error({ err, charge_point_id: chargePointId, connector_id: connectorId }, 'charging plan failed');
      return progress;
    }
    this.write('replan time', chargePointId, connectorId, () => this.state.setReplanned(chargePointId, connectorId, nowMs));
    if (reason === 'charger-available') this.backReplanAtMs.set(key, nowMs);
    logger.info({ ...fields, planned_wh: Math.round(plan.planned.energyWh), meets_target: plan.meetsTarget }, 'charging session behind its plan: the rest planned again');
    events.emit('plan.updated', { chargePointId, connectorId, marketArea: target.marketArea, reason, plannedAtMs: nowMs, plan });
    return progress;
  }
}
