// The OCPP central system, 1.6J and 2.0.1 on the same ports (docs/chargers.md): the module
// that composes its three parts, each with its own error policy, and shows what they know
// (views, /metrics):
//   transport.ts           how chargers connect (ws/wss, handshake auth, the subprotocol, listen/stop)
//   message-handlers.ts    the calls 1.6 chargers send (Boot, Heartbeat, Status, Start/Stop, MeterValues, clock checks);
//                          v201/ the calls 2.0.1 stations send, onto the same store (v201/handlers.ts)
//   profile-dispatcher.ts  what the gateway sends on its own (SetChargingProfile, clears, GetConfiguration)
// The planner and the charging stores are shared, built once by daemon.ts. Every write of
// the parts goes through one store write queue (store/write-queue.ts): while the database
// refuses writes they wait in memory, in order, and are written when it takes them again.
import { connectorPlanView } from './plan-view.js';
import { Counter, Gauge } from 'prom-client';
import { ConfigError, loadConfig } from '../config/load.js';
import type { AppContext } from '../context.js';
import type { ChargerConfig } from '../config/types.js';
import type { Events } from '../events.js';
import type { Module } from '../lifecycle.js';
import type { ChargingServices } from '../planning/charging-services.js';
import type { ChargerView, ComponentHealth, ModuleViews } from '../ops/observability/views.js';
import type { OcppStore } from '../store/ocpp.js';
import { ClearCacheOwedStore } from '../store/ocpp-clear-cache-owed.js';
import { LocalListStore } from '../store/ocpp-local-lists.js';
import { ReservationStore } from '../store/ocpp-reservations.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import { withCallLanes, type LanedChargerClient } from './call-lanes.js';
import type { ChargerClient, ChargerState } from './charger-client.js';
import { chargePointView } from './charge-point-view.js';
import { storedCapabilities } from './charger-configuration.js';
import { registerChargerMetrics } from './charger-metrics.js';
import { ChargerOperations, DEFAULT_OPERATION_TIMEOUT_S, type ChargerOperationsPort } from './charger-operations.js';
import { ChargerSessions, DEFAULT_LATE_VALUES_S } from './charger-sessions.js';
import { authChanges, removesIdTags } from './id-tag-reload.js';
import { LocalListSync } from './local-list-sync.js';
import { ChargerMessageHandlers } from './message-handlers.js';
import type { LimitObserver, LimitSender } from './limit-attempts.js';
import { ProfileDispatcher } from './profile-dispatcher.js';
import { ChargerReservations } from './reservations.js';
import { registerOutcomeMetrics, SessionOutcomeRecorder } from './session-outcomes.js';
import { OcppTransport } from './transport.js';
import { attach201 } from './v201/handlers.js';
import { actionsWith201Form } from './v201/operation-forms.js';
import { limitClient201 } from './v201/limit-client.js';
import { capabilitiesFromDeviceModel } from './v201/smart-charging-capabilities.js';
import { lowestLimitA } from '../planning/external-limit.js';
import { ExternalChargingLimits, schedulesOf } from './v201/external-limits.js';
import type { SmartCharging201 } from './v201/smart-charging.js';
import { Ocpp201ChargingLimitStore } from '../store/ocpp201-charging-limits.js';
import { Ocpp201TransactionStore } from '../store/ocpp201-transactions.js';
import { DeviceModelStore } from '../store/ocpp201-device-model.js';
import { DeviceModels } from './v201/device-model.js';
import { SignedMeterMonitor } from '../signed-meter/monitor.js';
import { SecurityEventLog } from './security-events.js';
import { securityEventSeverity } from './security-event-severity.js';

interface Parts {
  readonly store: OcppStore;
  readonly outcomes: SessionOutcomeRecorder;
  readonly writes: StoreWriteQueue;
  readonly handlers: ChargerMessageHandlers;
  readonly dispatcher: ProfileDispatcher;
  readonly operations: ChargerOperations;
  readonly localLists: LocalListSync;
  readonly reservations: ChargerReservations;
  readonly clearCacheOwed: ClearCacheOwedStore;
  readonly signedMeter: SignedMeterMonitor;
  readonly transactions201: Ocpp201TransactionStore;
  readonly securityEvents: SecurityEventLog;
  readonly deviceModels: DeviceModels;
  /** What 2.0.1 stations report of the limits on their charging (v201/smart-charging.ts). */
  readonly smartCharging201: SmartCharging201;
}

