// Benchmark and proof (issue 21 point 4): the forecaster's training builds its matrices with
// less transient memory, and its forecasts stay IDENTICAL, bit for bit. Runs the service's
// computeRegion (and a warm refresh the next day) with the baseline commit's build and this
// checkout's on real NL data, each in a fresh process under the daemon's node flags and
// malloc settings (systemd unit), and compares every stored value (start, duration,
// forecast, lower, upper of every period, the run's origin, method and inputs) with
// Object.is; prints each build's memory: the peak RSS above the RSS just before the
// computation (the forecaster's own transient: maxRSS, so nothing between samples is
// missed) and the highest V8 heap used / external memory sampled between origins.
//   npx tsx scripts/bench/forecast-identity.ts        (BASELINE=<git ref>, default 98b3456;
//   ONLY=<part of a case's label>; ROUNDS=n, default 1: the memory figures take the median)
// Cases: the daemon-rss bench's (a year of NL quarter-hour prices, 2025, price only), NL
// 2023-03-15 hourly with the exogenous series of NL and DE-LU (cold at D 11:00, then D+1's
// prices at D 13:00: a warm update, price only), NL 2025-12-15 at 900 s over hourly history
// (hourly periods spread over quarter-hour slots). Exits 1 if any value differs.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildBaselineDist, buildDist, fromDist, repoRoot } from './dist.js';
import { shippedNodeFlags } from './shipped-node.js';

const TZ = 'Europe/Amsterdam';
const HOUR_MS = 3_600_000;
const DATA = resolve(repoRoot, '../shared/data/prices');
const BASELINE = process.env.BASELINE ?? '98b3456';
const ROUNDS = Number(process.env.ROUNDS ?? 1);

buildDist();
// BUILDS=now (a quick look while working): this checkout only, compared with the baseline's
// forecasts of an earlier full run (kept in the temporary directory).
const builds = [
  { name: 'baseline', dist: buildBaselineDist(BASELINE) },
  { name: 'now', dist: join(repoRoot, 'dist') },
].filter((b) => process.env.BUILDS === undefined || process.env.BUILDS.split(',').includes(b.name));
const baselineSha = execFileSync('git', ['rev-parse', '--short', `${BASELINE}^{commit}`], { cwd: repoRoot, encoding: 'utf8' }).trim();
// The stores are written by the first build's code (the baseline's: a newer build migrates
// a copy forward when it opens it, an older one refuses a newer schema).
const prep = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(builds[0].dist, path)).href)) as T;
const { openDatabase } = await prep<typeof import('../../src/store/db.js')>('store/db.js');
const { PriceStore } = await prep<typeof import('../../src/store/prices.js')>('store/prices.js');
const { ExogenousStore } = await prep<typeof import('../../src/store/exogenous.js')>('store/exogenous.js');
const { importPriceFile } = await prep<typeof import('../../src/prices/import.js')>('prices/import.js');
const { dayFromIso, localMidnightMs, localDayOf } = await fromDist<typeof import('../../src/forecast/local-days.js')>('forecast/local-days.js');

/** The unit's Environment= (the malloc settings change what a freed buffer costs). */
function unitEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(repoRoot, 'systemd', 'metergate.service'), 'utf8').split('\n')) {
    if (!line.startsWith('Environment=')) continue;
    for (const word of line.slice('Environment='.length).trim().split(/\s+/)) {
      const eq = word.indexOf('=');
      if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1);
    }
  }
  return env;
}

// The measured process. argv: db, case json, dist. Prints one JSON line.
const CHILD = `
const [dbPath, caseJson, dist] = process.argv.slice(1);
const c = JSON.parse(caseJson);
const imp = (p) => import(new URL('file://' + dist + '/' + p).href);
const { openDatabase } = await imp('store/db.js');
const { PriceStore } = await imp('store/prices.js');
const { ExogenousStore } = await imp('store/exogenous.js');
const { ForecastStore } = await imp('store/forecasts.js');
const { validateConfig } = await imp('config/load.js');
const { createLogger } = await imp('log.js');
const { ForecastService, forecastMarket } = await imp('forecast/service.js');
// Builds before the merge rule left the store merged with PriceStore.merge.
const mergePrices = (await imp('prices/price-merge.js').catch(() => null))?.mergePrices ?? ((store, periods, provenance) => store.merge(periods, provenance));
const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/tmp/unused', prices: { regions: ['NL'] } }, 'bench', {});
const db = openDatabase(dbPath);
let nowMs = c.nowMs;
const prices = new PriceStore(db);
const exogenous = new ExogenousStore(db);
const forecasts = new ForecastStore(db);
const service = new ForecastService({ config, logger: createLogger('silent'), clock: { now: () => nowMs }, forecasts, prices, exogenous, market: forecastMarket });
const mb = (b) => b / 1048576;
let heapUsed = 0, external = 0;
const sample = () => { const m = process.memoryUsage(); heapUsed = Math.max(heapUsed, m.heapUsed); external = Math.max(external, m.external); };
const timer = setInterval(sample, 2);
const steps = [];
const stored = () => {
  const run = forecasts.latestRun('NL');
  return { originDay: run?.originDay, method: run?.method, inputs: run?.inputs, periods: forecasts.periods('NL', 0, Number.MAX_SAFE_INTEGER).map((p) => [p.startMs, p.durationS, p.forecastPerMwh, p.lowerPerMwh, p.upperPerMwh]) };
};
const before = process.memoryUsage();
const rssBefore = before.rss;
const cpu0 = process.cpuUsage();
await service.computeRegion('NL');
steps.push({ what: 'cold', ...stored() });
if (c.next) {
  mergePrices(prices, c.next.prices, { source: 'entsoe', fetchedAtMs: c.next.fetchedAtMs });
  nowMs = c.next.nowMs;
  await service.refresh();
  steps.push({ what: 'warm, the next day\\'s prices', ...stored() });
}
const cpu = process.cpuUsage(cpu0);
clearInterval(timer);
sample();
db.close();
process.stdout.write(JSON.stringify({ steps, rssBeforeMb: mb(rssBefore), peakRssMb: process.resourceUsage().maxRSS / 1024, heapUsedMb: mb(heapUsed), externalMb: mb(external), heapBeforeMb: mb(before.heapUsed), externalBeforeMb: mb(before.external), cpuS: (cpu.user + cpu.system) / 1e6 }));
`;

