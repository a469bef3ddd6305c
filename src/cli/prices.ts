import type { Command } from 'commander';
import { databasePath, openDatabase, type Db } from '../store/db.js';
import { PriceStore } from '../store/prices.js';
import { formatImportResult, importPriceFile } from '../prices/import.js';
import { CsvImportError } from '../prices/sources/csv.js';
import { formatCoverage } from '../prices/status.js';
import { marketByCode } from '../prices/markets.js';
import { DEFAULT_CONFIG_PATH, loadConfigOrExit } from './config.js';

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
    .requiredOption('--region <code>', 'market area, e.g. NL or DE-LU')
    .option('--autumn-hour <choice>', 'local-only files: a 02:00 that occurs once on the autumn DST day is drop|earlier|later', 'drop')
    .option('-c, --config <file>', 'config file (for data_dir)', DEFAULT_CONFIG_PATH)
    .option('--db <file>', 'database file (instead of the one in data_dir)')
    .action((file: string, opts: DbOptions & { region: string; autumnHour: string }) => {
      if (!marketByCode(opts.region)) fail(`unknown region "${opts.region}"`);
      if (!['drop', 'earlier', 'later'].includes(opts.autumnHour)) fail('--autumn-hour must be drop, earlier or later');
      const db = openDb(opts);
      try {
        const result = importPriceFile(new PriceStore(db), file, opts.region, Date.now(), { singleAutumnHour: opts.autumnHour as 'drop' | 'earlier' | 'later' });
        process.stdout.write(`${formatImportResult(result)}\n`);
      } catch (err) {
        if (err instanceof CsvImportError) fail(`${file}: ${err.message} (nothing imported)`);
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') fail(`${file}: no such file`);
        throw err;
      } finally {
        db.close();
      }
    });

  prices
    .command('status')
    .description('Per region: first and last period, resolution, and every gap')
    .option('--region <code>', 'only this market area')
    .option('--json', 'machine-readable output')
    .option('-c, --config <file>', 'config file (for data_dir and regions)', DEFAULT_CONFIG_PATH)
    .option('--db <file>', 'database file (instead of the one in data_dir)')
    .action((opts: DbOptions & { region?: string; json?: boolean }) => {
      const db = openDb(opts);
      try {
        const store = new PriceStore(db);
        const regions = opts.region ? [opts.region.toUpperCase()] : store.marketAreas();
        const coverage = regions.map((r) => store.coverage(r));
        process.stdout.write(opts.json ? `${JSON.stringify(coverage, null, 2)}\n` : `${formatCoverage(coverage)}\n`);
      } finally {
        db.close();
      }
    });
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