export class CentralSystem implements Module {
  readonly name = 'ocpp';
  private readonly chargers: Map<string, ChargerConfig>;
  private readonly state = new Map<string, ChargerState>();
  private readonly transport: OcppTransport;
  private parts?: Parts;
  /** The fuse controller (fuse-controller.ts), when the site has a limit or a meter: told of every connection change. */
  private fuse: { connectionChanged(chargePointId: string, why: 'disconnected' | 'not-confirmed'): void } | null = null;
  /**
   * Chargers whose id tags lost some on SIGHUP, and since when: a ClearCache after their next
   * local list. Kept in the store too (migration 231), so a restart in between still sends it;
   * this copy is what counts while the store refuses writes.
   */
  private readonly clearCacheOwed = new Map<string, number>();
  /** ClearCaches on their way (a boot and a reconnect close together send one). */
  private readonly clearCacheSending = new Set<string>();
  private offTransactionStopped?: () => void;
  /** Each 2.0.1 connection's translated client for the limit calls (limitClient). */
  private readonly limitClients201 = new WeakMap<LanedChargerClient, LanedChargerClient>();
  private readonly onSighup = (): void => {
    this.reloadIdTags();
  };

  readonly views: ModuleViews = {
    health: { chargers: () => this.health() },
    chargers: () => this.chargerViews(),
  };

  constructor(
    private readonly ctx: AppContext,
    private readonly charging: ChargingServices,
  ) {
    this.chargers = new Map(ctx.config.chargers.map((c) => [c.id, c]));
    this.transport = new OcppTransport(ctx, this.chargers, (client) => this.attach(client));
  }

