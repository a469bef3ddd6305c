import type { Command } from 'commander';
import { databasePath, openDatabase, type Db } from '../store/db.js';
import { PriceStore } from '../store/prices.js';
import { ExogenousStore } from '../store/exogenous.js';
import { exogenousBackfillStore } from '../prices/exogenous/exogenous-merge.js';
import { formatImportResult, importPriceFile } from '../prices/import.js';
import { CsvImportError } from '../prices/sources/csv.js';
import { formatCoverage, importRegion, regionRoles } from '../prices/status.js';
import { marketByCode, withExogenousNeighbours } from '../prices/markets.js';
import { DEFAULT_CONFIG_PATH, loadConfigOrExit } from './config.js';
import { createLogger } from '../log.js';
import { Backfill } from '../prices/backfill.js';
import { mergingPriceStore } from '../prices/price-merge.js';
import { progressFor } from '../prices/progress.js';
import { configuredSource, firstRunAtOrAfter } from '../prices/sync.js';
import { PriceFetchProgress } from '../store/price-fetch.js';
import { exogenousProviderTypes } from '../prices/exogenous/index.js';
import type { ExogenousPoint } from '../prices/exogenous/series.js';

interface DbOptions {
  config: string;
  db?: string;
}

/** The database from --db, else from the config's data_dir. */
function openDb(opts: DbOptions): Db {
  if (opts.db) return openDatabase(opts.db);
  return openDatabase(databasePath(loadConfigOrExit(opts.config).data_dir));
}

export function registerPricesCommands(program: Command): void {
  const prices = program.command('prices').description('Day-ahead prices: import, backfill, status');

  prices
    .command('import')
    .description(
      'Import a CSV price file in one transaction. Layouts: ENTSO-E history (,Price_DA,...), ' +
        'datum[_nl][;datum_utc];prijs_excl_belastingen (EUR/kWh, decimal comma), or start,price_per_mwh[,duration_s] ' +
        '(start ISO 8601 with offset or Z; or start_utc; price_per_kwh instead of price_per_mwh)',
    )
    .argument('<file>', 'CSV file')
    .option('--region <code>', 'market area, e.g. NL or DE-LU (default: the one region of prices.regions, when exactly one is configured)')
    .option('--autumn-hour <choice>', 'local-only files: a 02:00 that occurs once on the autumn DST day is drop|earlier|later', 'drop')
    .option('--exogenous', 'also import the day-ahead load, solar and wind forecast columns (Load_DA, Sol_DA, Won_DA, Woff_DA) of an ENTSO-E history file, for the forecaster')
    .option('--replace', 'let the file replace finer stored prices (e.g. hourly over quarter-hours) and prices of a better source; lists what it replaced')
    .option('-c, --config <file>', 'config file (for data_dir)', DEFAULT_CONFIG_PATH)
    .option('--db <file>', 'database file (instead of the one in data_dir)')
    .action((file: string, opts: DbOptions & { region?: string; autumnHour: string; replace?: boolean; exogenous?: boolean }) => {
      const choice = importRegion(opts.region, opts.db ? null : loadConfigOrExit(opts.config).prices.regions);
      if ('problem' in choice) fail(`metergate prices import: ${choice.problem}`);
      if (choice.defaulted) process.stderr.write(`importing as ${choice.region} (the one region in prices.regions; --region to choose another)\n`);
      if (!['drop', 'earlier', 'later'].includes(opts.autumnHour)) fail('--autumn-hour must be drop, earlier or later');
      const db = openDb(opts);
      try {
        const result = importPriceFile(new PriceStore(db), file, choice.region, Date.now(), {
          singleAutumnHour: opts.autumnHour as 'drop' | 'earlier' | 'later',
          replace: opts.replace === true,
          ...(opts.exogenous ? { exogenous: new ExogenousStore(db) } : {}),
        });
        process.stdout.write(`${formatImportResult(result)}\n`);
      } catch (err) {
        if (err instanceof CsvImportError) fail(`${file}: ${err.message} (nothing imported)`);
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') fail(`${file}: no such file`);
        throw err;
      } finally {
        db.close();
      }
    });

  registerFetchCommands(prices);

  prices
    .command('status')
    .description('Per region: first and last period, resolution, every gap, and incomplete months with their next retry')
    .option('--region <code>', 'only this market area')
    .option('--json', 'machine-readable output')
    .option('-c, --config <file>', 'config file (for data_dir, regions and the sync schedule)', DEFAULT_CONFIG_PATH)
    .option('--db <file>', 'database file (instead of the one in data_dir)')
    .action((opts: DbOptions & { region?: string; json?: boolean }) => {
      const config = opts.db ? null : loadConfigOrExit(opts.config);
      const db = openDb(opts);
      try {
        const store = new PriceStore(db);
        const fetchProgress = new PriceFetchProgress(db);
        // Configured regions first (also when they have no prices yet), then the neighbours
        // whose exogenous series are synced with them (markets.json), then any other stored
        // ones; each not configured one marked as what it is (prices/status.ts regionRoles).
        const configured = config?.prices.regions ?? null;
        const regions = opts.region ? [opts.region.toUpperCase()] : [...new Set([...withExogenousNeighbours(configured ?? []), ...store.marketAreas()])];
        const roles = regionRoles(regions, configured);
        // A due chunk is fetched again by the first sync or repair run from then on.
        const syncOn = config !== null && configuredSource({ config, logger: createLogger('silent') }) !== null;
        const runs = new Map<number, number | null>();
        const retryRunAt = (atMs: number) => {
          if (!syncOn) return null;
          if (!runs.has(atMs)) runs.set(atMs, firstRunAtOrAfter([config.prices.sync_cron, config.prices.repair_cron], Math.max(atMs, Date.now())));
          return runs.get(atMs)!;
        };
        const exogenous = new ExogenousStore(db);
        const coverage = regions.map((r) => ({
          ...store.coverage(r),
          ...roles.get(r),
          pending: fetchProgress.pendingOf(r).map((p) => ({ ...p, retryRunAtMs: retryRunAt(p.nextAttemptAtMs) })),
          exogenous: exogenous.coverage(r),
        }));
        const note = config === null ? '' : syncOn ? '' : 'price sync is off (prices.source none or no security token): pending months are not retried';
        process.stdout.write(opts.json ? `${JSON.stringify(coverage, null, 2)}\n` : `${formatCoverage(coverage, note)}\n`);
      } finally {
        db.close();
      }
    });
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((v) => v.trim().toUpperCase()).filter(Boolean)];
}

