// PriceSync: keeps day-ahead prices current inside the daemon. At start it runs the
// (resumable) backfill in the background; cron schedules then look for tomorrow's prices
// after the midday SDAC auction (results ~12:45-13:00 CET; prices.sync_cron, default
// every 15 minutes 13:00-17:45 Brussels time, each run a no-op once tomorrow is
// complete; incomplete months whose retry is due are fetched again) and repairs holes in
// the whole stored history daily (prices.repair_cron). Work runs one job at a time off the
// start-up path, so the daemon keeps serving while it syncs.
import { firesAt, parseCron, scheduleCron, type CronSchedule, type ScheduledJob } from '../schedule/cron-schedule.js';
import type { AppContext } from '../context.js';
import type { Module } from '../lifecycle.js';
import { PriceStore } from '../store/prices.js';
import { mergingPriceStore } from './price-merge.js';
import { Backfill, type PriceFetcher } from './backfill.js';
import { LogProgress } from './progress.js';
import { EntsoeSource } from './sources/entsoe.js';
import { requireMarket, withExogenousNeighbours } from './markets.js';
import type { ExogenousSource } from './exogenous/registry.js';
import type { ExogenousPoint } from './exogenous/series.js';
import { ExogenousStore } from '../store/exogenous.js';
import { exogenousBackfillStore } from './exogenous/exogenous-merge.js';

export const SCHEDULE_TIME_ZONE = 'Europe/Brussels';
const MINUTE_MS = 60_000;

/**
 * The first minute at or after `atMs` at which one of the cron expressions fires (in
 * Europe/Brussels time, as the sync schedules them), looking up to `withinMs` ahead; null
 * when none does. Tells `prices status` when a chunk due at `atMs` is actually retried.
 */
export function firstRunAtOrAfter(expressions: readonly string[], atMs: number, withinMs = 8 * 24 * 3_600_000): number | null {
  // An invalid expression never fires (the sync refuses to start with one).
  const schedules = expressions.flatMap((e): CronSchedule[] => {
    try {
      return [parseCron(e, SCHEDULE_TIME_ZONE)];
    } catch {
      return [];
    }
  });
  const start = Math.ceil(atMs / MINUTE_MS) * MINUTE_MS;
  for (let t = start; t <= atMs + withinMs; t += MINUTE_MS) {
    if (schedules.some((s) => firesAt(s, t))) return t;
  }
  return null;
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
  private tasks: ScheduledJob[] = [];
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
    const schedules = new Map<string, CronSchedule>();
    for (const [key, expr] of [['prices.sync_cron', config.prices.sync_cron], ['prices.repair_cron', config.prices.repair_cron], ['prices.exogenous_sync_cron', config.prices.exogenous_sync_cron]] as const) {
      try {
        schedules.set(key, parseCron(expr, SCHEDULE_TIME_ZONE));
      } catch (err) {
        throw new Error(`${key}: ${(err as Error).message}`);
      }
    }
    this.abort = new AbortController();
    const backfill = this.backfillFor(source);
    const exogenous = (this.deps.exogenous ?? []).map((s) => this.exogenousBackfillFor(s));
    // The forecaster also reads the coupled neighbours' series (markets.json exogenous_neighbours).
    const exogenousRegions = withExogenousNeighbours(config.prices.regions);
    // The callbacks only queue work (one job at a time), so runs never overlap.
    const opts = { now: () => this.deps.clock.now(), onError: (err: unknown) => logger.error({ err }, 'price sync schedule failed') };
    // Each job is queued per source, so a failing exogenous provider never holds up prices.
    const sync = () => {
      void this.enqueue('sync', () => this.syncNow(backfill));
      for (const b of exogenous) void this.enqueue('exogenous sync', () => this.syncNow(b, exogenousRegions));
    };
    this.tasks = [
      scheduleCron(schedules.get('prices.sync_cron')!, sync, opts),
      scheduleCron(
        schedules.get('prices.repair_cron')!,
        () => {
          void this.enqueue('repair', () => this.repairNow(backfill));
          for (const b of exogenous) void this.enqueue('exogenous repair', () => this.repairNow(b, exogenousRegions));
        },
        opts,
      ),
    ];
    // Tomorrow's load forecast is out around 10:00, hours before the auction result: fetched
    // then, the day-ahead price forecast uses it until tomorrow's prices make it moot.
    if (exogenous.length > 0) {
      const exogenousSync = () => {
        for (const b of exogenous) void this.enqueue('exogenous sync', () => this.syncNow(b, exogenousRegions));
      };
      this.tasks.push(scheduleCron(schedules.get('prices.exogenous_sync_cron')!, exogenousSync, opts));
    }
    // Not awaited: start-up must not wait for years of history.
    sync();
  }

  async stop(): Promise<void> {
    for (const t of this.tasks) t.stop();
    this.tasks = [];
    this.abort.abort();
    await this.chain;
  }

  /** When the scheduled jobs run next (null when the sync is off). */
  nextRuns(): { sync: Date | null; repair: Date | null; exogenousSync: Date | null } {
    return { sync: this.tasks[0]?.nextRun() ?? null, repair: this.tasks[1]?.nextRun() ?? null, exogenousSync: this.tasks[2]?.nextRun() ?? null };
  }

  /** Resolves when queued work is done (tests, and `prices sync`). */
  idle(): Promise<void> {
    return this.chain;
  }

  private backfillFor(source: PriceFetcher): Backfill {
    const { db, logger, clock } = this.deps;
    return new Backfill({
      db,
      store: mergingPriceStore(new PriceStore(db)),
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
      store: exogenousBackfillStore(new ExogenousStore(db)),
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