interface Step {
  what: string;
  originDay?: string;
  method?: string;
  inputs?: string;
  periods: number[][];
}
interface Measured {
  steps: Step[];
  rssBeforeMb: number;
  peakRssMb: number;
  heapUsedMb: number;
  externalMb: number;
  heapBeforeMb: number;
  externalBeforeMb: number;
  cpuS: number;
}

interface Case {
  readonly label: string;
  /** Builds the store; returns the clock and, for a warm step, the next day's prices. */
  prepare(dbPath: string): { nowMs: number; next?: { prices: unknown[]; fetchedAtMs: number; nowMs: number } };
}

const at = (d: number, hours: number) => localMidnightMs(TZ, d) + hours * HOUR_MS;

const allCases: Case[] = [
  {
    label: "daemon-rss's store: NL 2025 at 900 s, a year, price only; origin 2025-12-30 13:00",
    prepare(dbPath) {
      const db = openDatabase(dbPath);
      importPriceFile(new PriceStore(db), join(DATA, 'nl-2025-quarterhour-local-utc.csv'), 'NL', Date.UTC(2025, 11, 30, 12));
      db.close();
      return { nowMs: at(dayFromIso('2025-12-30'), 13) };
    },
  },
  {
    label: 'NL 2023-03-15 at 3600 s with the series of NL and DE-LU, then the next day warm',
    prepare(dbPath) {
      const day = dayFromIso('2023-03-15');
      const fetchedAtMs = at(day, 10.25);
      const db = openDatabase(dbPath);
      const priceStore = new PriceStore(db);
      const exo = new ExogenousStore(db);
      importPriceFile(priceStore, join(DATA, 'nl-2015-2023h1-entsoe-hourly.csv'), 'NL', fetchedAtMs, { exogenous: exo });
      importPriceFile(priceStore, join(DATA, 'de-lu-2018-2023h1-entsoe-hourly.csv'), 'DE-LU', fetchedAtMs, { exogenous: exo });
      db.prepare('DELETE FROM prices WHERE market_area = ?').run('DE-LU');
      const next = priceStore.native('NL', at(day + 1, 0), at(day + 2, 0));
      db.prepare('DELETE FROM prices WHERE market_area = ? AND start_ms >= ?').run('NL', at(day + 1, 0));
      db.prepare('DELETE FROM exogenous_series WHERE start_ms >= ?').run(at(day + 2, 0));
      db.close();
      return { nowMs: at(day, 11), next: { prices: next, fetchedAtMs: at(day, 12.8), nowMs: at(day, 13) } };
    },
  },
  {
    label: 'NL 2025-12-15 at 900 s over hourly history (2015-2024) and quarter-hours (2025)',
    prepare(dbPath) {
      const day = dayFromIso('2025-12-15');
      const fetchedAtMs = at(day, 10.25);
      const db = openDatabase(dbPath);
      const priceStore = new PriceStore(db);
      const exo = new ExogenousStore(db);
      importPriceFile(priceStore, join(DATA, 'nl-2015-2023h1-entsoe-hourly.csv'), 'NL', fetchedAtMs, { exogenous: exo });
      for (const f of ['nl-2024-hourly-local.csv', 'nl-2025-quarterhour-local-utc.csv']) importPriceFile(priceStore, join(DATA, f), 'NL', fetchedAtMs);
      db.prepare('DELETE FROM prices WHERE market_area = ? AND start_ms >= ?').run('NL', at(day + 1, 0));
      db.close();
      return { nowMs: at(day, 11) };
    },
  },
];
const cases = allCases.filter((c) => process.env.ONLY === undefined || c.label.includes(process.env.ONLY));