function registerFetchCommands(prices: Command): void {
  prices
    .command('backfill')
    .description('Fetch day-ahead prices (and the load, wind and solar forecasts the forecaster uses) from prices.backfill_from through tomorrow for every configured region (chunked by month, resumable: complete months are never fetched again, incomplete ones are retried with backoff)')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG_PATH)
    .option('--region <code>', 'only this market area (repeatable; default: prices.regions)', collect)
    .option('--from <date>', 'first delivery date YYYY-MM-DD (default: prices.backfill_from)')
    .option('--no-exogenous', 'prices only: skip the load, wind and solar forecasts the forecaster uses')
    .option('--repair', 'afterwards, check the whole stored history for holes and fetch again every incomplete month whose retry is due')
    .action(async (opts: { config: string; region?: string[]; from?: string; repair?: boolean; exogenous?: boolean }) => {
      const config = loadConfigOrExit(opts.config);
      const logger = createLogger(config.log_level, process.stderr);
      const source = configuredSource({ config, logger });
      if (!source) fail('prices.source must be entsoe and prices.entsoe.security_token (or _file, or METERGATE_PRICES__ENTSOE__SECURITY_TOKEN) set');
      const regions = opts.region ?? [...config.prices.regions];
      for (const r of regions) if (!marketByCode(r)) fail(`unknown region "${r}"`);
      const fromDate = opts.from ?? config.prices.backfill_from;
      if (!/^\d{4}-\d{2}-\d{2}$/.test(fromDate)) fail('--from must be YYYY-MM-DD');
      const db = openDatabase(databasePath(config.data_dir));
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      try {
        const store = new PriceStore(db);
        const backfill = new Backfill({ db, store: mergingPriceStore(store), source, logger, now: () => Date.now(), progress: progressFor(logger) });
        await backfill.run({ regions, fromDate, signal: abort.signal });
        if (opts.repair) {
          const r = await backfill.repair(regions, fromDate, abort.signal);
          process.stderr.write(`repair: ${r.chunksWithGaps} month(s) with holes, ${r.fetched} fetched (${r.completed} now complete), ${r.deferred} waiting for their retry, ${r.periods} periods stored\n`);
        }
        // Then the forecaster's exogenous series (load, wind, solar forecasts), the same way.
        if (opts.exogenous !== false) {
          for (const provider of exogenousProviderTypes().build({ config, logger })) {
            const exo = new Backfill<ExogenousPoint>({ db, store: exogenousBackfillStore(new ExogenousStore(db)), source: provider, what: 'exogenous', logger, now: () => Date.now(), progress: progressFor(logger) });
            // With the coupled neighbours' series the forecaster reads (markets.json exogenous_neighbours).
            const exoRegions = withExogenousNeighbours(regions);
            await exo.run({ regions: exoRegions, fromDate, signal: abort.signal });
            if (opts.repair) await exo.repair(exoRegions, fromDate, abort.signal);
          }
        }
      } catch (err) {
        fail(`backfill stopped: ${(err as Error).message} (completed months are kept; run again to resume)`);
      } finally {
        db.close();
      }
    });
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
