// Composition root: builds every module from one frozen config, wires who hears which event
// on the one event bus (events.ts), starts the modules in order and stops them in reverse.
// Nothing else in the code base creates long-lived resources or subscribes modules to each other.
import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import { systemClock } from './clock.js';
import type { Config } from './config/types.js';
import { LazyModule, type Module } from './lifecycle.js';
import type { AppContext } from './context.js';
import type { MeterStatus } from './domain.js';
import type { ChargingServices } from './planning/charging-services.js';
import type { LimitSender } from './ocpp/limit-attempts.js';
import { EventBus } from './events.js';
import { createLogger } from './log.js';
import { ClockGuard } from './ops/clock/clock-guard.js';
import { Liveness } from './ops/systemd/liveness.js';
import { registerOpsMetrics } from './ops/observability/metrics.js';
import { installProcessFaultHandlers } from './ops/process-faults.js';
import { NetworkScanWatcher } from './ops/network/network-scan.js';
import { Probes } from './ops/observability/probes.js';
import { SystemdWatchdog } from './ops/systemd/watchdog.js';
import { databasePath, openDaemonDatabase, pageSizeForMeters } from './store/db.js';
import { Outbox } from './store/outbox.js';
import { ReadingsStore } from './store/readings.js';
import { meterSourceTypes } from './sources/index.js';
import type { MeterIdentity, MeterSource } from './sources/source.js';
import { TickJoin } from './sources/tick-join.js';
import type { BackoffPolicy } from './uplink/backoff.js';
import { SessionRetention } from './ops/retention/session-retention.js';
import { leaveVerdict, trustingGate, type ClockGate } from './uplink/clock-gate.js';
import { MqttConnection } from './uplink/connection.js';
import { DeviceMessages } from './uplink/device-messages.js';
import { OutboxPublisher } from './uplink/publisher.js';
import { MeasurementRecorder } from './uplink/recorder.js';
import { BUILD_DATE_MS, VERSION } from './version.js';
import { startupFailureLine } from './ops/startup-failure.js';
import { SiteMeter } from './site/site-meter.js';

export function createContext(config: Config, overrides: Partial<AppContext> = {}): AppContext {
  const logger = overrides.logger ?? createLogger(config.log_level);
  return Object.freeze({
    config,
    logger,
    // After an upgrade the journal says what the new program changed in the database.
    db:
      overrides.db ??
      openDaemonDatabase(
        databasePath(config.data_dir),
        (applied) =>
          logger.info({ migrations: applied.map((m) => `${String(m.version).padStart(3, '0')}_${m.name}`), software_version: VERSION }, `database migrated: ${applied.length} schema migration(s) applied`),
        pageSizeForMeters(config.meters.length),
      ),
    clock: overrides.clock ?? systemClock,
    metrics: overrides.metrics ?? new Registry(),
    liveness: overrides.liveness ?? new Liveness(),
    probes: overrides.probes ?? new Probes(),
    events: overrides.events ?? new EventBus(logger),
    ...(overrides.configPath === undefined ? {} : { configPath: overrides.configPath }),
  });
}

/** The store-and-forward pipeline: recorder (readings + outbox in SQLite), and with an `mqtt` section the outbox publisher and the device messages over one MQTT connection. */
export interface Uplink {
  /** In start order. */
  readonly modules: Module[];
  readonly readings: ReadingsStore;
  readonly outbox: Outbox;
  readonly recorder: MeasurementRecorder;
  /** Null without an `mqtt` section (readings are still stored for pricing). */
  readonly publisher: OutboxPublisher | null;
  readonly deviceMessages: DeviceMessages | null;
}

export interface UplinkOptions {
  readonly clockGate?: ClockGate;
  readonly meters?: () => readonly MeterStatus[] | null;
  /** What a meter said about itself (sources/source.ts MeterSource.identity), for boot_notification. */
  readonly meterIdentity?: (resourceId: string) => MeterIdentity | null | undefined;
  readonly buildDateMs?: number;
  /** Backoff of the automatic retries of a topic the broker refused (default: the reconnect backoff). */
  readonly heldRetry?: BackoffPolicy;
}

/**
 * Builds the store-and-forward pipeline (part of buildModules; tests and benchmarks build it
 * alone) and wires its events: a commit with outbox rows wakes the publisher, evictions are
 * counted by it. Samples reach the recorder through `recorder.record` / `recordInTick`.
 */