  async start(): Promise<void> {
    const { config, logger, db, metrics } = this.ctx;
    const marketArea = config.ocpp.market_area ?? config.prices.regions[0] ?? 'NL';
    const chargers = this.chargers;
    const outcomes = new SessionOutcomeRecorder(db, config);
    const dropped = new Counter({
      name: 'metergate_ocpp_register_values_dropped_total',
      help: 'Charger energy register values left out of their session, by reason: below-meter-start / above-meter-stop (breaks monotonicity against the transaction edges), after-cut-off (arrived later than sessions.late_meter_values_s after the stop)',
      labelNames: ['charge_point_id', 'reason'] as const,
      registers: [metrics],
    });
    const sessions = new ChargerSessions(db, {
      marketArea,
      connectorMeter: (chargePointId, connectorId) => chargers.get(chargePointId)?.connector_meters?.[String(connectorId)] ?? null,
      lateValuesMs: (config.sessions?.late_meter_values_s ?? DEFAULT_LATE_VALUES_S) * 1000,
      // What the session came to is committed with the stop, the charger's or the gateway's.
      onStopped: (tx, nowMs) => outcomes.record(tx, nowMs),
      onSignedDropped: (chargePointId, transactionId, count) => signedMeter.signedDropped(chargePointId, transactionId, count),
      onDropped: (d) => {
        dropped.inc({ charge_point_id: d.chargePointId, reason: d.reason });
        logger.warn({ charge_point_id: d.chargePointId, transaction_id: d.transactionId, sampled_at: new Date(d.sampledAtMs).toISOString(), energy_kwh: d.energyKwh, reason: d.reason }, 'charger register value left out of its session');
      },
    });
    const store = sessions.store;
    // Signed meter values (OCMF): each stopped session's outcome counted and logged once its stop committed.
    const signedMeter = new SignedMeterMonitor(metrics, store, sessions.signed, () => [...chargers.values()], logger);
    this.offTransactionStopped = this.ctx.events.on('charger.transaction-stopped', (e) => signedMeter.transactionStopped(e.transactionId));
    registerOutcomeMetrics(metrics, db);
    // The security events the stations report: stored, counted, the last one shown (security-events.ts).
    const securityEvents = new SecurityEventLog(db, metrics, [...this.chargers.keys()]);
    for (const id of this.chargers.keys()) this.state.set(id, { connected: false, client: null, connectedSinceMs: null, lastMessageAtMs: null, clockAheadMs: null });
    const { writes } = this.charging;
    // The operator's calls (HTTP API, CLI): every outcome typed, none hangs (charger-operations.ts).
    const transactions201 = new Ocpp201TransactionStore(db);
    const deviceModelStore = new DeviceModelStore(db);
    const operations = new ChargerOperations(
      this.ctx,
      metrics,
      this.chargers,
      (id) => ({ client: this.state.get(id)?.client ?? null, lastMessageAtMs: this.state.get(id)?.lastMessageAtMs ?? null, storedVersion: () => transactions201.versionOf(id) }),
      (config.ocpp.operation_timeout_s ?? DEFAULT_OPERATION_TIMEOUT_S) * 1000,
      transactions201,
      deviceModelStore,
    );
    // A 2.0.1 station's device model: asked for after its accepted boot, stored from its NotifyReport parts.
    const deviceModels = new DeviceModels(deviceModelStore, writes, () => operations, () => this.ctx.clock.now(), logger);
    writes
      .run('device models of stations no longer listed', () => deviceModelStore.forgetAllBut([...this.chargers.keys()]))
      .catch((err: unknown) => logger.error({ err }, 'device models of removed stations not forgotten'));
    // The remote-start-stop strategy's RemoteStop/StartTransaction go through the same call path.
    // A 2.0.1 station's connection takes the dispatcher's 1.6-shaped limit calls in their 2.0.1 form (v201/limit-client.ts).
    // What a charger takes: a 1.6 charger's GetConfiguration keys, a 2.0.1 station's SmartChargingCtrlr variables (v201/smart-charging-capabilities.ts).
    const capabilitiesOf = (id: string) =>
      (this.state.get(id)?.client?.protocol ?? (transactions201.versionOf(id) === '2.0.1' ? 'ocpp2.0.1' : 'ocpp1.6')) === 'ocpp2.0.1'
        ? capabilitiesFromDeviceModel((component, variable) => deviceModelStore.actualValue(id, component, variable))
        : storedCapabilities(this.charging.stores.configuration, id);
    const dispatcher = new ProfileDispatcher(this.ctx, this.charging, store, writes, this.chargers, (id) => this.limitClient(id), operations, capabilitiesOf);
    const listStore = new LocalListStore(db);
    const localLists = new LocalListSync(operations, listStore, writes, () => this.ctx.clock.now(), logger);
    // After a BootNotification's answer: the plans (dispatcher), then the local authorization
    // list of a charger with configured id tags, so that it authorizes them offline.
    const after = {
      booted: (client: ChargerClient) => {
        dispatcher.booted(client);
        this.syncLocalList(client.identity, 'boot');
      },
      transactionStarted: (client: ChargerClient, connectorId: number) => dispatcher.transactionStarted(client, connectorId),
    };
    // Reservations the gateway made (ReserveNow): ended by the charger's messages, by expiry, by a cancel.
    const reservations = new ChargerReservations(operations, new ReservationStore(db), writes, () => this.ctx.clock.now(), logger);
    const handlers = new ChargerMessageHandlers(this.ctx, metrics, sessions, after, writes, reservations);
    // What a SIGHUP before a restart left owed.
    const clearCacheOwed = new ClearCacheOwedStore(db);
    // Owed to a charger no longer configured, or now on accept_all (no list, so none is ever sent): forgotten, not kept for good.
    const listed = [...this.chargers].filter(([, c]) => c.auth !== 'accept_all').map(([id]) => id);
    writes
      .run('ClearCache owed to chargers no longer listed', () => clearCacheOwed.forgetAllBut(listed))
      .then((n) => {
        if (n > 0) logger.info({ forgotten: n }, 'ClearCache owed to chargers removed from the config or on accept_all forgotten');
      })
      .catch((err: unknown) => logger.error({ err }, 'ClearCache owed to removed chargers not forgotten'));
    for (const id of listed) {
      const since = clearCacheOwed.owedSinceMs(id);
      if (since !== null) this.clearCacheOwed.set(id, since);
    }
    // External limits 2.0.1 stations reported: one more ceiling of their connectors' plans (planning/external-limit.ts).
    const limitStore = new Ocpp201ChargingLimitStore(db);
    const externalLimits = new ExternalChargingLimits(limitStore.allExternal());
    this.charging.planner.useExternalLimits(externalLimits);
    const smartCharging201: SmartCharging201 = { store: limitStore, limits: externalLimits, limitChanged: (id, evseId) => this.replanConnectors(id, evseId) };
    this.parts = { store, outcomes, writes, handlers, dispatcher, operations, localLists, reservations, clearCacheOwed, signedMeter, transactions201, securityEvents, deviceModels, smartCharging201 };
    // Tags removed from the file while the daemon was stopped: the list a charger holds has
    // them, so its cache may too (the same rule as a SIGHUP's, against the list it accepted).
    for (const [id, charger] of this.chargers) {
      const held = listStore.get(id);
      if (held && !this.clearCacheOwed.has(id) && removesIdTags({ id_tags: [...held.idTags] }, charger.auth)) {
        this.oweClearCache(id);
        logger.info({ charge_point_id: id, list_version: held.listVersion }, 'id tags removed from the config since the charger\'s list: ClearCache owed after its next list');
      }
    }
    this.registerMetrics(store, writes);
    registerChargerMetrics(metrics, () => this.chargerViews());
    dispatcher.start();
    reservations.start();
    await this.transport.start();
    // The chargers' id tags follow the config file without a restart (reloadIdTags).
    if (this.ctx.configPath !== undefined) process.on('SIGHUP', this.onSighup);
    logger.info({ host: config.ocpp.host, port: this.port(), tls_port: this.tlsPort(), chargers: this.chargers.size, market_area: marketArea }, 'OCPP central system listening');
  }

