// The OCPP 1.6J central system (docs/chargers.md): chargers connect over ws:// (security
// profile 1: HTTP basic auth per charge point) and, with ocpp.tls_port, over wss://
// (profile 2: TLS with the gateway's http.tls certificate, plus basic auth). Built on
// ocpp-rpc in strict mode: every call is validated against the official OCPP 1.6 JSON
// schemas before a handler sees it (a call that fails gets the protocol's CallError from
// the library) and every answer of ours before it leaves. Each handler commits its effect
// to SQLite (store/ocpp.ts) before it returns, so the answer follows the commit.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge } from 'prom-client';
import { RPCServer, createRPCError } from 'ocpp-rpc';
import type { AppContext } from '../context.js';
import type { ChargerConfig } from '../config/types.js';
import type { Events } from '../events.js';
import type { Module } from '../lifecycle.js';
import { TargetPlanner } from '../planning/target-plan.js';
import { siteContext } from '../planning/site-context.js';
import type { Plan } from '../planning/plan.js';
import { ChargingProfileStore } from '../store/charging-profiles.js';
import { ChargingTargetStore, type ChargingTarget } from '../store/charging-targets.js';
import { OcppConfigurationStore } from '../store/ocpp-configuration.js';
import type { ChargerView, ComponentHealth, ModuleViews } from '../ops/observability/views.js';
import { OcppStore, chargerSessionId } from '../store/ocpp.js';
import { chargingProfileRequest, chargingRateUnitFor } from './charging-profile.js';
import { RATE_UNIT_KEY, readChargingRateUnit } from './charger-configuration.js';
import { authorizeIdTag } from './id-tags.js';
import { requestClears, sendPendingClears } from './profile-clears.js';
import { ENERGY_REGISTER } from './register-readings.js';
import { sampledValueRows, type MeterValue } from './sampled-values.js';
import { registerOutcomeMetrics, SessionOutcomeRecorder } from './session-outcomes.js';

/** What an ocpp-rpc server-side client is to us (its typings are loose). */
interface ChargerClient {
  readonly identity: string;
  handle(method: string, handler: (call: { params: unknown; messageId: string }) => unknown): void;
  call(method: string, params: unknown, opts?: { callTimeoutMs?: number }): Promise<unknown>;
  on(event: string, listener: (...args: never[]) => void): void;
  close(opts?: { code?: number; reason?: string; force?: boolean }): Promise<unknown>;
}

interface ChargerState {
  connected: boolean;
  /** The charger's current connection; a new one replaces (and closes) an older one. */
  client: ChargerClient | null;
  connectedSinceMs: number | null;
  lastMessageAtMs: number | null;
  /** How far ahead of the gateway's clock the charger's last timestamp ahead was (ms), or null while none was. */
  clockAheadMs: number | null;
}

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest();

/** OCPP dateTime → ms; the library's schema check has already required a date-time string. */
function timestampMs(value: string, path: string): number {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw createRPCError('PropertyConstraintViolation', `${path} is not a date-time`, { path });
  return ms;
}

export class CentralSystem implements Module {
  readonly name = 'ocpp';
  private rpc?: RPCServer;
  private readonly servers: Server[] = [];
  private store?: OcppStore;
  private profiles?: ChargingProfileStore;
  private targets?: ChargingTargetStore;
  private planner?: TargetPlanner;
  private configuration?: OcppConfigurationStore;
  private outcomes?: SessionOutcomeRecorder;
  private readonly chargers: Map<string, ChargerConfig>;
  private readonly state = new Map<string, ChargerState>();
  private messages?: Counter<'action' | 'outcome'>;

  readonly views: ModuleViews = {
    health: { chargers: () => this.health() },
    chargers: () => this.chargerViews(),
  };

  constructor(private readonly ctx: AppContext) {
    this.chargers = new Map(ctx.config.chargers.map((c) => [c.id, c]));
  }

