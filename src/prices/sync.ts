// PriceSync: keeps day-ahead prices current inside the daemon. At start it runs the
// (resumable) backfill in the background; node-cron then looks for tomorrow's prices
// after the midday SDAC auction (results ~12:45-13:00 CET; prices.sync_cron, default
// every 15 minutes 13:00-17:45 Brussels time, each run a no-op once tomorrow is
// complete; incomplete months whose retry is due are fetched again) and repairs holes in
// the whole stored history daily (prices.repair_cron). Work runs one job at a time off the
// start-up path, so the daemon keeps serving while it syncs.
import cron, { type ScheduledTask } from 'node-cron';
import type { AppContext } from '../context.js';
import type { Module } from '../lifecycle.js';
import { PriceStore } from '../store/prices.js';
import { Backfill, type PriceFetcher } from './backfill.js';
import { LogProgress } from './progress.js';
import { EntsoeSource } from './sources/entsoe.js';
import { requireMarket, withExogenousNeighbours } from './markets.js';
import type { ExogenousSource } from './exogenous/registry.js';
import type { ExogenousPoint } from './exogenous/series.js';
import { ExogenousStore } from '../store/exogenous.js';

export const SCHEDULE_TIME_ZONE = 'Europe/Brussels';
const MINUTE_MS = 60_000;

/**
 * The first minute at or after `atMs` at which one of the cron expressions fires (in
 * Europe/Brussels time, as the sync schedules them), looking up to `withinMs` ahead; null
 * when none does. Tells `prices status` when a chunk due at `atMs` is actually retried.
 */
export function firstRunAtOrAfter(expressions: readonly string[], atMs: number, withinMs = 8 * 24 * 3_600_000): number | null {
  // An invalid expression never fires (the sync refuses to start with one).
  const tasks = expressions.filter((e) => cron.validate(e)).map((e) => cron.createTask(e, () => undefined, { timezone: SCHEDULE_TIME_ZONE }));
  try {
    const start = Math.ceil(atMs / MINUTE_MS) * MINUTE_MS;
    for (let t = start; t <= atMs + withinMs; t += MINUTE_MS) {
      if (tasks.some((task) => task.match(new Date(t)))) return t;
    }
    return null;
  } finally {
    for (const task of tasks) void task.destroy();
  }
}

/**
 * `events` gets prices.updated after every sync, backfill chunk or repair that stored
 * prices, and exogenous.updated after each that stored exogenous series.
 */
export type PriceSyncDeps = Pick<AppContext, 'config' | 'logger' | 'db' | 'clock' | 'events'> & {
  /** Overrides the configured source (tests). */
  readonly source?: PriceFetcher;
  /**
   * Providers of exogenous series (exogenous/registry.ts; the composition root builds them
   * from the registry), backfilled, synced and repaired after the prices on the same schedule.
   */
  readonly exogenous?: readonly ExogenousSource[];
};

/** The configured ENTSO-E source, or null when prices.source is none or no token is set. */
export function configuredSource(deps: Pick<AppContext, 'config' | 'logger'>): PriceFetcher | null {
  const p = deps.config.prices;
  if (p.source !== 'entsoe' || !p.entsoe.security_token) return null;
  return new EntsoeSource(
    { baseUrl: p.entsoe.base_url, securityToken: p.entsoe.security_token, maxRequestsPerMinute: p.entsoe.max_requests_per_minute, timeoutMs: p.entsoe.timeout_ms },
    { logger: deps.logger },
  );
}

