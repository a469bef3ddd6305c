// What the central system sends to chargers on its own (docs/chargers.md "Applying plans",
// "Schedules in A or W", "Clearing profiles"): a connector's plan as SetChargingProfile, the
// clears of profiles nobody wants any more, and the GetConfiguration read of the unit a
// charger takes its schedules in. Plans go out when they change (plan.updated), when a
// charger boots or reconnects, and when a transaction starts; by the strategy the charger's
// declarations and refusals leave (charging-strategy.ts, docs/chargers.md "Chargers that
// say no"), and again at each period boundary for the strategies that send a plan piece by piece.
// Both versions: a 2.0.1 station's connection comes translated (v201/limit-client.ts), so its
// EVSEs get the same ladder, the same stored answers and the same escalations as 1.6 connectors.
//
// Error policy: an outbound exchange never throws out of here. A charger that does not
// answer has that stored as the answer ('error'); every answer is written through the
// store's write queue (store/write-queue.ts), so while the database refuses writes it waits
// in memory and is written when it takes them again; anything else that fails is logged
// with the charger and connector, and the exchange is tried again on the next plan or connect.
import type { ChargerConfig } from '../config/types.js';
import type { AppContext } from '../context.js';
import type { Events } from '../events.js';
import type { ChargingServices } from '../planning/charging-services.js';
import type { Plan } from '../planning/plan.js';
import type { ChargingTarget } from '../store/charging-targets.js';
import type { OcppStore } from '../store/ocpp.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import type { ChargerClient } from './charger-client.js';
import type { ChargerOperationsPort } from './charger-operations.js';
import { FEATURE_PROFILES_KEY, readChargerCapabilities, storedCapabilities } from './charger-configuration.js';
import { chargingNow, chargingProfileIdOf, chargingProfileRequest, chargingRateUnitFor, profileWindow, type SetChargingProfileRequest } from './charging-profile.js';
import { chooseStrategy, isRefusal, refusesAllProfiles, STRATEGIES, withCarScheduleTuples, type ChargerCapabilities, type ChargingStrategy, type Refusal, type StrategyName } from './charging-strategy.js';
import { requestClears, sendPendingClears } from './profile-clears.js';
import { chargerRefusalsInForce, refusalRetryMs } from './refusals-in-force.js';
import type { LimitObserver, LimitRequest, LimitSender, PlanRequest } from './limit-attempts.js';
import type { LimitMeans } from '../planning/connector-control.js';

/** How often the boundaries of the plans followed piece by piece are checked (against the gateway clock). */
const BOUNDARY_CHECK_MS = 1000;

/** A connector's plan as last sent, kept to act again at its next boundary (by-period, remote-start-stop). */
interface Followed {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly plan: Plan;
  readonly plannedAtMs: number;
  readonly strategy: StrategyName;
  nextBoundaryMs: number | null;
}

const keyOf = (chargePointId: string, connectorId: number) => `${chargePointId}\u0000${connectorId}`;

/** The escalation's ChargePointMaxProfile: one per charger (connector 0's id), above the plans' own (stack level 0). */
const ESCALATION_MAX_PROFILE_ID = chargingProfileIdOf(0, 'ChargePointMaxProfile');
const ESCALATION_STACK_LEVEL = 1;

/**
 * How long before its transaction's start (by the station's stamp) a car's ISO 15118 needs
 * still count as this car's: the needs usually follow the Started event, and the station's
 * clock may be a little ahead of the gateway's.
 */
const CAR_NEEDS_SLACK_MS = 60_000;

export class ProfileDispatcher implements LimitSender {
  private readonly followed = new Map<string, Followed>();
  private timer?: NodeJS.Timeout;
  /** The fuse controller, told of every call for a connector's limit and its answer (set when there is one). */
  private observer: LimitObserver | null = null;