export function buildUplink(ctx: AppContext, opts: UplinkOptions = {}): Uplink {
  const { config, events } = ctx;
  const clockGate = opts.clockGate ?? trustingGate(ctx.clock);
  const readings = new ReadingsStore(ctx.db);
  const outbox = new Outbox(ctx.db, { maxRows: config.store.outbox_max_rows, maxBytes: config.store.outbox_max_bytes });
  const recorder = new MeasurementRecorder({ ...ctx, readings, outbox, clockGate });
  const modules: Module[] = [recorder];
  if (!config.mqtt) return { modules, readings, outbox, recorder, publisher: null, deviceMessages: null };
  const connection = new MqttConnection({ mqtt: config.mqtt, clientId: config.mqtt.client_id ?? `metergate-${config.gateway_id ?? hostname()}`, logger: ctx.logger });
  const buildDateMs = opts.buildDateMs ?? BUILD_DATE_MS;
  const aheadToleranceMs = (config.clock?.step_tolerance_s ?? 60) * 1000;
  const publisher = new OutboxPublisher({ ...ctx, outbox, connection, heldRetry: opts.heldRetry, mayLeave: (stampedAtMs) => leaveVerdict(clockGate, buildDateMs, stampedAtMs, aheadToleranceMs) });
  const deviceMessages = new DeviceMessages({ ...ctx, connection, recorder, clockGate, meters: opts.meters ?? (() => null), meterIdentity: opts.meterIdentity });
  modules.push(publisher, deviceMessages);
  events.on('sample.stored', ({ lastOutboxId }) => publisher.wake(lastOutboxId));
  events.on('outbox.evicted', ({ count }) => publisher.countEvicted(count));
  return { modules, readings, outbox, recorder, publisher, deviceMessages };
}