export class PriceSync implements Module {
  readonly name = 'price-sync';
  private tasks: ScheduledTask[] = [];
  private abort = new AbortController();
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly deps: PriceSyncDeps) {}

  async start(): Promise<void> {
    const { config, logger } = this.deps;
    const source = this.deps.source ?? configuredSource(this.deps);
    if (!source) {
      logger.warn({ source: config.prices.source }, 'price sync off: prices.source is none or prices.entsoe.security_token is not set; import CSV files with `metergate prices import`');
      return;
    }
    for (const r of config.prices.regions) requireMarket(r);
    for (const [key, expr] of [['prices.sync_cron', config.prices.sync_cron], ['prices.repair_cron', config.prices.repair_cron], ['prices.exogenous_sync_cron', config.prices.exogenous_sync_cron]] as const) {
      if (!cron.validate(expr)) throw new Error(`${key}: "${expr}" is not a cron expression`);
    }
    this.abort = new AbortController();
    const backfill = this.backfillFor(source);
    const exogenous = (this.deps.exogenous ?? []).map((s) => this.exogenousBackfillFor(s));
    // The forecaster also reads the coupled neighbours' series (markets.json exogenous_neighbours).
    const exogenousRegions = withExogenousNeighbours(config.prices.regions);
    const opts = { timezone: SCHEDULE_TIME_ZONE, noOverlap: true };
    // Each job is queued per source, so a failing exogenous provider never holds up prices.
    const sync = () => {
      void this.enqueue('sync', () => this.syncNow(backfill));
      for (const b of exogenous) void this.enqueue('exogenous sync', () => this.syncNow(b, exogenousRegions));
    };
    this.tasks = [
      cron.schedule(config.prices.sync_cron, sync, { ...opts, name: 'prices-sync' }),
      cron.schedule(
        config.prices.repair_cron,
        () => {
          void this.enqueue('repair', () => this.repairNow(backfill));
          for (const b of exogenous) void this.enqueue('exogenous repair', () => this.repairNow(b, exogenousRegions));
        },
        { ...opts, name: 'prices-repair' },
      ),
    ];
    // Tomorrow's load forecast is out around 10:00, hours before the auction result: fetched
    // then, the day-ahead price forecast uses it until tomorrow's prices make it moot.
    if (exogenous.length > 0) {
      const exogenousSync = () => {
        for (const b of exogenous) void this.enqueue('exogenous sync', () => this.syncNow(b, exogenousRegions));
      };
      this.tasks.push(cron.schedule(config.prices.exogenous_sync_cron, exogenousSync, { ...opts, name: 'exogenous-sync' }));
    }
    // Not awaited: start-up must not wait for years of history.
    sync();
  }

  async stop(): Promise<void> {
    for (const t of this.tasks) await t.destroy();
    this.tasks = [];
    this.abort.abort();
    await this.chain;
  }

  /** When the scheduled jobs run next (null when the sync is off). */
  nextRuns(): { sync: Date | null; repair: Date | null; exogenousSync: Date | null } {
    return { sync: this.tasks[0]?.getNextRun() ?? null, repair: this.tasks[1]?.getNextRun() ?? null, exogenousSync: this.tasks[2]?.getNextRun() ?? null };
  }

  /** Resolves when queued work is done (tests, and `prices sync`). */
  idle(): Promise<void> {
    return this.chain;
  }

  private backfillFor(source: PriceFetcher): Backfill {
    const { db, logger, clock } = this.deps;
    return new Backfill({
      db,
      store: new PriceStore(db),
      source,
      logger,
      now: () => clock.now(),
      progress: new LogProgress(logger),
      onUpdated: (e) => this.deps.events.emit('prices.updated', e),
    });
  }

  private exogenousBackfillFor(source: ExogenousSource): Backfill<ExogenousPoint> {
    const { db, logger, clock } = this.deps;
    return new Backfill<ExogenousPoint>({
      db,
      store: new ExogenousStore(db),
      source,
      what: 'exogenous',
      logger,
      now: () => clock.now(),
      progress: new LogProgress(logger),
      onUpdated: (e) => this.deps.events.emit('exogenous.updated', { ...e, source: source.name }),
    });
  }

  private enqueue(what: string, job: () => Promise<unknown>): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.abort.signal.aborted) return;
      try {
        await job();
      } catch (err) {
        if (this.abort.signal.aborted) return; // stopping: the interrupted chunk is fetched again next time
        this.deps.logger.error({ err, job: what }, `${what.startsWith('exogenous') ? 'exogenous' : 'price'} sync failed; the next scheduled run tries again`);
      }
    });
    return this.chain;
  }

  /** Backfill through tomorrow: cheap once history is complete (recorded chunks are skipped). */
  private syncNow<P>(backfill: Backfill<P>, regions: readonly string[] = this.deps.config.prices.regions) {
    const { config } = this.deps;
    return backfill.run({ regions, fromDate: config.prices.backfill_from, signal: this.abort.signal });
  }

  private repairNow<P>(backfill: Backfill<P>, regions: readonly string[] = this.deps.config.prices.regions) {
    const { config } = this.deps;
    return backfill.repair(regions, config.prices.backfill_from, this.abort.signal);
  }
}