  constructor(
    private readonly ctx: Pick<AppContext, 'clock' | 'logger' | 'config'>,
    private readonly charging: ChargingServices,
    private readonly ocpp: OcppStore,
    private readonly writes: StoreWriteQueue,
    private readonly chargers: ReadonlyMap<string, Pick<ChargerConfig, 'connectors'>>,
    /** The charger's current connection, or null while it is not connected. */
    private readonly clientOf: (chargePointId: string) => ChargerClient | null,
    /** The one call path of charger operations (charger-operations.ts): RemoteStop/StartTransaction of the remote-start-stop strategy. */
    private readonly operations: Pick<ChargerOperationsPort, 'call'>,
    /** What the charger declared it takes: a 1.6 charger's GetConfiguration keys; a 2.0.1 station's device model (central-system.ts). */
    private readonly capabilitiesOf: (chargePointId: string) => ChargerCapabilities = (id) => storedCapabilities(charging.stores.configuration, id),
  ) {}

  /** The fuse controller hears every call for a connector's limit and its answer from now on. */
  observe(observer: LimitObserver): void {
    this.observer = observer;
  }

  /**
   * How long a call that puts a limit in force waits for its answer: half the fuse
   * controller's deadline (site.lower_deadline_s), so a lost answer is noticed, retried and
   * if need be escalated within it, not after ocpp-rpc's own minute.
   */
  private get limitCallTimeoutMs(): number {
    return Math.max(1000, (this.ctx.config.site.lower_deadline_s * 1000) / 2);
  }

  /** Starts checking the boundaries of plans followed piece by piece (central-system.ts start). */
  start(): void {
    this.timer = setInterval(() => this.tick(), BOUNDARY_CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.followed.clear();
  }

  /**
   * Sends a connector's new plan to its charger (plan.updated, wired in daemon.ts). A charger
   * that is not connected gets it when it boots again or starts a transaction there.
   */
  applyPlan(e: Events['plan.updated']): void {
    const client = this.clientOf(e.chargePointId);
    if (!client) {
      this.ctx.logger.debug({ charge_point_id: e.chargePointId, connector_id: e.connectorId, configured: this.chargers.has(e.chargePointId) }, 'charging plan not sent: charger not connected');
      return;
    }
    const target = this.charging.stores.targets.get(e.chargePointId, e.connectorId);
    if (!target) return;
    // site-load: the site follower's plan; for a car it stopped, its decision to start it again (site-follower.ts checkRemoteResume).
    this.background(this.sendProfile(client, e.connectorId, e.plan, e.plannedAtMs, target, e.reason === 'site-load'), 'charging profile not sent', e.chargePointId, e.connectorId);
  }

  /**
   * Clears the profiles the gateway set on the connector (plan.cleared, wired in daemon.ts):
   * stored as pending, sent after the current message is answered, or when the charger
   * next connects (profile-clears.ts).
   */
  clearPlan(e: Events['plan.cleared']): void {
    if (!this.chargers.has(e.chargePointId)) return;
    this.followed.delete(keyOf(e.chargePointId, e.connectorId));
    const inForce = this.charging.stores.strategies.get(e.chargePointId, e.connectorId)?.strategy;
    const purposes = inForce?.startsWith('charge-point-max-profile') ? (['TxProfile', 'TxDefaultProfile', 'ChargePointMaxProfile'] as const) : undefined;
    const stored = this.writes.run(`profile clears of ${e.chargePointId}`, () => requestClears(this.charging.stores.profiles, e, purposes));
    const sent = stored
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => {
        const client = this.clientOf(e.chargePointId);
        return client ? this.sendClears(client) : undefined;
      });
    this.background(sent, 'charging profile clears not sent', e.chargePointId, e.connectorId);
  }

  /**
   * A charger connected. One that booted before and only reconnects (many do not send
   * BootNotification again) gets its plans now, its allowed charging rate unit read first
   * when it never was; one that boots gets them after its BootNotification (booted).
   */
  connected(client: ChargerClient): void {
    let booted: boolean;
    try {
      booted = this.ocpp.chargePointView(client.identity).vendor !== null;
    } catch (err) {
      this.ctx.logger.error({ err, charge_point_id: client.identity }, 'charging plans not sent after reconnect');
      return;
    }
    if (!booted) return;
    setImmediate(() =>
      this.background(
        (async () => {
          if (!this.isCurrent(client)) return;
          if (this.charging.stores.configuration.get(client.identity, FEATURE_PROFILES_KEY) === undefined) await this.readConfiguration(client);
          if (this.isCurrent(client)) this.applyStoredTargets(client, null);
        })(),
        'charging plans not sent after reconnect',
        client.identity,
        null,
      ),
    );
  }