  async start(): Promise<void> {
    const { config, logger, db, metrics } = this.ctx;
    const marketArea = config.ocpp.market_area ?? config.prices.regions[0] ?? 'NL';
    const chargers = this.chargers;
    this.store = new OcppStore(db, marketArea, (chargePointId, connectorId) => chargers.get(chargePointId)?.connector_meters?.[String(connectorId)] ?? null);
    this.profiles = new ChargingProfileStore(db);
    this.targets = new ChargingTargetStore(db);
    this.planner = new TargetPlanner(db, config.forecast.enabled, siteContext(this.ctx));
    this.configuration = new OcppConfigurationStore(db);
    this.outcomes = new SessionOutcomeRecorder(db, config);
    registerOutcomeMetrics(metrics, db);
    for (const id of this.chargers.keys()) this.state.set(id, { connected: false, client: null, connectedSinceMs: null, lastMessageAtMs: null, clockAheadMs: null });
    this.messages = new Counter({ name: 'metergate_ocpp_messages_total', help: 'OCPP calls from chargers answered, by action and outcome (ok, error)', labelNames: ['action', 'outcome'] as const, registers: [metrics] });
    const state = this.state;
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
    const store = this.store;
    new Gauge({
      name: 'metergate_ocpp_open_transactions',
      help: 'Charger transactions started and not stopped yet',
      registers: [metrics],
      collect() {
        this.set(store.openTransactions());
      },
    });

    const rpc = new RPCServer({ protocols: ['ocpp1.6'], strictMode: true });
    this.rpc = rpc;
    rpc.auth((accept, reject, handshake) => {
      const charger = this.chargers.get(handshake.identity);
      if (!charger) {
        logger.warn({ charge_point_id: handshake.identity.slice(0, 48), remote: handshake.remoteAddress }, 'OCPP connection refused: unknown charge point id');
        reject(404, 'unknown charge point');
        return;
      }
      // Compared as hashes: equal length, constant time.
      if (!handshake.password || !charger.password || !timingSafeEqual(sha256(handshake.password), sha256(charger.password))) {
        logger.warn({ charge_point_id: charger.id, remote: handshake.remoteAddress, password_sent: handshake.password !== undefined }, 'OCPP connection refused: wrong or missing password');
        reject(401, 'unauthorized');
        return;
      }
      accept({ chargePointId: charger.id });
    });
    rpc.on('client', (client: ChargerClient) => this.attach(client));

    const { host, port, tls_port: tlsPort } = config.ocpp;
    const plain = createServer(upgradeRequired);
    plain.on('upgrade', rpc.handleUpgrade);
    await listen(plain, port, host);
    this.servers.push(plain);
    if (tlsPort !== undefined && config.http.tls) {
      const tls = config.http.tls;
      const secure = createTlsServer({ cert: readFileSync(tls.cert_file, 'utf8'), key: readFileSync(tls.key_file, 'utf8'), minVersion: 'TLSv1.2' }, upgradeRequired);
      secure.on('upgrade', rpc.handleUpgrade);
      secure.on('tlsClientError', (err: NodeJS.ErrnoException) => logger.debug({ code: err.code }, 'OCPP TLS handshake failed'));
      await listen(secure, tlsPort, host);
      this.servers.push(secure);
    }
    logger.info({ host, port: this.port(), tls_port: this.tlsPort(), chargers: this.chargers.size, market_area: marketArea }, 'OCPP central system listening');
  }