const env = { ...process.env, ...unitEnvironment() };
function run(dist: string, dbPath: string, c: unknown): Measured {
  const copy = `${dbPath}.run.db`;
  copyFileSync(dbPath, copy);
  const r = spawnSync('node', [...shippedNodeFlags(), '--input-type=module', '-e', CHILD, copy, JSON.stringify(c), dist], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env });
  rmSync(copy, { force: true });
  if (r.status !== 0) throw new Error(`forecast process failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Measured;
}

/** Differences between two runs' stored forecasts, value by value (Object.is: bits, NaN, -0). */
function differences(a: Measured, b: Measured): string[] {
  const out: string[] = [];
  if (a.steps.length !== b.steps.length) return [`${a.steps.length} vs ${b.steps.length} steps`];
  a.steps.forEach((sa, i) => {
    const sb = b.steps[i];
    for (const k of ['originDay', 'method', 'inputs'] as const) if (sa[k] !== sb[k]) out.push(`${sa.what}: ${k} ${sa[k]} vs ${sb[k]}`);
    if (sa.periods.length !== sb.periods.length) out.push(`${sa.what}: ${sa.periods.length} vs ${sb.periods.length} periods`);
    sa.periods.forEach((pa, j) => pa.forEach((v, k) => {
      if (!Object.is(v, sb.periods[j]?.[k])) out.push(`${sa.what}: period ${j} field ${k}: ${v} vs ${sb.periods[j]?.[k]}`);
    }));
  });
  return out;
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)];
const f1 = (x: number) => x.toFixed(1);
const dir = mkdtempSync(join(tmpdir(), 'metergate-bench-identity-'));
let failed = false;
try {
  console.log(`baseline ${BASELINE} (${builds.find((b) => b.name === 'baseline')?.dist ?? `its forecasts kept from an earlier run`}) vs this checkout; node ${process.version} ${shippedNodeFlags().join(' ')}; ${ROUNDS} round(s), builds alternating; each a fresh process`);
  cases.forEach((c, ci) => {
    const dbPath = join(dir, `case-${ci}.db`);
    const { nowMs, next } = c.prepare(dbPath);
    const arg = { nowMs, ...(next ? { next } : {}) };
    const results = new Map<string, Measured[]>(builds.map((b) => [b.name, []]));
    for (let r = 0; r < ROUNDS; r++) for (const b of r % 2 === 0 ? builds : [...builds].reverse()) results.get(b.name)!.push(run(b.dist, dbPath, arg));
    console.log(`\n${c.label} (origin day ${localDayOf(TZ, nowMs)})`);
    for (const b of builds) {
      const ms = results.get(b.name)!;
      const own = ms.map((m) => m.peakRssMb - m.rssBeforeMb);
      console.log(
        `  ${b.name.padEnd(8)} own peak RSS +${f1(median(own))} MB (rounds ${own.map(f1).join(', ')}; peak ${f1(median(ms.map((m) => m.peakRssMb)))} MB), ` +
          `V8 heap used up to ${f1(median(ms.map((m) => m.heapUsedMb)))} MB (${f1(median(ms.map((m) => m.heapBeforeMb)))} before), external up to ${f1(median(ms.map((m) => m.externalMb)))} MB (${f1(median(ms.map((m) => m.externalBeforeMb)))} before), CPU ${f1(median(ms.map((m) => m.cpuS)))} s`,
      );
    }
    // Per Node release: another V8's Math functions may round differently in the last bit.
    const kept = join(tmpdir(), `mg-bench-identity-${baselineSha}-node${process.versions.node}-case${ci}.json`);
    if (results.has('baseline')) writeFileSync(kept, JSON.stringify(results.get('baseline')![0]));
    else if (existsSync(kept)) results.set('baseline', [JSON.parse(readFileSync(kept, 'utf8')) as Measured]);
    else throw new Error(`no baseline forecasts kept at ${kept}: run once without BUILDS`);
    const base = results.get('baseline')!;
    const now = results.get('now') ?? [];
    const all = [...base, ...now];
    const diffs = all.flatMap((m) => differences(base[0], m));
    const values = base[0].steps.reduce((n, s) => n + s.periods.length * 5, 0);
    for (const s of base[0].steps) console.log(`  ${s.what}: origin ${s.originDay}, ${s.method}, inputs: ${s.inputs}, ${s.periods.length} periods`);
    if (diffs.length === 0) console.log(`  IDENTICAL: every value of every step (${values} per run) equal in all ${all.length} runs${results.get('now') ? '' : ' (no run of this checkout)'}`);
    else {
      failed = true;
      console.log(`  DIFFERENT (${diffs.length}):\n${diffs.slice(0, 20).map((d) => `    ${d}`).join('\n')}`);
    }
    rmSync(dbPath, { force: true });
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