  /** After a BootNotification's answer: the plans of the charger's upcoming targets, its allowed charging rate unit first (the profiles are built in it). */
  booted(client: ChargerClient): void {
    setImmediate(() =>
      this.background(
        (async () => {
          await this.readConfiguration(client);
          this.applyStoredTargets(client, null);
        })(),
        'charging plans not sent after boot',
        client.identity,
        null,
      ),
    );
  }

  /** After a StartTransaction's answer (the charger needs the transactionId): the plan as a TxProfile for it. */
  transactionStarted(client: ChargerClient, connectorId: number): void {
    const id = client.identity;
    const followed = this.followed.get(keyOf(id, connectorId));
    const resumed = async () => {
      const { strategies, targets } = this.charging.stores;
      if (strategies.get(id, connectorId)?.pausedTransactionId == null) return false;
      this.queue(`resume of ${id}`, () => strategies.setPaused(id, connectorId, null));
      const target = targets.get(id, connectorId);
      // The car resumed under the plan it was paused by: that plan goes on (a new plan would count the energy already charged again).
      if (!followed || followed.strategy !== 'remote-start-stop' || !target) return false;
      await this.sendProfile(client, connectorId, followed.plan, followed.plannedAtMs, target);
      return true;
    };
    setImmediate(() =>
      this.background(
        (async () => {
          if (!(await resumed())) this.applyStoredTargets(client, connectorId);
        })(),
        'charging plan not sent after StartTransaction',
        id,
        connectorId,
      ),
    );
  }

  private isCurrent(client: ChargerClient): boolean {
    return this.clientOf(client.identity) === client;
  }

  private readConfiguration(client: ChargerClient): Promise<void> {
    // A 2.0.1 station has no GetConfiguration: its schedules go in A with the whole plan first,
    // as for a 1.6 charger that never declared otherwise (charging-strategy.ts); its refusals still move it down the ladder.
    if (client.protocol === 'ocpp2.0.1') return Promise.resolve();
    return readChargerCapabilities(client, this.charging.stores.configuration, this.writes, () => this.ctx.clock.now(), this.ctx.logger);
  }

  private sendClears(client: ChargerClient): Promise<void> {
    // Bounded as the limit calls are: the clears share their lane (call-lanes.ts).
    return sendPendingClears(client, this.charging.stores.profiles, this.writes, () => this.ctx.clock.now(), this.ctx.logger, this.limitCallTimeoutMs);
  }

  /**
   * Sends the charger's plans again after something outside the gateway removed them (an
   * operator's Accepted ClearChargingProfile): without this the charger would draw its
   * hardware maximum, past the site's ceiling, until the next plan event.
   */
  reapply(chargePointId: string): void {
    const client = this.clientOf(chargePointId);
    if (client) this.applyStoredTargets(client, null);
  }

  /** Plans the charger's upcoming targets (one connector, or all) from the stored prices and sends them. */
  private applyStoredTargets(client: ChargerClient, connectorId: number | null): void {
    // Clears that waited for the charger go first (same profile ids as a new plan's).
    this.background(this.sendClears(client), 'charging profile clears not sent', client.identity, connectorId);
    const nowMs = this.ctx.clock.now();
    const { planner, stores } = this.charging;
    const targets = stores.targets.upcoming(nowMs).filter((t) => t.chargePointId === client.identity && (connectorId === null || t.connectorId === connectorId));
    for (const target of targets) {
      let plan: Plan;
      try {
        plan = planner.plan(target, nowMs);
      } catch (err) {
        this.ctx.logger.error({ err, charge_point_id: target.chargePointId, connector_id: target.connectorId }, 'charging plan failed');
        continue;
      }
      this.background(this.sendProfile(client, target.connectorId, plan, nowMs, target), 'charging profile not sent', target.chargePointId, target.connectorId);
    }
  }

