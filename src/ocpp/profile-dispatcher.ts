// What the central system sends to chargers on its own (docs/chargers.md "Applying plans",
// "Schedules in A or W", "Clearing profiles"): a connector's plan as SetChargingProfile, the
// clears of profiles nobody wants any more, and the GetConfiguration read of the unit a
// charger takes its schedules in. Plans go out when they change (plan.updated), when a
// charger boots or reconnects, and when a transaction starts.
//
// Error policy: an outbound exchange never throws out of here. A charger that does not
// answer has that stored as the answer ('error'); every answer is written through the
// store's write queue (store/write-queue.ts), so while the database refuses writes it waits
// in memory and is written when it takes them again; anything else that fails is logged
// with the charger and connector, and the exchange is tried again on the next plan or connect.
import type { AppContext } from '../context.js';
import type { Events } from '../events.js';
import type { ChargingServices } from '../planning/charging-services.js';
import type { Plan } from '../planning/plan.js';
import type { ChargingTarget } from '../store/charging-targets.js';
import type { OcppStore } from '../store/ocpp.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import type { ChargerClient } from './charger-client.js';
import { RATE_UNIT_KEY, readChargingRateUnit } from './charger-configuration.js';
import { chargingProfileRequest, chargingRateUnitFor } from './charging-profile.js';
import { requestClears, sendPendingClears } from './profile-clears.js';

export class ProfileDispatcher {
  constructor(
    private readonly ctx: Pick<AppContext, 'clock' | 'logger'>,
    private readonly charging: ChargingServices,
    private readonly ocpp: OcppStore,
    private readonly writes: StoreWriteQueue,
    private readonly chargers: ReadonlyMap<string, unknown>,
    /** The charger's current connection, or null while it is not connected. */
    private readonly clientOf: (chargePointId: string) => ChargerClient | null,
  ) {}

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
    this.background(this.sendProfile(client, e.connectorId, e.plan, e.plannedAtMs, target), 'charging profile not sent', e.chargePointId, e.connectorId);
  }

  /**
   * Clears the profiles the gateway set on the connector (plan.cleared, wired in daemon.ts):
   * stored as pending, sent after the current message is answered, or when the charger
   * next connects (profile-clears.ts).
   */
  clearPlan(e: Events['plan.cleared']): void {
    if (!this.chargers.has(e.chargePointId)) return;
    const stored = this.writes.run(`profile clears of ${e.chargePointId}`, () => requestClears(this.charging.stores.profiles, e));
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
          if (this.charging.stores.configuration.get(client.identity, RATE_UNIT_KEY) === undefined) await this.readConfiguration(client);
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
    setImmediate(() => this.background((async () => this.applyStoredTargets(client, connectorId))(), 'charging plan not sent after StartTransaction', client.identity, connectorId));
  }

  private isCurrent(client: ChargerClient): boolean {
    return this.clientOf(client.identity) === client;
  }

  private readConfiguration(client: ChargerClient): Promise<void> {
    return readChargingRateUnit(client, this.charging.stores.configuration, this.writes, () => this.ctx.clock.now(), this.ctx.logger);
  }

  private sendClears(client: ChargerClient): Promise<void> {
    return sendPendingClears(client, this.charging.stores.profiles, this.writes, () => this.ctx.clock.now(), this.ctx.logger);
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
   * SetChargingProfile for the plan: TxProfile for the connector's open transaction, else
   * TxDefaultProfile. The answer (or why none came) is stored for the plan's GET. ocpp-rpc
   * sends one call at a time per charger, so answers are stored in the order sent.
   */
  private async sendProfile(client: ChargerClient, connectorId: number, plan: Plan, plannedAtMs: number, target: ChargingTarget): Promise<void> {
    const { clock, logger } = this.ctx;
    const { profiles, configuration } = this.charging.stores;
    const id = client.identity;
    const open = this.ocpp.chargePointView(id).openTransactions.filter((t) => t.connectorId === connectorId);
    const transactionId = open.length > 0 ? open[open.length - 1]!.transactionId : null;
    // In W only for a charger that declared it takes only W (charger-configuration.ts).
    const rateUnit = chargingRateUnitFor(configuration.get(id, RATE_UNIT_KEY)?.value);
    const request = chargingProfileRequest(plan, { connectorId, transactionId, plannedAtMs, departureMs: target.departureMs, rateUnit });
    const sentAtMs = clock.now();
    let status: string;
    let error: string | null = null;
    try {
      const answer = (await client.call('SetChargingProfile', request)) as { status: string };
      status = answer.status;
    } catch (err) {
      status = 'error';
      error = (err as Error).message.slice(0, 500);
    }
    const profile = request.csChargingProfiles;
    // While the store refuses writes the answer waits in its queue (store/write-queue.ts).
    await this.writes.run(`SetChargingProfile answer of ${id}`, () => {
      profiles.put({
        chargePointId: id,
        connectorId,
        purpose: profile.chargingProfilePurpose,
        transactionId,
        chargingProfileId: profile.chargingProfileId,
        plannedAtMs,
        sentAtMs,
        status,
        error,
        periods: profile.chargingSchedule.chargingSchedulePeriod.length,
        requestJson: JSON.stringify(request),
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
    const fields = { charge_point_id: id, connector_id: connectorId, purpose: profile.chargingProfilePurpose, transaction_id: transactionId, periods: profile.chargingSchedule.chargingSchedulePeriod.length, status, err: error === null ? undefined : { message: error } };
    if (status === 'Accepted') logger.info(fields, 'charging profile sent');
    else logger.warn(fields, 'charging profile not taken by the charger');
  }

  /** This file's error policy for an exchange that runs on after its caller returned: logged, never thrown out. */
  private background(exchange: Promise<void>, what: string, chargePointId: string, connectorId: number | null): void {
    exchange.catch((err: unknown) => this.ctx.logger.error({ err, charge_point_id: chargePointId, connector_id: connectorId ?? undefined }, what));
  }
}
