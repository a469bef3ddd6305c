// Composition root: builds every module from one frozen config, wires who hears which event
// on the one event bus (events.ts), starts the modules in order and stops them in reverse.
// Nothing else in the code base creates long-lived resources or subscribes modules to each other.
import { Registry } from 'prom-client';
import { systemClock } from './clock.js';
import type { Config } from './config/types.js';
import { LazyModule, type Module } from './lifecycle.js';
import type { AppContext } from './context.js';
import { EventBus } from './events.js';
import { createLogger } from './log.js';
import { Liveness } from './ops/systemd/liveness.js';
import { registerOpsMetrics } from './ops/observability/metrics.js';
import { installProcessFaultHandlers } from './ops/process-faults.js';
import { Probes } from './ops/observability/probes.js';
import { SystemdWatchdog } from './ops/systemd/watchdog.js';
import { databasePath, openDaemonDatabase, pageSizeForMeters } from './store/db.js';
import { SessionRetention } from './ops/retention/session-retention.js';
import { VERSION } from './version.js';
import { startupFailureLine } from './ops/startup-failure.js';
import { buildGrid } from './composition/grid.js';
import { buildCharging } from './composition/charging.js';
import { buildMetering } from './composition/metering.js';
import { buildPrices } from './composition/prices.js';
// The store-and-forward pipeline alone, for tests and benchmarks.
export { buildUplink, type Uplink, type UplinkOptions } from './composition/uplink.js';

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

/**
 * The modules of a running gateway, in start order, with their events wired. Each half is
 * composed in its own file (src/composition/): metering (clock guard, pipeline, sources, site
 * meter), prices (views, forecast, sync), charging (central system, followers, fuse controller).
 */
export function buildModules(ctx: AppContext): Module[] {
  const metering = buildMetering(ctx);
  const prices = buildPrices(ctx);
  const charging = buildCharging(ctx, { siteMeter: metering.siteMeter !== null });
  const grid = buildGrid(ctx, charging, metering);
  const http = ctx.config.http.enabled ? new LazyModule('http', async () => new (await import('./http/server.js')).HttpServer({ ...ctx, charging: await charging.services(), centralSystem: charging.centralSystem })) : null;
  const modules: Module[] = [
    ...metering.modules,
    ...prices.views,
    // The HTTP API before the price jobs: it serves (health, metrics) while a backfill runs.
    ...(http ? [http] : []),
    ...charging.modules,
    ...(grid.module ? [grid.module] : []),
    prices.forecast,
    charging.replanner,
    ...prices.jobs,
    // Settled charger values and sessions past store.sessions_retention_days go, by the trusted clock.
    new SessionRetention(ctx, metering.clockGuard),
    // Keep last: READY=1 goes out once everything above has started; STOPPING=1 goes first.
    new SystemdWatchdog(ctx),
  ];
  // Who hears which event (events.ts lists them all): each half wires its own, metering first
  // (the site meter takes a sample before the fuse controller compares with it), then prices
  // (the forecaster refreshes before the plans are made again on the same prices.updated).
  metering.wire();
  prices.wire();
  charging.wire();
  grid.wire();
  registerOpsMetrics(ctx);
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
