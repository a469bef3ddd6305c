// Prices and exogenous series that another process stored in the daemon's database
// (`metergate prices import` or `prices backfill` while the daemon runs) are used at once:
// the watch tells prices.updated / exogenous.updated as the daemon's own price sync does,
// so the forecaster recomputes, plans are made again and /healthz reads the new coverage.
//
// Why a watch on the database and not a signal or an HTTP call from the import: the import
// may run as another user (root, the installer) than the daemon (metergate), may not know
// the daemon's pid or hold an API token, and may run while the daemon is down (then the
// daemon's start reads the prices anyway). SQLite says cheaply whether another connection
// committed since the last look (PRAGMA data_version: no I/O, read from the WAL index);
// only then are the rows fetched after the last seen fetch time counted per region.
import type { Config } from '../config/types.js';
import type { EventBus } from '../events.js';
import type { Module } from '../lifecycle.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { withExogenousNeighbours } from './markets.js';

/** How often the watch asks SQLite whether another process committed. */
export const IMPORT_WATCH_INTERVAL_MS = 2000;

export interface PriceImportWatchDeps {
  readonly config: Config;
  readonly db: Db;
  readonly events: EventBus;
  readonly logger: Logger;
}

interface NewRows {
  readonly fromMs: number | null;
  readonly toMs: number | null;
  readonly periods: number;
  readonly lastFetchedAtMs: number | null;
}

export class PriceImportWatch implements Module {
  readonly name = 'price-import-watch';
  private timer?: NodeJS.Timeout;
  private dataVersion = 0;
  /** Per table and region: the newest fetch time seen. */
  private readonly seen = new Map<string, number>();
  private readonly stmts;

  constructor(
    private readonly deps: PriceImportWatchDeps,
    private readonly intervalMs = IMPORT_WATCH_INTERVAL_MS,
  ) {
    const since = (table: 'prices' | 'exogenous_series') =>
      deps.db.prepare<[string, number], NewRows>(
        `SELECT MIN(start_ms) AS fromMs, MAX(start_ms + duration_s * 1000) AS toMs, COUNT(*) AS periods, MAX(fetched_at_ms) AS lastFetchedAtMs FROM ${table} WHERE market_area = ? AND fetched_at_ms > ?`,
      );
    this.stmts = { prices: since('prices'), exogenous: since('exogenous_series') };
  }

  async start(): Promise<void> {
    const regions = this.deps.config.prices.regions;
    if (regions.length === 0) return;
    this.dataVersion = this.readDataVersion();
    // What is stored at start is the daemon's own starting point, not news.
    for (const region of regions) this.take('prices', region);
    for (const region of withExogenousNeighbours(regions)) this.take('exogenous', region);
    this.timer = setInterval(() => this.check(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Looks once: tells what another process stored since the last look (also called by tests). */
  check(): void {
    try {
      const version = this.readDataVersion();
      if (version === this.dataVersion) return;
      this.dataVersion = version;
      const { events, logger, config } = this.deps;
      for (const region of config.prices.regions) {
        const rows = this.take('prices', region);
        if (!rows) continue;
        logger.info({ region, periods: rows.periods, from: new Date(rows.fromMs!).toISOString(), to: new Date(rows.toMs!).toISOString() }, 'prices stored by another process (prices import): forecast and charging plans refreshed');
        events.emit('prices.updated', { marketArea: region, fromMs: rows.fromMs!, toMs: rows.toMs!, periods: rows.periods });
      }
      for (const region of withExogenousNeighbours(config.prices.regions)) {
        const rows = this.take('exogenous', region);
        if (!rows) continue;
        logger.info({ region, points: rows.periods }, 'exogenous series stored by another process (prices import --exogenous): forecast refreshed');
        events.emit('exogenous.updated', { marketArea: region, fromMs: rows.fromMs!, toMs: rows.toMs!, periods: rows.periods, source: 'import' });
      }
    } catch (err) {
      // A database that refuses reads now is the store's health to report; the next look tries again.
      this.deps.logger.warn({ err }, 'price import watch: could not read the database');
    }
  }

  /** The rows of a table and region fetched after the last seen time (null: none), and moves the mark. */
  private take(table: 'prices' | 'exogenous', region: string): NewRows | null {
    const key = `${table}:${region}`;
    const rows = this.stmts[table].get(region, this.seen.get(key) ?? -1)!;
    if (rows.periods === 0 || rows.lastFetchedAtMs === null) return null;
    this.seen.set(key, rows.lastFetchedAtMs);
    return rows;
  }

  private readDataVersion(): number {
    return this.deps.db.pragma('data_version', { simple: true }) as number;
  }
}