  /**
   * Sends the plan by the strategy in force for the connector (charging-strategy.ts): a
   * SetChargingProfile of the purpose and length the charger takes, or for a charger with no
   * smart charging RemoteStop/StartTransaction at the plan's times. A refusal (Rejected,
   * NotSupported, a CallError) is stored for the charger and the plan goes by the next
   * strategy at once, so a car is never held at 0 A with a kind of profile its charger
   * refused before. Each answer (or why none came) is stored for the plan's GET; the safety
   * lane has one call in flight per charger (call-lanes.ts), so answers are stored in the order sent.
   */
  private async sendProfile(client: ChargerClient, connectorId: number, plan: Plan, plannedAtMs: number, target: ChargingTarget, bySiteFollower = false, profilesOnly = false): Promise<void> {
    const { clock } = this.ctx;
    const { strategies } = this.charging.stores;
    const id = client.identity;
    const open = this.ocpp.chargePointView(id).openTransactions.filter((t) => t.connectorId === connectorId);
    const transactionId = open.length > 0 ? open[open.length - 1]!.transactionId : null;
    const capabilities = withCarScheduleTuples(this.capabilitiesOf(id), transactionId === null ? null : this.charging.stores.ev.maxScheduleTuples(id, connectorId, open[open.length - 1]!.startedAtMs - CAR_NEEDS_SLACK_MS));
    const soleConnector = (this.chargers.get(id)?.connectors?.length ?? 0) === 1;
    const whole = (strategy: ChargingStrategy | null) =>
      chargingProfileRequest(plan, { connectorId, transactionId, plannedAtMs, departureMs: target.departureMs, rateUnit: strategy?.rateUnit ?? chargingRateUnitFor(capabilities.allowedChargingRateUnit), purpose: strategy?.purpose ?? undefined });
    const planPeriods = whole(null).csChargingProfiles.chargingSchedule.chargingSchedulePeriod.length;
    // Refusals learnt here count at once, also while the store refuses writes.
    const learnt: Refusal[] = [];
    const firmwareVersion = strategies.firmwareOf(id);
    const inForce = strategies.get(id, connectorId);
    const pausedByRemoteStop = transactionId === null && inForce?.strategy === 'remote-start-stop' && inForce.pausedTransactionId !== null;
    for (let tries = 0; tries < STRATEGIES.length; tries++) {
      // Those within their back-off window (a strategy refused longer ago is tried again), and the ones learnt in this exchange.
      const refusals = chargerRefusalsInForce(strategies, id, clock.now(), refusalRetryMs(this.ctx.config), learnt);
      const strategy = chooseStrategy({ capabilities, refusals, transactionOpen: transactionId !== null, planPeriods, soleConnector, pausedByRemoteStop });
      await this.recordStrategy(id, connectorId, strategy);
      const key = keyOf(id, connectorId);
      if (strategy.purpose === null) {
        // A car with no target is never stopped or started by a plan: on a charger that takes no profile it is
        // counted at its maximum instead (the strategy stored now takes it out of the fuse controller's charge-now cars).
        if (profilesOnly) {
          this.ctx.logger.warn({ charge_point_id: id, connector_id: connectorId, strategy: strategy.name }, 'charger takes no profile: a car with no target there is counted at its maximum, not lowered');
          return;
        }
        // Followed before the call: the StartTransaction a RemoteStart brings may come before its answer is taken, and resumes under this plan.
        const followed: Followed = { chargePointId: id, connectorId, plan, plannedAtMs, strategy: strategy.name, nextBoundaryMs: null };
        this.followed.set(key, followed);
        followed.nextBoundaryMs = await this.remoteStep(client, connectorId, plan, whole(null), transactionId, target, bySiteFollower);
        return;
      }
      const request = whole(strategy);
      const cut = strategy.periodsPerProfile === null ? { request, nextBoundaryMs: null } : profileWindow(request, clock.now(), strategy.periodsPerProfile);
      const answer = await this.setChargingProfile(client, connectorId, cut.request, request, transactionId, plannedAtMs, plan, strategy.name);
      if (isRefusal(answer)) {
        const refusal: Refusal = { strategy: refusesAllProfiles(answer) ? 'all-profiles' : strategy.name, answer, atMs: clock.now(), firmwareVersion };
        learnt.push(refusal);
        this.queue(`refusal of ${id}`, () => strategies.putRefusal(id, refusal));
        continue;
      }
      this.followed.set(key, { chargePointId: id, connectorId, plan, plannedAtMs, strategy: strategy.name, nextBoundaryMs: answer === 'Accepted' ? cut.nextBoundaryMs : null });
      return;
    }
  }