  /**
   * The fuse controller's hold on the chargers (built after this module started, daemon.ts):
   * every call for a connector's limit and its answer reach it, and every connection change.
   */
  controlLimits(fuse: LimitObserver & { connectionChanged(chargePointId: string, why: 'disconnected' | 'not-confirmed'): void }): LimitSender {
    const parts = this.parts;
    if (!parts) throw new Error('the central system has not started');
    parts.dispatcher.observe(fuse);
    this.fuse = fuse;
    return parts.dispatcher;
  }

  /**
   * The plans of a charger's connectors with a target (one connector, or all: null) made again
   * now and sent (plan.updated, external-limit): a limit the station reported changed what they may draw.
   */
  private replanConnectors(chargePointId: string, connectorId: number | null): void {
    const nowMs = this.ctx.clock.now();
    const { planner, stores } = this.charging;
    for (const target of stores.targets.upcoming(nowMs)) {
      if (target.chargePointId !== chargePointId || (connectorId !== null && target.connectorId !== connectorId)) continue;
      try {
        this.ctx.events.emit('plan.updated', { chargePointId, connectorId: target.connectorId, marketArea: target.marketArea, reason: 'external-limit', plannedAtMs: nowMs, plan: planner.plan(target, nowMs) });
      } catch (err) {
        this.ctx.logger.error({ err, charge_point_id: chargePointId, connector_id: target.connectorId }, 'charging plan after an external limit failed');
      }
    }
  }

  /**
   * The charger's connection as the profile dispatcher sends its limit calls on it: a 1.6
   * charger's as it is, a 2.0.1 station's through its translation (v201/limit-client.ts),
   * one per connection (the dispatcher tells a current connection from an old one by identity).
   */
  private limitClient(chargePointId: string): LanedChargerClient | null {
    const client = this.state.get(chargePointId)?.client ?? null;
    if (!client || client.protocol === 'ocpp1.6') return client;
    let translated = this.limitClients201.get(client);
    if (!translated) {
      translated = limitClient201(client, this.parts!.transactions201);
      this.limitClients201.set(client, translated);
    }
    return translated;
  }

  /** Whether the charger is connected now. */
  isConnected(chargePointId: string): boolean {
    return this.state.get(chargePointId)?.connected === true;
  }

  /** The operator's calls to chargers (HTTP API), once started. */
  get operations(): ChargerOperationsPort | null {
    return this.parts?.operations ?? null;
  }

  /** The local authorization lists the chargers hold, once started. */
  get localLists(): LocalListSync | null {
    return this.parts?.localLists ?? null;
  }

  /** The 2.0.1 stations' device models, once started. */
  get deviceModels(): DeviceModels | null {
    return this.parts?.deviceModels ?? null;
  }

  /** The reservations the gateway made, once started. */
  get reservations(): ChargerReservations | null {
    return this.parts?.reservations ?? null;
  }

  /** The bound ws:// port (ocpp.port 0 picks a free one). */
  port(): number {
    return this.transport.port();
  }

  /** The bound wss:// port, or null without ocpp.tls_port. */
  tlsPort(): number | null {
    return this.transport.tlsPort();
  }

  async stop(): Promise<void> {
    process.off('SIGHUP', this.onSighup);
    this.offTransactionStopped?.();
    this.parts?.dispatcher.stop();
    this.parts?.reservations.stop();
    await this.transport.stop();
    // The followers have stopped before (reverse start order): one last try of what waits.
    this.parts?.writes.stop();
  }

  /** A connector's new plan goes to its charger (plan.updated, wired in daemon.ts). */
  applyPlan(e: Events['plan.updated']): void {
    this.parts?.dispatcher.applyPlan(e);
  }

  /** Prices arrived (prices.updated, wired in daemon.ts): outcomes that could not be priced at their stop are stored now. */
  pricesUpdated(): void {
    const parts = this.parts;
    if (!parts) return;
    try {
      const n = parts.outcomes.priceOutstanding((txId) => parts.store.transaction(txId), this.ctx.clock.now());
      if (n > 0) this.ctx.logger.info({ sessions: n }, 'charger session outcomes priced after a price update');
    } catch (err) {
      // Tried again at the next price update.
      this.ctx.logger.warn({ err }, 'charger session outcomes not priced after a price update');
    }
  }