/** The modules of a running gateway, in start order, with their events wired. */
export function buildModules(ctx: AppContext): Module[] {
  const { events } = ctx;
  const modules: Module[] = [];
  // Clock safety: every sample passes the guard before anything stores or publishes it;
  // it holds samples while the clock is not trusted (docs/clock-safety.md).
  const clockGuard = new ClockGuard(ctx);
  modules.push(clockGuard);
  // network_scan content (interfaces + what answers on each bus), re-checked periodically and
  // when a meter changes state; network.changed at start and on every change.
  const networkScan = new NetworkScanWatcher(ctx);
  const sources: MeterSource[] = [];
  const parts = ctx.config.meters.length > 0 ? meterSourceTypes().partition(ctx.config) : [];
  // Store and forward: samples that pass the clock gate are committed (reading + outbox
  // row) before the publisher drains them to the broker (src/uplink).
  const uplink = buildUplink(ctx, {
    clockGate: clockGuard,
    meters: () => ctx.probes.meters?.() ?? null,
    // What a meter says about itself (a P1 meter's identification line) for boot_notification.
    meterIdentity: (resourceId) => {
      for (const source of sources) {
        const identity = source.identity?.(resourceId);
        if (identity !== undefined) return identity;
      }
      // Its source has not started yet: not heard yet, if it is a source whose meters name themselves.
      return parts.some((p) => p.type.identifiesMeters && p.meters.some((m) => m.resource_id === resourceId)) ? null : undefined;
    },
  });
  modules.push(...uplink.modules);
  // Meter sources (sources/index.ts): one module per source type with a configured bus, its
  // code imported only then (Modbus: modbus-serial; P1: serialport). Each reads only its own
  // buses and meters and reports on the bus (sample.taken, poll.tick-done, meter.state-changed).
  for (const { type, buses, meters } of parts) {
    modules.push(
      new LazyModule(type.kind, async () => {
        const create = await type.load();
        const source = create({ ...ctx, config: { ...ctx.config, buses, meters }, storedReadings: (resourceId, count) => uplink.readings.newest(resourceId, count) });
        sources.push(source);
        return source;
      }),
    );
  }
  modules.push(networkScan);
  // The site meter (config site.meter), followed for charging plans: its latest reading is the site's other load.
  const siteMeter = ctx.config.site.meter !== undefined ? new SiteMeter(ctx) : null;
  if (siteMeter) modules.push(siteMeter);
  // The charging planner and stores, shared by the HTTP plan route, the central system, the
  // followers and the replanner: built once, when the first of them starts.
  let chargingServices: Promise<ChargingServices> | null = null;
  const charging = (): Promise<ChargingServices> => (chargingServices ??= import('./planning/charging-services.js').then((m) => m.buildChargingServices(ctx)));
  // Prices, forecasts, price views and the HTTP API are imported when their module starts
  // and only when configured: a feature that is off costs no resident memory (its code,
  // and the time-zone data the price calendar touches at load).
  // Before the HTTP API, so its first request already sees the price views.
  if (ctx.config.prices.regions.length > 0) {
    modules.push(
      new LazyModule('price-views', async () => new (await import('./ops/observability/price-views.js')).PriceViews(ctx)),
    );
  }
  // The HTTP API before the price jobs: it serves (health, metrics) while a backfill runs.
  if (ctx.config.http.enabled) modules.push(new LazyModule('http', async () => new (await import('./http/server.js')).HttpServer({ ...ctx, charging: await charging(), centralSystem: () => centralSystem?.instance ?? null })));
  // OCPP 1.6J central system for the configured chargers (docs/chargers.md); ocpp-rpc and
  // its schemas are loaded only when a charger is configured.
  const centralSystem = ctx.config.chargers.length > 0 ? new LazyModule('ocpp', async () => new (await import('./ocpp/central-system.js')).CentralSystem(ctx, await charging())) : null;
  if (centralSystem) modules.push(centralSystem);
  // Follows each charging session against its plan and plans the rest again when it falls behind.
  const planFollower = centralSystem ? new LazyModule('plan-follower', async () => new (await import('./ocpp/plan-follower.js')).PlanFollower(ctx, await charging())) : null;
  if (planFollower) modules.push(planFollower);
  // The fuse controller: one per connector that holds a plan, keeping site.limit_a whatever the
  // chargers answer (docs/planning.md "The fuse controller"); after the central system, whose
  // calls it makes and whose answers it hears.
  const fuse =
    centralSystem && (siteMeter || ctx.config.site.limit_a !== undefined)
      ? new LazyModule('fuse-controller', async () => {
          const cs = centralSystem.instance!;
          const { FuseController } = await import('./ocpp/fuse-controller.js');
          let sender: LimitSender | null = null;
          const controller = new FuseController(ctx, await charging(), { sendLimit: (r) => sender!.sendLimit(r), clearEscalationProfile: (id, c) => sender!.clearEscalationProfile(id, c) }, (id) => cs.isConnected(id), ctx.metrics);
          sender = cs.controlLimits(controller);
          return controller;
        })
      : null;
  if (fuse) modules.push(fuse);
  // Price forecasts: recomputed hourly and after each price sync; the HTTP endpoint only
  // reads the store.
  const forecast = new LazyModule('forecast', async () => {
    if (!ctx.config.forecast.enabled) return null;
    const [{ ForecastService, forecastMarket }, { ForecastStore }, { PriceStore }, { ExogenousStore }] = await Promise.all([
      import('./forecast/service.js'),
      import('./store/forecasts.js'),
      import('./store/prices.js'),
      import('./store/exogenous.js'),
    ]);
    return new ForecastService({ ...ctx, forecasts: new ForecastStore(ctx.db), prices: new PriceStore(ctx.db), exogenous: new ExogenousStore(ctx.db), market: forecastMarket });
  });
  modules.push(forecast);
  // Charging plans made again when prices arrive (plan.updated); the targets come over HTTP.
  const replanner = new LazyModule('charging-plans', async () => new (await import('./planning/replan.js')).Replanner(ctx, await charging()));
  modules.push(replanner);
  // Day-ahead prices: background backfill, then the cron-scheduled sync and repair (prices.updated).
  modules.push(
    new LazyModule('price-sync', async () => {
      const p = ctx.config.prices;
      if (p.source !== 'entsoe' || !p.entsoe.security_token) {
        // Same condition and words as PriceSync.start(), without loading the ENTSO-E client.
        ctx.logger.warn({ source: p.source }, 'price sync off: prices.source is none or prices.entsoe.security_token is not set; import CSV files with `metergate prices import`');
        return null;
      }
      const [{ PriceSync }, { exogenousProviderTypes }] = await Promise.all([import('./prices/sync.js'), import('./prices/exogenous/index.js')]);
      // Exogenous series (load, wind, solar forecasts) from every provider the config turns on.
      return new PriceSync({ ...ctx, exogenous: exogenousProviderTypes().build(ctx) });
    }),
  );
  // Prices another process stored (`prices import` while the daemon runs): prices.updated at once (prices/import-watch.ts).
  if (ctx.config.prices.regions.length > 0) modules.push(new LazyModule('price-import-watch', async () => new (await import('./prices/import-watch.js')).PriceImportWatch(ctx)));
  // Settled charger values and sessions past store.sessions_retention_days go, by the trusted clock.
  modules.push(new SessionRetention(ctx, clockGuard));
  registerOpsMetrics(ctx);
  // Keep last: READY=1 goes out once everything above has started; STOPPING=1 goes first.
  modules.push(new SystemdWatchdog(ctx));

  // Who hears which event (events.ts lists them all; buildUplink wires the publisher's).
  // A sample: source → clock guard → recorder, which commits a poll slot once every source
  // has finished it (one durable transaction per slot).
  const ticks = new TickJoin(parts.length, () => uplink.recorder.tickDone());
  events.on('sample.taken', (sample) => clockGuard.submit(sample));
  if (siteMeter) events.on('sample.taken', (sample) => siteMeter.sampleTaken(sample));
  // After the site meter took the sample: the fuse controller compares every connector with it.
  if (fuse) events.on('sample.taken', (sample) => fuse.instance?.sampleTaken(sample));
  events.on('sample.released', (sample) => uplink.recorder.recordInTick(sample));
  events.on('poll.tick-done', ({ source }) => ticks.done(source));
  events.on('meter.state-changed', () => networkScan.check());
  const { deviceMessages } = uplink;
  if (deviceMessages) events.on('network.changed', (content) => deviceMessages.networkScan(content));
  // Not awaited: a backfill must not wait for forecasts. Plans are made again at once, on
  // the new prices (and the forecast stored so far).
  events.on('prices.updated', (update) => {
    void forecast.instance?.refresh();
    centralSystem?.instance?.pricesUpdated();
    replanner.instance?.replan(update.marketArea);
  });
  events.on('exogenous.updated', () => void forecast.instance?.refresh());
  // A new plan goes to the connector's charger as a charging profile (when it is connected).
  if (centralSystem) events.on('plan.updated', (plan) => centralSystem.instance?.applyPlan(plan));
  // What a charger measures and says of its connectors: is its session keeping up with the plan?
  if (planFollower) {
    events.on('charger.energy-measured', (e) => planFollower.instance?.energyMeasured(e));
    events.on('charger.connector-status', (e) => planFollower.instance?.connectorStatus(e));
    events.on('charger.transaction-started', (e) => planFollower.instance?.transactionStarted(e));
    events.on('charger.transaction-stopped', (e) => planFollower.instance?.transactionStopped(e));
  }
  // A car joining the site's share (after the plan follower stored its default target) lowers the others at once;
  // one leaving it (after the plan follower ended its target) leaves room to raise them again.
  if (fuse) {
    events.on('charger.transaction-started', (e) => fuse.instance?.sharingChanged(e));
    events.on('charger.transaction-stopped', (e) => fuse.instance?.sharingChanged(e));
    events.on('charger.connector-status', (e) => fuse.instance?.connectorStatus(e));
    events.on('plan.updated', (e) => e.reason !== 'site-load' && fuse.instance?.sharingChanged(e));
  }
  // A target deleted or ended: the profiles set for it are cleared from the charger.
  if (centralSystem) events.on('plan.cleared', (e) => centralSystem.instance?.clearPlan(e));
  // /healthz, /metrics, the status page and the network scan read the modules' views (Module.views).
  ctx.probes.observe(modules);
  return modules;
}