  /** Stores the strategy in force and logs a change (with why). */
  private async recordStrategy(chargePointId: string, connectorId: number, strategy: ChargingStrategy): Promise<void> {
    const strategies = this.charging.stores.strategies;
    const before = strategies.get(chargePointId, connectorId);
    if (before?.strategy === strategy.name && before.reason === strategy.reason) return;
    this.queue(`charging strategy of ${chargePointId}`, () => strategies.put({ chargePointId, connectorId, strategy: strategy.name, reason: strategy.reason, chosenAtMs: this.ctx.clock.now() }));
    this.ctx.logger.info(
      { charge_point_id: chargePointId, connector_id: connectorId, strategy: strategy.name, previous_strategy: before?.strategy ?? null, purpose: strategy.purpose, periods_per_profile: strategy.periodsPerProfile, rate_unit: strategy.rateUnit, reason: strategy.reason },
      'charging strategy in force changed',
    );
  }

  /** One SetChargingProfile and its answer stored; returns the answer: the status, the CallError's code, or 'error' when none came. */
  private async setChargingProfile(client: ChargerClient, connectorId: number, sent: SetChargingProfileRequest, whole: SetChargingProfileRequest, transactionId: number | null, plannedAtMs: number, plan: Plan, strategy: StrategyName | 'escalation', means: LimitMeans = 'profile'): Promise<string> {
    const { clock, logger } = this.ctx;
    const { profiles } = this.charging.stores;
    const id = client.identity;
    const sentAtMs = clock.now();
    let status: string;
    let error: string | null = null;
    this.observer?.limitSent({ chargePointId: id, connectorId, means, request: sent, transactionId, atMs: sentAtMs });
    try {
      const answer = (await client.call('SetChargingProfile', sent, { callTimeoutMs: this.limitCallTimeoutMs, lane: 'safety' })) as { status: string };
      status = answer.status;
    } catch (err) {
      // A CallError the charger sent carries its code (ocpp-rpc RPCError): that is its answer.
      const code = (err as { rpcErrorCode?: unknown }).rpcErrorCode;
      status = typeof code === 'string' && code !== '' ? code : 'error';
      error = (err as Error).message.slice(0, 500);
    }
    const profile = sent.csChargingProfiles;
    // A TxDefaultProfile binds the limit only where no TxProfile of ours is in force (the strategy chose it); a TxProfile must be for the open transaction.
    const purpose = profile.chargingProfilePurpose;
    const binds = purpose === 'ChargePointMaxProfile' || (purpose === 'TxProfile' ? transactionId !== null : means === 'profile');
    this.observer?.limitAnswered({ chargePointId: id, connectorId, sentAtMs, outcome: status === 'Accepted' ? 'accepted' : status === 'error' ? 'unanswered' : 'refused', answer: status, binds, atMs: clock.now() });
    // Escalation profiles are not the plan's: the plan's GET keeps showing the plan's own.
    if (means !== 'profile') {
      logger.warn({ charge_point_id: id, connector_id: connectorId, means, purpose, status }, 'escalation profile answered');
      return status;
    }
    // While the store refuses writes the answer waits in its queue (store/write-queue.ts).
    this.queue(`SetChargingProfile answer of ${id}`, () => {
      profiles.put({
        chargePointId: id,
        connectorId,
        purpose: profile.chargingProfilePurpose,
        // The session runs under the plan by any profile the charger takes while it is open.
        transactionId,
        chargingProfileId: profile.chargingProfileId,
        plannedAtMs,
        sentAtMs,
        status,
        error,
        periods: profile.chargingSchedule.chargingSchedulePeriod.length,
        // The whole plan (a by-period strategy sends it a cut at a time): what the followers compare delivery with.
        requestJson: JSON.stringify(whole),
      });
      // The session ran under this plan only if the charger took it.
      if (transactionId !== null && status === 'Accepted') {
        profiles.putTransactionPlan({
          transactionId,
          plannedAtMs,
          energyNeededWh: plan.energyNeededWh,
          plannedEnergyWh: plan.planned.energyWh,
          expectedCost: plan.planned.cost.expected,
          immediateCost: plan.immediate.cost.expected,
        });
      }
    });
    const fields = { charge_point_id: id, connector_id: connectorId, strategy, purpose: profile.chargingProfilePurpose, transaction_id: transactionId, periods: profile.chargingSchedule.chargingSchedulePeriod.length, status, err: error === null ? undefined : { message: error } };
    if (status === 'Accepted') logger.info(fields, 'charging profile sent');
    else logger.warn(fields, 'charging profile not taken by the charger');
    return status;
  }