  /** The profiles the gateway set on the connector are cleared (plan.cleared, wired in daemon.ts). */
  /** Sends a charger's plans again (its profiles were cleared from outside). */
  reapplyPlans(chargePointId: string): void {
    this.parts?.dispatcher.reapply(chargePointId);
  }

  clearPlan(e: Events['plan.cleared']): void {
    this.parts?.dispatcher.clearPlan(e);
  }

  private registerMetrics(store: OcppStore, writes: StoreWriteQueue): void {
    const { metrics } = this.ctx;
    const state = this.state;
    new Gauge({
      name: 'metergate_ocpp_store_pending_writes',
      help: 'Charger messages and answers waiting in memory for the store to take writes again',
      registers: [metrics],
      collect() {
        this.set(writes.view().pendingWrites);
      },
    });
    new Gauge({
      name: 'metergate_ocpp_charger_connected',
      help: 'Whether a configured charge point is connected now (1) or not (0)',
      labelNames: ['charge_point_id'] as const,
      registers: [metrics],
      collect() {
        for (const [id, s] of state) this.set({ charge_point_id: id }, s.connected ? 1 : 0);
      },
    });
    new Gauge({
      name: 'metergate_ocpp_charger_clock_ahead_seconds',
      help: 'How far ahead of the gateway clock a charge point stamped its last message ahead (0: none ahead beyond clock.step_tolerance_s)',
      labelNames: ['charge_point_id'] as const,
      registers: [metrics],
      collect() {
        for (const [id, s] of state) this.set({ charge_point_id: id }, s.clockAheadMs === null ? 0 : Math.round(s.clockAheadMs / 1000));
      },
    });
    new Gauge({
      name: 'metergate_ocpp_charger_clock_offset_seconds',
      help: 'How far off the gateway clock a charge point\'s clock is (its stamp minus the gateway time; negative: behind) while it is known to be off beyond clock.step_tolerance_s, else 0',
      labelNames: ['charge_point_id'] as const,
      registers: [metrics],
      collect() {
        for (const [id, s] of state) this.set({ charge_point_id: id }, s.clockOffsetMs ? Math.round(s.clockOffsetMs / 1000) : 0);
      },
    });
    const strategies = this.charging.stores.strategies;
    new Gauge({
      name: 'metergate_ocpp_charging_strategy',
      help: 'The charging strategy in force per connector (1; docs/chargers.md "Chargers that say no"): tx-profile, tx-default-profile, tx-profile-by-period, tx-default-profile-by-period, charge-point-max-profile, charge-point-max-profile-by-period, remote-start-stop',
      labelNames: ['charge_point_id', 'connector_id', 'strategy'] as const,
      registers: [metrics],
      collect() {
        this.reset();
        for (const s of strategies.all()) this.set({ charge_point_id: s.chargePointId, connector_id: String(s.connectorId), strategy: s.strategy }, 1);
      },
    });
    const reservations = this.parts!.reservations;
    new Gauge({
      name: 'metergate_ocpp_reservations',
      help: 'Reservations in force (ReserveNow made by the gateway, not ended nor expired), per charge point',
      labelNames: ['charge_point_id'] as const,
      registers: [metrics],
      collect() {
        for (const id of state.keys()) this.set({ charge_point_id: id }, reservations.active(id).length);
      },
    });
    new Gauge({
      name: 'metergate_ocpp_open_transactions',
      help: 'Charger transactions started and not stopped yet',
      registers: [metrics],
      collect() {
        this.set(store.openTransactions());
      },
    });
  }

  private health(): ComponentHealth {
    const connected = [...this.state.values()].filter((s) => s.connected).length;
    const reason = `${connected} of ${this.chargers.size} charge point(s) connected`;
    const writes = this.parts?.writes.view();
    if (!writes || writes.writable) return { status: 'ok', reason };
    // Chargers are answered (or told to send again); what they sent waits in memory (store health says more).
    return { status: 'degraded', reason: `${reason}; ${writes.pendingWrites} charger write(s) waiting in memory: the store refuses writes (${writes.reason ?? 'unknown'})` };
  }

  private chargerViews(): ChargerView[] {
    const parts = this.parts;
    if (!parts) return [];
    return [...this.state.entries()].map(([id, st]) => this.chargerView(parts, id, st));
  }