  /** The bound ws:// port (ocpp.port 0 picks a free one). */
  port(): number {
    return (this.servers[0]?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** The bound wss:// port, or null without ocpp.tls_port. */
  tlsPort(): number | null {
    return this.servers[1] ? (this.servers[1].address() as AddressInfo).port : null;
  }

  async stop(): Promise<void> {
    await this.rpc?.close({ code: 1001, reason: 'gateway stopping', awaitPending: true });
    for (const server of this.servers.splice(0)) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  private health(): ComponentHealth {
    const connected = [...this.state.values()].filter((s) => s.connected).length;
    return { status: 'ok', reason: `${connected} of ${this.chargers.size} charge point(s) connected` };
  }

  private chargerViews(): ChargerView[] {
    const store = this.store;
    if (!store) return [];
    return [...this.state.entries()].map(([id, st]) => ({
      chargePointId: id,
      connected: st.connected,
      connectedSinceMs: st.connected ? st.connectedSinceMs : null,
      lastMessageAtMs: st.lastMessageAtMs,
      clockAheadS: st.clockAheadMs === null ? null : Math.round(st.clockAheadMs / 1000),
      ...store.chargePointView(id),
      lastSession: this.outcomes!.lastOfCharger(id),
    }));
  }

  /**
   * Sends a connector's new plan to its charger (plan.updated, wired in daemon.ts). A charger
   * that is not connected gets it when it boots again or starts a transaction there.
   */
  applyPlan(e: Events['plan.updated']): void {
    const st = this.state.get(e.chargePointId);
    if (!st?.client) {
      this.ctx.logger.debug({ charge_point_id: e.chargePointId, connector_id: e.connectorId, configured: st !== undefined }, 'charging plan not sent: charger not connected');
      return;
    }
    const target = this.targets!.get(e.chargePointId, e.connectorId);
    if (!target) return;
    void this.sendProfile(st.client, e.connectorId, e.plan, e.plannedAtMs, target);
  }

  /**
   * Clears the profiles the gateway set on the connector (plan.cleared, wired in daemon.ts):
   * stored as pending, sent after the current message is answered, or when the charger
   * next connects (profile-clears.ts).
   */
  clearPlan(e: Events['plan.cleared']): void {
    if (!this.chargers.has(e.chargePointId)) return;
    requestClears(this.profiles!, e);
    const client = this.state.get(e.chargePointId)?.client;
    if (client) setImmediate(() => void sendPendingClears(client, this.profiles!, () => this.ctx.clock.now(), this.ctx.logger));
  }

  private readConfiguration(client: ChargerClient): Promise<void> {
    return readChargingRateUnit(client, this.configuration!, () => this.ctx.clock.now(), this.ctx.logger);
  }

  /** Plans the charger's upcoming targets (one connector, or all) from the stored prices and sends them. */
  private applyStoredTargets(client: ChargerClient, connectorId: number | null): void {
    // Clears that waited for the charger go first (same profile ids as a new plan's).
    void sendPendingClears(client, this.profiles!, () => this.ctx.clock.now(), this.ctx.logger);
    const nowMs = this.ctx.clock.now();
    const planner = this.planner!;
    const targets = this.targets!.upcoming(nowMs).filter((t) => t.chargePointId === client.identity && (connectorId === null || t.connectorId === connectorId));
    for (const target of targets) {
      let plan: Plan;
      try {
        plan = planner.plan(target, nowMs);
      } catch (err) {
        this.ctx.logger.error({ err, charge_point_id: target.chargePointId, connector_id: target.connectorId }, 'charging plan failed');
        continue;
      }
      void this.sendProfile(client, target.connectorId, plan, nowMs, target);
    }
  }

  /**
   * SetChargingProfile for the plan: TxProfile for the connector's open transaction, else
   * TxDefaultProfile. The answer (or why none came) is stored for the plan's GET. ocpp-rpc
   * sends one call at a time per charger, so answers are stored in the order sent.
   */
  private async sendProfile(client: ChargerClient, connectorId: number, plan: Plan, plannedAtMs: number, target: ChargingTarget): Promise<void> {
    const { clock, logger } = this.ctx;
    const id = client.identity;
    const open = this.store!.chargePointView(id).openTransactions.filter((t) => t.connectorId === connectorId);
    const transactionId = open.length > 0 ? open[open.length - 1]!.transactionId : null;
    // In W only for a charger that declared it takes only W (charger-configuration.ts).
    const rateUnit = chargingRateUnitFor(this.configuration!.get(id, RATE_UNIT_KEY)?.value);
    const request = chargingProfileRequest(plan, { connectorId, transactionId, plannedAtMs, departureMs: target.departureMs, rateUnit, charger: target });
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
    this.profiles!.put({
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
      this.profiles!.putTransactionPlan({
        transactionId,
        plannedAtMs,
        energyNeededWh: plan.energyNeededWh,
        plannedEnergyWh: plan.planned.energyWh,
        expectedCost: plan.planned.cost.expected,
        immediateCost: plan.immediate.cost.expected,
      });
    }
    const fields = { charge_point_id: id, connector_id: connectorId, purpose: profile.chargingProfilePurpose, transaction_id: transactionId, periods: profile.chargingSchedule.chargingSchedulePeriod.length, status, err: error === null ? undefined : { message: error } };
    if (status === 'Accepted') logger.info(fields, 'charging profile sent');
    else logger.warn(fields, 'charging profile not taken by the charger');
  }

  private attach(client: ChargerClient): void {
    const { logger, clock } = this.ctx;
    const id = client.identity;
    const charger = this.chargers.get(id)!;
    const store = this.store!;
    const st = this.state.get(id)!;
    const log = logger.child({ charge_point_id: id });
    // A charger that reconnects before its old socket timed out: the old one is stale.
    const previous = st.client;
    st.client = client;
    st.connected = true;
    st.connectedSinceMs = clock.now();
    log.info({ replaced: previous !== null }, 'charger connected');
    // A charger that booted before and only reconnects (many do not send BootNotification
    // again) gets its plans now; one that boots gets them after its BootNotification.
    const booted = store.chargePointView(id).vendor !== null;
    // Its allowed charging rate unit is read first when it never was.
    if (booted) {
      setImmediate(() => {
        if (st.client !== client) return;
        const read = this.configuration!.get(id, RATE_UNIT_KEY) ? Promise.resolve() : this.readConfiguration(client);
        void read.then(() => st.client === client && this.applyStoredTargets(client, null));
      });
    }
    if (previous) void previous.close({ code: 1001, reason: 'replaced by a new connection', force: true }).catch(() => undefined);
    client.on('close', ({ code }: { code: number }) => {
      if (st.client !== client) return;
      st.client = null;
      st.connected = false;
      log.info({ code }, 'charger disconnected');
    });
    // A frame that is not OCPP-J at all: logged, the connection kept (maxBadMessages is unbounded).
    client.on('badMessage', ({ buffer, error }: { buffer: Buffer; error: Error }) => {
      log.warn({ err: { message: error.message }, bytes: buffer.length }, 'malformed OCPP frame ignored');
    });
    client.on('strictValidationFailure', ({ messageId, method, error }: { messageId?: string; method?: string; error: Error }) => {
      this.messages!.inc({ action: method ?? 'unknown', outcome: 'invalid' });
      log.warn({ message_id: messageId, action: method, err: { message: error.message } }, 'OCPP call failed schema validation; answered with CallError');
    });

    // ocpp-rpc has checked params against the action's OCPP 1.6 schema before this runs (strict mode).
    const on = <P>(action: string, handler: (params: P) => unknown) => {
      client.handle(action, ({ params }) => {
        st.lastMessageAtMs = clock.now();
        try {
          const result = handler(params as P);
          this.messages!.inc({ action, outcome: 'ok' });
          return result;
        } catch (err) {
          this.messages!.inc({ action, outcome: 'error' });
          log.warn({ action, err: { message: (err as Error).message } }, 'OCPP call answered with CallError');
          throw err;
        }
      });
    };

    const nowIso = () => new Date(clock.now()).toISOString();
    // A charger stamps what it measured; a message may be late (queued while offline) but
    // never from the future. A timestamp ahead of the gateway's clock by more than
    // clock.step_tolerance_s means the charger's clock is off: its sessions would be priced
    // at the wrong periods. Said once per change, shown on the status page and /metrics;
    // the answers to Heartbeat and BootNotification carry the gateway's time to set it by.
    const toleranceMs = (this.ctx.config.clock?.step_tolerance_s ?? 60) * 1000;
    const checkClock = (stampedMs: number, what: string) => {
      const aheadMs = stampedMs - clock.now();
      if (aheadMs > toleranceMs) {
        if (st.clockAheadMs === null) log.warn({ ahead_s: Math.round(aheadMs / 1000), message: what }, 'charger clock ahead of the gateway clock: its timestamps (and sessions) are off until it sets its clock');
        st.clockAheadMs = aheadMs;
      } else if (st.clockAheadMs !== null && aheadMs > -toleranceMs) {
        log.info({ message: what }, 'charger clock back in step with the gateway clock');
        st.clockAheadMs = null;
      }
    };

    on('BootNotification', (p: { chargePointVendor: string; chargePointModel: string; chargePointSerialNumber?: string; firmwareVersion?: string }) => {
      store.recordBoot(id, { vendor: p.chargePointVendor, model: p.chargePointModel, serialNumber: p.chargePointSerialNumber ?? null, firmwareVersion: p.firmwareVersion ?? null }, clock.now());
      log.info({ vendor: p.chargePointVendor, model: p.chargePointModel }, 'charger booted');
      // After the answer: a charger that (re)boots gets the plans of its upcoming targets.
      // Its allowed charging rate unit first: the profiles are built in it.
      setImmediate(() => void this.readConfiguration(client).then(() => this.applyStoredTargets(client, null)));
      return { status: 'Accepted', currentTime: nowIso(), interval: this.ctx.config.ocpp.heartbeat_interval_s };
    });

    on('Heartbeat', () => {
      store.recordHeartbeat(id, clock.now());
      return { currentTime: nowIso() };
    });

    on('StatusNotification', (p: { connectorId: number; status: string; errorCode: string; info?: string; timestamp?: string }) => {
      const nowMs = clock.now();
      const atMs = p.timestamp ? timestampMs(p.timestamp, 'timestamp') : nowMs;
      if (p.timestamp) checkClock(atMs, 'StatusNotification');
      // The status before this one, from the store: a change that spans a gateway restart is seen too.
      const previous = store.connectorStatus(id, p.connectorId);
      store.recordStatus(id, { connectorId: p.connectorId, status: p.status, errorCode: p.errorCode, info: p.info ?? null, atMs }, nowMs);
      this.ctx.events.emit('charger.connector-status', { chargePointId: id, connectorId: p.connectorId, status: p.status, errorCode: p.errorCode, atMs, previous });
      return {};
    });

    on('Authorize', (p: { idTag: string }) => ({ idTagInfo: { status: authorizeIdTag(charger.auth, p.idTag) } }));

    on('StartTransaction', (p: { connectorId: number; idTag: string; meterStart: number; timestamp: string; reservationId?: number }) => {
      const status = authorizeIdTag(charger.auth, p.idTag);
      const startedAtMs = timestampMs(p.timestamp, 'timestamp');
      checkClock(startedAtMs, 'StartTransaction');
      const { transaction, repeated } = store.startTransaction(
        { chargePointId: id, connectorId: p.connectorId, idTag: p.idTag, meterStartWh: p.meterStart, startedAtMs, reservationId: p.reservationId ?? null, idTagStatus: status },
        clock.now(),
      );
      log.info({ transaction_id: transaction.transactionId, connector_id: p.connectorId, repeated, id_tag_status: transaction.idTagStatus, session: chargerSessionId(id, transaction.transactionId) }, repeated ? 'StartTransaction repeated: same transaction answered again' : 'transaction started');
      // After the answer (the charger needs the transactionId): the plan as a TxProfile for it
      // (the connector's default target is stored first, when it applies).
      if (transaction.idTagStatus === 'Accepted') {
        this.ctx.events.emit('charger.transaction-started', { chargePointId: id, connectorId: p.connectorId, transactionId: transaction.transactionId, startedAtMs: transaction.startedAtMs });
        setImmediate(() => this.applyStoredTargets(client, p.connectorId));
      }
      return { transactionId: transaction.transactionId, idTagInfo: { status: transaction.idTagStatus } };
    });

    on('MeterValues', (p: { connectorId: number; transactionId?: number; meterValue: MeterValue[] }) => {
      const rows = sampledValueRows(p.meterValue, 'meterValue');
      if (rows.length > 0) checkClock(Math.max(...rows.map((r) => r.sampledAtMs)), 'MeterValues');
      const known = store.addMeterValues(id, p.connectorId, p.transactionId ?? null, rows, clock.now());
      if (!known) log.warn({ transaction_id: p.transactionId }, 'MeterValues for a transaction this charger does not have; values kept without it');
      else if (p.transactionId !== undefined && rows.some((r) => r.measurand === ENERGY_REGISTER)) this.ctx.events.emit('charger.energy-measured', { chargePointId: id, connectorId: p.connectorId, transactionId: p.transactionId });
      return {};
    });

    on('StopTransaction', (p: { transactionId: number; meterStop: number; timestamp: string; idTag?: string; reason?: string; transactionData?: MeterValue[] }) => {
      const rows = sampledValueRows(p.transactionData ?? [], 'transactionData');
      const stoppedAtMs = timestampMs(p.timestamp, 'timestamp');
      checkClock(stoppedAtMs, 'StopTransaction');
      const nowMs = clock.now();
      // What the session came to is committed with the stop (ocpp/session-outcomes.ts).
      const outcome = store.stopTransaction(
        { chargePointId: id, transactionId: p.transactionId, meterStopWh: p.meterStop, stoppedAtMs, reason: p.reason ?? null, idTag: p.idTag ?? null },
        rows,
        nowMs,
        (tx) => this.outcomes!.record(tx, nowMs),
      );
      if (outcome === 'unknown') {
        // Answered so the charger drops it from its queue; nothing is stored.
        log.warn({ transaction_id: p.transactionId }, 'StopTransaction for a transaction this charger does not have; nothing stored');
      } else {
        log.info({ transaction_id: p.transactionId, repeated: outcome === 'repeated', session: chargerSessionId(id, p.transactionId) }, 'transaction stopped');
        const tx = outcome === 'stopped' ? store.transaction(p.transactionId) : undefined;
        if (tx) this.ctx.events.emit('charger.transaction-stopped', { chargePointId: id, connectorId: tx.connectorId, transactionId: tx.transactionId, stoppedAtMs });
      }
      return p.idTag === undefined ? {} : { idTagInfo: { status: authorizeIdTag(charger.auth, p.idTag) } };
    });
  }
}

/** A plain HTTP request (a browser, a port scan) gets an answer instead of hanging until it times out. */
function upgradeRequired(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(426, { 'content-type': 'text/plain; charset=utf-8', upgrade: 'websocket', connection: 'close' });
  res.end('metergate OCPP 1.6J central system: connect a charger over a websocket (subprotocol ocpp1.6) to this URL with its charge point id as the last path segment\n');
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
