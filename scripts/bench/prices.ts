// Benchmark: CSV import of the real NL ENTSO-E history (2015 .. mid-2023, 74,376 hourly
// rows) and a one-year query at 900 s, each against a baseline measured in the same run.
//   npx tsx scripts/bench/prices.ts [rounds]
// Baselines: a bare better-sqlite3 INSERT loop of the same rows in one transaction into
// the same table; a bare SELECT of the same year's native rows. Re-import: the same rows
// merged again over the stored ones (each compared with the stored period by the merge
// rule, then written with the new fetch time) against a bare INSERT ... ON CONFLICT DO
// UPDATE loop over the same stored rows.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importPriceFile } from '../../src/prices/import.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { localDayStartMs } from '../../src/prices/timezone.js';
import { openDatabase } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { pricesAtInterval } from '../../src/prices/at-interval.js';

const FILE = join(process.cwd(), '../shared/data/prices/nl-2015-2023h1-entsoe-hourly.csv');
const rounds = Number(process.argv[2] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'mg-bench-prices-'));
const NL = requireMarket('NL');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn: () => void) => {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
};

const text = readFileSync(FILE, 'utf8');
const rows = parsePriceCsv(text, NL).periods;
const [yearFrom, yearTo] = [localDayStartMs(NL.timeZone, '2022-01-01'), localDayStartMs(NL.timeZone, '2023-01-01')];
const results = { importMs: [] as number[], parseMs: [] as number[], upsertMs: [] as number[], baselineInsertMs: [] as number[], reimportMs: [] as number[], baselineOverwriteMs: [] as number[], query900Ms: [] as number[], baselineSelectMs: [] as number[] };
let queried = 0;

for (let r = 0; r < rounds; r++) {
  const a = openDatabase(join(dir, `ours-${r}.db`));
  const store = new PriceStore(a);
  results.importMs.push(time(() => importPriceFile(store, FILE, 'NL', Date.now())));
  results.parseMs.push(time(() => parsePriceCsv(text, NL)));
  const b = openDatabase(join(dir, `upsert-${r}.db`));
  results.upsertMs.push(time(() => storePrices(new PriceStore(b), rows, { source: 'bench', fetchedAtMs: 0 })));
  results.reimportMs.push(time(() => storePrices(new PriceStore(b), rows, { source: 'bench', fetchedAtMs: 1 })));
  b.close();

  const c = openDatabase(join(dir, `bare-${r}.db`));
  const insert = c.prepare('INSERT INTO prices (market_area, start_ms, duration_s, price_per_mwh, currency, source, fetched_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)');
  results.baselineInsertMs.push(
    time(() =>
      c.transaction(() => {
        for (const p of rows) insert.run(p.marketArea, p.startMs, p.durationS, p.pricePerMwh, 'EUR', 'bench', 0);
      })(),
    ),
  );
  const overwrite = c.prepare(
    'INSERT INTO prices (market_area, start_ms, duration_s, price_per_mwh, currency, source, fetched_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (market_area, start_ms) DO UPDATE SET duration_s = excluded.duration_s, price_per_mwh = excluded.price_per_mwh, source = excluded.source, fetched_at_ms = excluded.fetched_at_ms',
  );
  results.baselineOverwriteMs.push(
    time(() =>
      c.transaction(() => {
        for (const p of rows) overwrite.run(p.marketArea, p.startMs, p.durationS, p.pricePerMwh, 'EUR', 'bench', 1);
      })(),
    ),
  );
  c.close();

  results.query900Ms.push(time(() => (queried = pricesAtInterval(store, 'NL', yearFrom, yearTo, 900).length)));
  const select = a.prepare('SELECT market_area, start_ms, duration_s, price_per_mwh FROM prices WHERE market_area = ? AND start_ms >= ? AND start_ms < ? ORDER BY start_ms');
  results.baselineSelectMs.push(time(() => select.all('NL', yearFrom, yearTo)));
  a.close();
}
rmSync(dir, { recursive: true, force: true });

const m = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)])) as Record<keyof typeof results, number>;
const f = (x: number) => `${x.toFixed(1)} ms`;
console.log(`NL history: ${rows.length} periods from 74,376 rows; median of ${rounds} rounds (node ${process.version})`);
console.log(`import (read + parse + one-transaction upsert)   ${f(m.importMs)}   ${(74_376 / (m.importMs / 1000)).toFixed(0)} rows/s`);
console.log(`  parse only                                     ${f(m.parseMs)}`);
console.log(`  PriceStore.upsert only                         ${f(m.upsertMs)}`);
console.log(`baseline: bare INSERT loop, one transaction      ${f(m.baselineInsertMs)}`);
console.log(`  ratio upsert / baseline insert                 ${(m.upsertMs / m.baselineInsertMs).toFixed(2)}x`);
console.log(`  ratio whole import / baseline insert           ${(m.importMs / m.baselineInsertMs).toFixed(2)}x`);
console.log(`re-import over the stored rows (merge rule)      ${f(m.reimportMs)}`);
console.log(`baseline: bare upsert loop over the stored rows  ${f(m.baselineOverwriteMs)}`);
console.log(`  ratio re-import / baseline upsert              ${(m.reimportMs / m.baselineOverwriteMs).toFixed(2)}x`);
console.log(`query 2022 at 900 s (${queried} quarter-hours)      ${f(m.query900Ms)}`);
console.log(`baseline: bare SELECT of the year's native rows  ${f(m.baselineSelectMs)}`);
console.log(`  ratio query / baseline select                  ${(m.query900Ms / m.baselineSelectMs).toFixed(2)}x`);