  private chargerView(parts: NonNullable<typeof this.parts>, id: string, st: ChargerState): ChargerView {
    const ocppVersion = st.client ? (st.client.protocol === 'ocpp2.0.1' ? '2.0.1' : '1.6') : parts.transactions201.versionOf(id);
    return {
      chargePointId: id,
      connected: st.connected,
      connectedSinceMs: st.connected ? st.connectedSinceMs : null,
      lastMessageAtMs: st.lastMessageAtMs,
      clockAheadS: st.clockAheadMs === null ? null : Math.round(st.clockAheadMs / 1000),
      clockProblem: st.clockProblem ?? null,
      ...chargePointView(parts.store, id),
      ocppVersion,
      // A 2.0.1 station takes the operations that have a 2.0.1 form (the status page offers only those).
      operations: ocppVersion === '2.0.1' ? actionsWith201Form() : null,
      lastSession: parts.outcomes.lastOfCharger(id),
      lastSignedMeter: parts.signedMeter.lastOfCharger(id),
      lastSecurityEvent: lastSecurityEventView(parts.securityEvents, id),
      externalLimits: this.externalLimitViews(parts, id),
      supportedProfiles: storedCapabilities(this.charging.stores.configuration, id).supportedFeatureProfiles,
      deviceModel: this.deviceModelView(id, ocppVersion),
      chargingStrategies: this.charging.stores.strategies
        .all()
        .filter((s) => s.chargePointId === id)
        .map((s) => ({ connectorId: s.connectorId, strategy: s.strategy, reason: s.reason, chosenAtMs: s.chosenAtMs })),
      plans: (this.ctx.config.chargers.find((c) => c.id === id)?.connectors ?? [])
        .map((k) => connectorPlanView(k.connector_id, this.charging.stores.targets.get(id, k.connector_id), this.charging.stores.profiles.get(id, k.connector_id)))
        .filter((v) => v !== null),
      reservations: parts.reservations.active(id).map((r) => ({ reservationId: r.reservationId, connectorId: r.connectorId, expiryAtMs: r.expiryAtMs, confirmed: r.answerStatus === 'Accepted' })),
    };
  }

  /** The external limits a 2.0.1 station reported, in A at the EVSE's configured phases and voltage (the station's first connector for a station-wide limit). */
  private externalLimitViews(parts: NonNullable<typeof this.parts>, id: string): ChargerView['externalLimits'] {
    const connectors = this.chargers.get(id)?.connectors ?? [];
    const nowMs = this.ctx.clock.now();
    return parts.smartCharging201.limits.of(id).map((l) => {
      const k = connectors.find((c) => c.connector_id === l.evseId) ?? connectors[0];
      return { evseId: l.evseId, source: l.source, gridCritical: l.gridCritical, limitANow: lowestLimitA(schedulesOf(l), nowMs, { phases: k?.phases ?? 3, voltageV: k?.voltage_v ?? 230 }), receivedAtMs: l.receivedAtMs };
    });
  }

  /** A 2.0.1 station's device model for the status page: rows stored and its newest report. */
  private deviceModelView(chargePointId: string, version: '1.6' | '2.0.1' | null): ChargerView['deviceModel'] {
    const store = this.parts?.deviceModels.store;
    if (!store || version !== '2.0.1') return null;
    const last = store.reports(chargePointId)[0];
    return {
      rows: store.rowCount(chargePointId),
      lastReport: last ? { reportBase: last.reportBase, status: last.status, complete: last.completedAtMs !== null, atMs: last.completedAtMs ?? last.lastPartAtMs ?? last.requestedAtMs } : null,
    };
  }

  /**
   * SIGHUP: reads the config file again (validated as at start: a file that fails is refused
   * and logged, the id tags in force stay) and takes from it only the chargers' `auth` and
   * `id_token_type` (a change of either's type or groups goes as a Full list).
   * Each connected charger whose id tags changed gets the difference as a SendLocalList of
   * the next version (local-list-sync.ts); one not connected gets it when it connects, as
   * at start. Returns whether the file was taken.
   */
  reloadIdTags(): boolean {
    const { logger, configPath } = this.ctx;
    if (configPath === undefined) return false;
    let chargers;
    try {
      chargers = loadConfig(configPath).chargers;
    } catch (err) {
      // Its problems name paths and values of the file (never a password: the schema's messages do not echo them).
      const problems = err instanceof ConfigError ? err.problems : [(err as Error).message];
      logger.error({ config: configPath, problems }, 'SIGHUP: config file refused; the id tags in force stay');
      return false;
    }
    const changes = authChanges(this.chargers, chargers);
    if (changes.added.length > 0 || changes.removed.length > 0) logger.warn({ added: changes.added, removed: changes.removed }, 'SIGHUP: chargers added to or removed from the config take effect at the next restart');
    for (const { chargePointId, auth, idTokenType, fullList } of changes.changed) {
      if (removesIdTags(this.chargers.get(chargePointId)!.auth, auth)) this.oweClearCache(chargePointId);
      this.chargers.set(chargePointId, { ...this.chargers.get(chargePointId)!, auth, id_token_type: idTokenType });
      if (this.state.get(chargePointId)?.connected) this.syncLocalList(chargePointId, 'reload', fullList ? 'Full' : 'auto');
    }
    logger.info({ config: configPath, changed: changes.changed.map((c) => ({ charge_point_id: c.chargePointId, id_tags: c.auth === 'accept_all' ? 'accept_all' : c.auth.id_tags.length })) }, 'SIGHUP: chargers\' id tags reloaded');
    return true;
  }