  /**
   * An escalation means of the fuse controller (fuse-controller.ts, docs/planning.md "The fuse
   * controller"): the plan as a TxDefaultProfile, a ChargePointMaxProfile at the connector's
   * limit (stack level 1, above the plans' own), RemoteStopTransaction, or ChangeAvailability
   * Inoperative. Each call and its answer go to the observer; never rejects.
   */
  async sendLimit(r: LimitRequest): Promise<void> {
    const client = this.clientOf(r.chargePointId);
    if (!client) return;
    const { clock, logger } = this.ctx;
    const capabilities = this.capabilitiesOf(r.chargePointId);
    const rateUnit = chargingRateUnitFor(capabilities.allowedChargingRateUnit);
    try {
      if (r.means === 'tx-default-profile') {
        const request = chargingProfileRequest(r.plan, { connectorId: r.connectorId, transactionId: null, plannedAtMs: r.plannedAtMs, departureMs: r.target.departureMs, rateUnit, purpose: 'TxDefaultProfile' });
        await this.setChargingProfile(client, r.connectorId, request, request, r.transactionId, r.plannedAtMs, r.plan, 'escalation', r.means);
        return;
      }
      if (r.means === 'charge-point-max-profile') {
        const { phases, voltageV } = r.plan.charger;
        const startMs = Math.floor(clock.now() / 1000) * 1000;
        const durationS = Math.max(60, Math.ceil((r.target.departureMs - startMs) / 1000));
        const limit = rateUnit === 'W' ? Math.floor(r.limitA * phases * voltageV) : Math.floor(r.limitA * 10 + 1e-9) / 10;
        const request: SetChargingProfileRequest = {
          connectorId: 0,
          csChargingProfiles: {
            chargingProfileId: ESCALATION_MAX_PROFILE_ID,
            stackLevel: ESCALATION_STACK_LEVEL,
            chargingProfilePurpose: 'ChargePointMaxProfile',
            chargingProfileKind: 'Absolute',
            validFrom: new Date(startMs).toISOString(),
            validTo: new Date(startMs + durationS * 1000).toISOString(),
            chargingSchedule: { duration: durationS, startSchedule: new Date(startMs).toISOString(), chargingRateUnit: rateUnit, chargingSchedulePeriod: [{ startPeriod: 0, limit, ...(phases < 3 ? { numberPhases: phases } : {}) }] },
          },
        };
        await this.setChargingProfile(client, r.connectorId, request, request, r.transactionId, r.plannedAtMs, r.plan, 'escalation', r.means);
        return;
      }
      const [action, params, takes] =
        r.means === 'remote-stop'
          ? (['RemoteStopTransaction', { transactionId: r.transactionId }, (s: string) => s === 'Accepted'] as const)
          : (['ChangeAvailability', { connectorId: r.connectorId, type: 'Inoperative' }, (s: string) => s === 'Accepted'] as const);
      if (r.means === 'remote-stop' && r.transactionId === null) return;
      const sentAtMs = clock.now();
      this.observer?.limitSent({ chargePointId: r.chargePointId, connectorId: r.connectorId, means: r.means, request: null, transactionId: r.transactionId, atMs: sentAtMs });
      let status: string;
      try {
        const answer = (await client.call(action, params, { callTimeoutMs: this.limitCallTimeoutMs, lane: 'safety' })) as { status?: unknown };
        status = typeof answer?.status === 'string' ? answer.status : 'error';
      } catch (err) {
        const code = (err as { rpcErrorCode?: unknown }).rpcErrorCode;
        status = typeof code === 'string' && code !== '' ? code : 'error';
      }
      // ChangeAvailability Scheduled: it waits for the transaction to end, which does not bind the limit now.
      this.observer?.limitAnswered({ chargePointId: r.chargePointId, connectorId: r.connectorId, sentAtMs, outcome: takes(status) || status === 'Scheduled' ? 'accepted' : status === 'error' ? 'unanswered' : 'refused', answer: status, binds: takes(status), atMs: clock.now() });
      logger.warn({ charge_point_id: r.chargePointId, connector_id: r.connectorId, means: r.means, action, status }, 'escalation call answered');
    } catch (err) {
      logger.error({ err, charge_point_id: r.chargePointId, connector_id: r.connectorId, means: r.means }, 'escalation not sent');
    }
  }