export class Daemon {
  private started: Module[] = [];

  constructor(
    readonly ctx: AppContext,
    private readonly modules: Module[] = buildModules(ctx),
  ) {}

  async start(): Promise<void> {
    for (const module of this.modules) {
      this.ctx.logger.debug({ module: module.name }, 'starting');
      await module.start();
      this.started.push(module);
    }
    this.ctx.logger.info({ modules: this.started.map((m) => m.name) }, 'metergate started');
  }

  async stop(): Promise<void> {
    while (this.started.length > 0) {
      const module = this.started.pop()!;
      try {
        await module.stop();
      } catch (err) {
        this.ctx.logger.error({ err, module: module.name }, 'error while stopping');
      }
    }
    this.ctx.db.close();
    this.ctx.logger.info('metergate stopped');
  }
}

/** Runs until SIGINT/SIGTERM, then stops cleanly. */
export async function runDaemon(config: Config, overrides: Partial<AppContext> = {}): Promise<Daemon> {
  const daemon = new Daemon(createContext(config, overrides));
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    daemon.ctx.logger.info({ signal }, 'shutting down');
    daemon.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  // What escapes every module's own error handling: a rejection is logged, counted and
  // survived; an uncaught exception stops cleanly and exits 70 (ops/process-faults.ts).
  const stopOnce = async () => {
    if (stopping) return;
    stopping = true;
    await daemon.stop();
  };
  installProcessFaultHandlers({ logger: daemon.ctx.logger, metrics: daemon.ctx.metrics, stop: stopOnce });
  try {
    await daemon.start();
  } catch (err) {
    daemon.ctx.logger.fatal({ err }, 'start-up failed');
    // A person at a terminal reads one line, not the log's JSON stack trace.
    process.stderr.write(`${startupFailureLine(err, config)}\n`);
    await daemon.stop();
    process.exit(1);
  }
  return daemon;
}
