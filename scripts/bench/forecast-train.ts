// Benchmark: one region's forecast computed as the ForecastService does (a refit at every
// calibration origin and today's, 7 horizon days, conformal bounds) on real NL prices
// imported with the project's CSV importer into a SQLite file. Each measurement runs in a
// fresh child process so its peak RSS is its own; the baseline child loads the same
// prices and makes the naive forecast (same periods a week earlier).
// Run: npm run build && npx tsx scripts/bench/forecast-train.ts   (needs ../shared/data)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateConfig } from '../../src/config/load.js';
import { rollingOptions } from '../../src/forecast/service.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { openDatabase } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';

const nl = requireMarket('NL');
const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/tmp/unused' }, 'bench', {});
const options = rollingOptions(config);

// The measured child runs compiled code under plain node (as the daemon does), not tsx:
// it loads the store and the history, then forecasts (or, as the baseline, takes the
// week-ago prices), and prints its wall time, CPU time and peak RSS.
const dist = resolve(fileURLToPath(import.meta.url), '../../../dist');
const CHILD = `
const [mode, dbPath, today, intervalS, dist] = process.argv.slice(1);
const imp = (p) => import(new URL('file://' + dist + '/' + p).href);
const { openDatabase } = await imp('store/db.js');
const { PriceStore } = await imp('store/prices.js');
const { validateConfig } = await imp('config/load.js');
const { toDayMatrix } = await imp('forecast/day-matrix.js');
const { dayFromIso, localDayOf, localMidnightMs } = await imp('forecast/local-days.js');
const { computeMarketForecast, historyDaysNeeded } = await imp('forecast/market-forecast.js');
const { rollingOptions } = await imp('forecast/service.js');
const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/tmp/unused' }, 'bench', {});
const options = rollingOptions(config);
const tz = 'Europe/Amsterdam';
const db = openDatabase(dbPath);
const nowMs = localMidnightMs(tz, dayFromIso(today)) + 10 * 3600000;
const started = performance.now();
const cpuStart = process.cpuUsage();
const known = localMidnightMs(tz, dayFromIso(today) + 1);
const history = new PriceStore(db)
  .native('NL', nowMs - (historyDaysNeeded(options) + 2) * 86400000, known)
  .filter((p) => p.startMs < known)
  .map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.pricePerMwh }));
let periods = 0;
const slots = Number(intervalS) === 900 ? 96 : 24;
const day = localDayOf(tz, nowMs);
if (mode === 'naive') {
  const m = toDayMatrix(tz, history, day - 14, day + 7, slots);
  for (let d = day + 1; d <= day + 7; d++) for (let s = 0; s < slots; s++) if (Number.isFinite(m.values[(d - 7 - (day - 14)) * slots + s])) periods++;
} else {
  const result = await computeMarketForecast({ timeZone: tz, prices: history, nowMs, targetIntervalS: Number(intervalS), options });
  periods = result?.periods.length ?? 0;
}
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuStart);
process.stdout.write(JSON.stringify({ seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, periods, historyPoints: history.length, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
db.close();
`;

function measure(mode: string, dbPath: string, today: string, intervalS: number) {
  const r = spawnSync('node', ['--input-type=module', '-e', CHILD, mode, dbPath, today, String(intervalS), dist], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as { seconds: number; cpuSeconds: number; periods: number; historyPoints: number; peakRssMb: number };
}

if (!existsSync(join(dist, 'forecast/market-forecast.js'))) {
  console.error('build first: npm run build (the measured processes run dist/ under node)');
  process.exit(1);
}
{
  const dir = mkdtempSync(join(tmpdir(), 'metergate-bench-'));
  const dbPath = join(dir, 'bench.db');
  const db = openDatabase(dbPath);
  const store = new PriceStore(db);
  const data = resolve(process.cwd(), '../shared/data/prices');
  for (const f of ['nl-2015-2023h1-entsoe-hourly.csv', 'nl-2024-hourly-local.csv', 'nl-2025-quarterhour-local-utc.csv']) {
    storePrices(store, parsePriceCsv(readFileSync(resolve(data, f), 'utf8'), nl).periods, { source: `csv:${f}`, fetchedAtMs: 0 });
  }
  db.close();
  console.log(`load average ${(await import('node:os')).loadavg()[0].toFixed(1)} on ${(await import('node:os')).cpus().length} CPUs; NL, window ${options.trainingWindowDays} d, ${options.calibrationDays} calibration origins + ${options.horizonDays}, horizon ${options.horizonDays} d; each line a fresh process`);
  for (const [today, intervalS] of [['2025-06-15', 3600], ['2025-12-15', 900]] as const) {
    const base = measure('naive', dbPath, today, intervalS);
    const lear = measure('lear', dbPath, today, intervalS);
    console.log(
      `${today} at ${intervalS} s: forecast ${lear.seconds.toFixed(1)} s wall (${lear.cpuSeconds.toFixed(1)} s CPU), peak RSS ${lear.peakRssMb.toFixed(0)} MB (${lear.periods} periods from ${lear.historyPoints} stored) | naive baseline ${base.seconds.toFixed(2)} s wall (${base.cpuSeconds.toFixed(2)} s CPU), peak RSS ${base.peakRssMb.toFixed(0)} MB | time x${(lear.seconds / base.seconds).toFixed(0)}, forecaster's own memory +${(lear.peakRssMb - base.peakRssMb).toFixed(0)} MB`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
}