  /** A charge-now plan of a connector with no target (the fuse controller's): by the strategy ladder, as a site-load plan. */
  async sendPlan(r: PlanRequest): Promise<void> {
    const client = this.clientOf(r.chargePointId);
    if (!client) return;
    try {
      await this.sendProfile(client, r.connectorId, r.plan, r.plannedAtMs, r.target, true, true);
    } catch (err) {
      this.ctx.logger.error({ err, charge_point_id: r.chargePointId, connector_id: r.connectorId }, 'charge-now profile not sent');
    }
  }

  /** Clears the escalation's ChargePointMaxProfile (the connector's own profile holds again); a failure is logged, the profile's validTo ends it anyway. */
  async clearEscalationProfile(chargePointId: string, connectorId: number): Promise<void> {
    const client = this.clientOf(chargePointId);
    if (!client) return;
    try {
      const answer = await client.call('ClearChargingProfile', { id: ESCALATION_MAX_PROFILE_ID }, { callTimeoutMs: this.limitCallTimeoutMs, lane: 'safety' });
      this.ctx.logger.info({ charge_point_id: chargePointId, connector_id: connectorId, answer }, 'escalation ChargePointMaxProfile cleared: the connector\'s own profile holds again');
    } catch (err) {
      this.ctx.logger.warn({ err, charge_point_id: chargePointId, connector_id: connectorId }, 'escalation ChargePointMaxProfile not cleared (it ends at its validTo)');
    }
  }

  /**
   * remote-start-stop: where the plan holds the car at 0 its transaction is stopped
   * (RemoteStopTransaction; the stop does not end the target, plan-follower.ts), where it
   * charges again a transaction is started with the paused one's idTag. A charger that takes
   * no profile draws what it can: it is started only where the site ceilings allow the
   * connector's configured current, so a ceiling stays a ceiling, and never where the site
   * follower stopped it (site cap 0): that car it starts itself. Returns when the plan
   * next changes between charging and not.
   */
  private async remoteStep(client: ChargerClient, connectorId: number, plan: Plan, whole: SetChargingProfileRequest, transactionId: number | null, target: ChargingTarget, bySiteFollower: boolean): Promise<number | null> {
    const { clock, logger } = this.ctx;
    const strategies = this.charging.stores.strategies;
    const id = client.identity;
    const step = chargingNow(whole, clock.now());
    const configuredA = this.chargers.get(id)?.connectors?.find((c) => c.connector_id === connectorId)?.max_current_a ?? Infinity;
    const withinCeilings = plan.allowedCurrentA + 1e-9 >= configuredA;
    const charging = step.charging && withinCeilings;
    const log = { charge_point_id: id, connector_id: connectorId, strategy: 'remote-start-stop', departure: new Date(target.departureMs).toISOString() };
    if (!charging && transactionId !== null) {
      // Marked first: the StopTransaction that follows must find it.
      this.queue(`pause of ${id}`, () => strategies.setPaused(id, connectorId, transactionId));
      // Held at 0 by its plan, not for the site: a site cap left from an earlier start no longer says a restart is pending (planner.restartPending).
      const follow = this.charging.stores.follow;
      const before = follow.get(id, connectorId);
      if ((before.siteCapA ?? 0) > 0) this.queue(`site cap of ${id}`, () => follow.setSiteChange(id, connectorId, before.siteChangedAtMs ?? clock.now(), null));
      const status = await this.remoteCall(client, 'RemoteStopTransaction', { transactionId });
      if (status !== 'Accepted') this.queue(`pause of ${id}`, () => strategies.setPaused(id, connectorId, null));
      logger.info({ ...log, transaction_id: transactionId, status, within_ceilings: withinCeilings }, 'car paused by RemoteStopTransaction: the plan holds it at 0 now');
    } else if (charging && transactionId === null) {
      const paused = strategies.get(id, connectorId)?.pausedTransactionId ?? null;
      const idTag = paused === null ? undefined : this.ocpp.transaction(paused)?.idTag;
      // Stopped for the site (site cap 0): its own plan (a boundary, a new target, new prices) fits its share, which does not
      // say the site has room beside what the others draw now. Only the site follower starts it again (checkRemoteResume),
      // storing its site cap first, once limit − other load − the others' caps leaves its current plus the hysteresis. Its
      // plan (site-load) starts it also while that write still waits in the write queue (a store refusing writes).
      if (idTag !== undefined && !bySiteFollower && this.charging.stores.follow.get(id, connectorId).siteCapA === 0) {
        logger.info({ ...log, paused_transaction_id: paused }, 'car stopped for the site not started by its plan: the site follower starts it when the site has room');
      } else if (idTag !== undefined) {
        const status = await this.remoteCall(client, 'RemoteStartTransaction', { connectorId, idTag });
        logger.info({ ...log, paused_transaction_id: paused, status }, 'car resumed by RemoteStartTransaction: the plan charges now');
        // Refused or unanswered: the car stays stopped. Its site cap back to 0 (stopped for the site), so the site follower tries
        // again after site.raise_interval_s instead of counting a restart that never comes as pending for good.
        const follow = this.charging.stores.follow;
        const after = follow.get(id, connectorId);
        if (status !== 'Accepted' && (after.siteCapA ?? 0) > 0 && this.ocpp.chargePointView(id).openTransactions.every((t) => t.connectorId !== connectorId)) {
          this.queue(`site cap of ${id}`, () => follow.setSiteChange(id, connectorId, after.siteChangedAtMs ?? clock.now(), 0));
        }
      }
    }
    return step.nextChangeMs;
  }

