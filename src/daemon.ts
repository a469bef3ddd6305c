// Composition root: builds every module from one frozen config, starts them in order,
// stops them in reverse. Nothing else in the code base creates long-lived resources.
import { Registry } from 'prom-client';
import { systemClock } from './clock.js';
import type { Config } from './config/types.js';
import { LazyModule, type Module } from './lifecycle.js';
import type { AppContext } from './context.js';
import { createLogger } from './log.js';
import { ClockGuard } from './ops/clock/clock-guard.js';
import { Liveness } from './ops/systemd/liveness.js';
import { registerOpsMetrics } from './ops/observability/metrics.js';
import { NetworkScanWatcher } from './ops/network/network-scan.js';
import { Probes } from './ops/observability/probes.js';
import { storeHealth } from './ops/observability/store-health.js';
import { SystemdWatchdog } from './ops/systemd/watchdog.js';
import { databasePath, openDaemonDatabase } from './store/db.js';
import { meterSourceTypes } from './sources/index.js';
import type { MeterSource } from './sources/source.js';
import { TickJoin } from './sources/tick-join.js';
import { buildUplink } from './uplink/index.js';

export function createContext(config: Config, overrides: Partial<AppContext> = {}): AppContext {
  const logger = overrides.logger ?? createLogger(config.log_level);
  return Object.freeze({
    config,
    logger,
    db: overrides.db ?? openDaemonDatabase(databasePath(config.data_dir)),
    clock: overrides.clock ?? systemClock,
    metrics: overrides.metrics ?? new Registry(),
    liveness: overrides.liveness ?? new Liveness(),
    probes: overrides.probes ?? new Probes(),
  });
}

/** The modules of a running gateway, in start order. */
export function buildModules(ctx: AppContext): Module[] {
  const modules: Module[] = [];
  // Clock safety: every sample passes the guard before anything stores or publishes it;
  // it holds samples while the clock is not trusted (docs/clock-safety.md). Consumers
  // attach with clockGuard.connect(sink).
  const clockGuard = new ClockGuard(ctx);
  modules.push(clockGuard);
  ctx.probes.clock = () => clockGuard.view();
  // network_scan content (interfaces + what answers on each bus); the uplink publishes it
  // with networkScan.onChange(content => ...), which fires at start and on every change.
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
  // A sample waits for the other meters of its poll tick: one durable commit per tick.
  clockGuard.connect((sample) => uplink.recorder.recordInTick(sample));
  ctx.probes.health.set('store', () => storeHealth(uplink.recorder.view()));
  modules.push(...uplink.modules);
  if (uplink.publisher) ctx.probes.uplink = () => uplink.publisher!.view();
  if (uplink.deviceMessages) networkScan.onChange((content) => uplink.deviceMessages!.networkScan(content));
  // Meter sources (sources/index.ts): one module per source type with a configured bus, its
  // code imported only then (Modbus: modbus-serial; P1: serialport). Each reads only its own
  // buses and meters; their samples take the same way: clock guard, then the recorder.
  // The recorder commits a slot once every source has finished it (one transaction per tick).
  const ticks = new TickJoin(parts.length, () => uplink.recorder.tickDone());
  for (const { type, buses, meters } of parts) {
    modules.push(
      new LazyModule(type.kind, async () => {
        const create = await type.load();
        const source = create({ ...ctx, config: { ...ctx.config, buses, meters }, onSample: (sample) => clockGuard.submit(sample) });
        sources.push(source);
        ctx.probes.meters ??= () => sources.flatMap((s) => s.statuses());
        ctx.probes.busScan ??= () => sources.flatMap((s) => s.busScan());
        source.on('status', () => networkScan.check());
        source.on('tick-done', () => ticks.done(type.kind));
        return source;
      }),
    );
  }
  modules.push(networkScan);
  // Prices, forecasts, price views and the HTTP API are imported when their module starts
  // and only when configured: a feature that is off costs no resident memory (its code,
  // and the time-zone data the price calendar touches at load).
  // Before the HTTP API, so its first request already sees the price views.
  if (ctx.config.prices.regions.length > 0) {
    modules.push(
      new LazyModule('price-views', async () => {
        (await import('./ops/observability/price-views.js')).attachPriceViews(ctx);
        return null;
      }),
    );
  }
  // The HTTP API before the price jobs: it serves (health, metrics) while a backfill runs.
  if (ctx.config.http.enabled) modules.push(new LazyModule('http', async () => new (await import('./http/server.js')).HttpServer(ctx)));
  // Price forecasts: recomputed hourly and after each price sync; the HTTP endpoint only
  // reads the store.
  const forecast = new LazyModule('forecast', async () => {
    if (!ctx.config.forecast.enabled) return null;
    const [{ ForecastService, forecastMarket }, { ForecastStore }, { PriceStore }] = await Promise.all([
      import('./forecast/service.js'),
      import('./store/forecasts.js'),
      import('./store/prices.js'),
    ]);
    const service = new ForecastService({ ...ctx, forecasts: new ForecastStore(ctx.db), prices: new PriceStore(ctx.db), market: forecastMarket });
    // /healthz names a day of the horizon the forecaster could not forecast.
    ctx.probes.health.set('forecast', () => service.health());
    return service;
  });
  modules.push(forecast);
  // Day-ahead prices: background backfill, then node-cron sync and repair. Whoever must
  // react to new prices subscribes with priceSync.onUpdated(event => ...).
  modules.push(
    new LazyModule('price-sync', async () => {
      const p = ctx.config.prices;
      if (p.source !== 'entsoe' || !p.entsoe.security_token) {
        // Same condition and words as PriceSync.start(), without loading the ENTSO-E client.
        ctx.logger.warn({ source: p.source }, 'price sync off: prices.source is none or prices.entsoe.security_token is not set; import CSV files with `metergate prices import`');
        return null;
      }
      const { PriceSync } = await import('./prices/sync.js');
      const priceSync = new PriceSync(ctx);
      priceSync.onUpdated(() => {
        void forecast.instance?.refresh(); // not awaited: a backfill must not wait for forecasts
      });
      return priceSync;
    }),
  );
  registerOpsMetrics(ctx);
  // Keep last: READY=1 goes out once everything above has started; STOPPING=1 goes first.
  modules.push(new SystemdWatchdog(ctx));
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
  try {
    await daemon.start();
  } catch (err) {
    daemon.ctx.logger.fatal({ err }, 'start-up failed');
    await daemon.stop();
    process.exit(1);
  }
  return daemon;
}