  /** Brings the charger's local authorization list to the configured id tags, after the current message (local-list-sync.ts); logged, never thrown. */
  private syncLocalList(chargePointId: string, after: 'boot' | 'reconnect' | 'reload', updateType: 'auto' | 'Full' = 'auto'): void {
    const localLists = this.parts?.localLists;
    if (!localLists || this.chargers.get(chargePointId)?.auth === 'accept_all') return;
    const log = this.ctx.logger;
    setImmediate(() =>
      void localLists
        .sync(chargePointId, updateType, 'gateway')
        .then(
          (r) => {
            if (r.kind === 'sent' && !(r.outcome.kind === 'answered' && r.outcome.answer.status === 'Accepted')) log.warn({ charge_point_id: chargePointId, after, outcome: r.outcome.kind, status: r.outcome.kind === 'answered' ? r.outcome.answer.status : undefined }, 'local authorization list not taken by the charger');
          },
          (err: unknown) => log.error({ err, charge_point_id: chargePointId }, 'local authorization list not sent'),
        )
        .then(() => this.clearCacheAfterRemoval(chargePointId))
        // Started by a charger's connection: nothing may escape as an unhandled rejection.
        .catch((err: unknown) => log.error({ err, charge_point_id: chargePointId }, 'ClearCache after removed id tags not sent')),
    );
  }

  /** Id tags of the charger were removed: it owes a ClearCache from now on, kept across a restart (migration 231). */
  private oweClearCache(chargePointId: string): void {
    const parts = this.parts;
    if (!parts) return;
    const sinceMs = this.ctx.clock.now();
    this.clearCacheOwed.set(chargePointId, sinceMs);
    // Not awaited: while the store refuses writes it waits in the queue; this process knows it meanwhile.
    parts.writes
      .run(`ClearCache owed to ${chargePointId}`, () => parts.clearCacheOwed.owe(chargePointId, sinceMs))
      .catch((err: unknown) => this.ctx.logger.error({ err, charge_point_id: chargePointId }, 'ClearCache owed not stored: a restart before it is sent forgets it'));
  }

  /** After the list: a charger whose id tags lost some on SIGHUP clears its authorization cache, which could still accept them offline. */
  private async clearCacheAfterRemoval(chargePointId: string): Promise<void> {
    const parts = this.parts;
    if (!parts || !this.clearCacheOwed.has(chargePointId) || this.clearCacheSending.has(chargePointId)) return;
    this.clearCacheSending.add(chargePointId);
    const sentAtMs = this.ctx.clock.now();
    const outcome = await parts.operations.call(chargePointId, 'ClearCache', {}, { by: 'gateway' }).finally(() => this.clearCacheSending.delete(chargePointId));
    const log = this.ctx.logger;
    // A CallError or an invalid answer is an answer too: sending it again would get the same (the operator sees the warning).
    // Rejected (ClearCache.conf: the charger could not clear it now): the cache may still accept the removed tags, so it stays owed and goes again after the charger's next list.
    if (outcome.kind === 'answered' && outcome.answer.status !== 'Accepted') {
      log.warn({ charge_point_id: chargePointId, status: outcome.answer.status }, 'ClearCache after removed id tags rejected by the charger; still owed, sent again after its next list');
      return;
    }
    if (outcome.kind === 'answered' || outcome.kind === 'call-error' || outcome.kind === 'invalid-answer' || outcome.kind === 'unknown-charger' || outcome.kind === 'invalid-request') {
      // Paid unless a removal read after it was sent owes another.
      if ((this.clearCacheOwed.get(chargePointId) ?? Infinity) <= sentAtMs) this.clearCacheOwed.delete(chargePointId);
      parts.writes
        .run(`ClearCache paid to ${chargePointId}`, () => parts.clearCacheOwed.paid(chargePointId, sentAtMs))
        .catch((err: unknown) => log.error({ err, charge_point_id: chargePointId }, 'ClearCache paid not stored: it is sent again after the next restart'));
      if (outcome.kind === 'answered') log.info({ charge_point_id: chargePointId, status: outcome.answer.status }, 'ClearCache sent after id tags were removed');
      else log.warn({ charge_point_id: chargePointId, outcome: outcome.kind }, 'ClearCache after removed id tags refused by the charger; not sent again (clear its cache by hand)');
      return;
    }
    // Not delivered (not connected, timeout, connection lost): still owed, sent after its next list (its next connection).
    log.warn({ charge_point_id: chargePointId, outcome: outcome.kind }, 'ClearCache after removed id tags not answered');
  }