  /**
   * A remote call's status, or the CallError's code, or 'error' when no answer came (charger-operations.ts logs and counts each).
   * In the safety lane: for a charger without smart charging a RemoteStop is its only lowering, and a start must stay in order
   * with the stops and profiles of the same plan; so neither waits behind an operator's call nor is refused for a safety call,
   * and each is bounded as the other limit calls are (half of site.lower_deadline_s), not by ocpp.operation_timeout_s.
   */
  private async remoteCall(client: ChargerClient, action: 'RemoteStartTransaction' | 'RemoteStopTransaction', params: Record<string, unknown>): Promise<string> {
    const outcome = await this.operations.call(client.identity, action, params, { by: 'gateway', lane: 'safety', timeoutMs: this.limitCallTimeoutMs });
    if (outcome.kind === 'answered') return typeof outcome.answer.status === 'string' ? outcome.answer.status : 'error';
    return outcome.kind === 'call-error' ? outcome.code : 'error';
  }

  /** The by-period and remote-start-stop strategies act again at each boundary of the plan they follow. */
  private tick(): void {
    const nowMs = this.ctx.clock.now();
    for (const [key, f] of this.followed) {
      if (f.nextBoundaryMs === null || f.nextBoundaryMs > nowMs) continue;
      const client = this.clientOf(f.chargePointId);
      if (!client) continue;
      f.nextBoundaryMs = null;
      const target = this.charging.stores.targets.get(f.chargePointId, f.connectorId);
      if (!target || target.endedAtMs != null || target.departureMs <= nowMs) {
        this.followed.delete(key);
        continue;
      }
      this.background(this.sendProfile(client, f.connectorId, f.plan, f.plannedAtMs, target), 'charging plan not sent at a period boundary', f.chargePointId, f.connectorId);
    }
  }

  /**
   * A write through the store's write queue, not waited for: while the store refuses writes
   * it waits in memory, in order (a pause is stored before the StopTransaction that follows
   * it), and the exchange with the charger goes on meanwhile.
   */
  private queue(what: string, work: () => void): void {
    this.writes.run(what, work).catch((err: unknown) => this.ctx.logger.error({ err }, `${what} not stored`));
  }

  /** This file's error policy for an exchange that runs on after its caller returned: logged, never thrown out. */
  private background(exchange: Promise<void>, what: string, chargePointId: string, connectorId: number | null): void {
    exchange.catch((err: unknown) => this.ctx.logger.error({ err, charge_point_id: chargePointId, connector_id: connectorId ?? undefined }, what));
  }
}