  /** An authenticated charger's new connection (transport.ts): its state, its calls' handlers, its plans. */
  private attach(connection: ChargerClient): void {
    const { logger, clock } = this.ctx;
    // Wrapped once: every part gets this same object, its calls in lanes (call-lanes.ts).
    const client = withCallLanes(connection);
    const id = client.identity;
    const st = this.state.get(id)!;
    const { handlers, dispatcher, writes, transactions201, deviceModels } = this.parts!;
    const log = logger.child({ charge_point_id: id, ocpp_version: client.protocol === 'ocpp2.0.1' ? '2.0.1' : '1.6' });
    // A charger that reconnects before its old socket timed out: the old one is stale.
    const previous = st.client;
    st.client = client;
    st.connected = true;
    st.connectedSinceMs = clock.now();
    log.info({ replaced: previous !== null }, 'charger connected');
    // What it holds is not known on a new connection until it confirms a limit again.
    this.fuse?.connectionChanged(id, 'not-confirmed');
    const version = client.protocol === 'ocpp2.0.1' ? '2.0.1' : '1.6';
    writes.run(`OCPP version of ${id}`, () => transactions201.recordVersion(id, version)).catch((err: unknown) => log.warn({ err }, 'OCPP version of the connection not stored'));
    // A charger that booted before and only reconnects (after a gateway restart, many do not boot
    // again) gets its plans now (a 2.0.1 station's through its translated client), and the id tags configured now as well, whichever its version.
    const limits = this.limitClient(id)!;
    dispatcher.connected(limits);
    if (this.parts!.store.chargePointView(id).vendor !== null) this.syncLocalList(id, 'reconnect');
    if (previous) void previous.close({ code: 1001, reason: 'replaced by a new connection', force: true }).catch(() => undefined);
    client.on('close', ({ code }: { code: number }) => {
      if (st.client !== client) return;
      st.client = null;
      st.connected = false;
      this.fuse?.connectionChanged(id, 'disconnected');
      log.info({ code }, 'charger disconnected');
    });
    // Its calls' handlers by the subprotocol agreed at the handshake; after a 2.0.1 boot its plans, as for 1.6 (profile-dispatcher.ts), its local list and its device model report (v201/device-model.ts), after a transaction start its plan.
    const booted201 = () => {
      dispatcher.booted(limits);
      this.syncLocalList(id, 'boot');
      deviceModels.afterAccepted(id, 'boot');
    };
    if (version === '2.0.1') attach201(handlers, this.ctx, transactions201, client, () => this.chargers.get(id)!.auth, st, this.parts!.reservations, booted201, this.parts!.securityEvents, (evseId) => dispatcher.transactionStarted(limits, evseId), deviceModels, this.charging, this.parts!.smartCharging201);
    else handlers.attach(client, () => this.chargers.get(id)!.auth, st, this.parts!.securityEvents);
    // An answer of the charger's to an operator operation that fails the schema is told apart from its CallError.
    client.on('strictValidationFailure', ({ error, isCall, outbound }: { error: unknown; isCall: boolean; outbound: boolean }) => {
      if (!isCall && !outbound) this.parts?.operations.answerFailedSchema(error);
    });
  }
}

/** The charger's last reported security event and how many are kept, for the status page (null before any). */
function lastSecurityEventView(log: SecurityEventLog, chargePointId: string): ChargerView['lastSecurityEvent'] {
  const e = log.last(chargePointId);
  return e ? { type: e.type, severity: securityEventSeverity(e.ocppVersion, e.type), occurredAtMs: e.occurredAtMs, receivedAtMs: e.receivedAtMs, techInfo: e.techInfo, kept: log.store.count(chargePointId) } : null;
}
