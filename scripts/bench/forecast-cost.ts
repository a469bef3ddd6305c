// Benchmark (issue 15 point 6): the cost of the live forecaster as the daemon runs it.
//   npx tsx scripts/bench/forecast-cost.ts          (builds first; needs ../shared/data)
//   PROFILE=/tmp/prof npx tsx scripts/bench/forecast-cost.ts   (also writes --cpu-prof
//   profiles of the cold forecasts and of the warm processes into that folder; the warm
//   one's timed part starts at the `warm-start-us` instant written next to it)
//   DIST=.tmp/dist-before npx tsx scripts/bench/forecast-cost.ts   (measures another build,
//   e.g. a copy of dist/ from before a change, in the checkout so node_modules resolves,
//   without building: compare CPU and the forecast digests)
//
// Each case is a scratch SQLite file filled with the project's CSV importer (prices and,
// from the NL history file and from those of NL's coupled neighbours (DE-LU), the Load_DA,
// Sol_DA, Won_DA, Woff_DA columns, as `prices import --exogenous` stores them) and then
// cut back to what a live gateway holds
// at 11:00 local on the origin day D: prices through D (D+1's auction closes at 12:00),
// exogenous series through D+1 (the platform publishes the day-ahead load forecast around
// 10:00), all of it fetched by 10:15. Every measurement is a fresh process running the
// compiled dist/ under plain node with the daemon's flags (systemd unit):
//   - baseline: opens the store, reads the same prices (and series) the service reads and
//     makes the naive (week-ago) forecast;
//   - cold: ForecastService.computeRegion as the daemon calls it after a start (every
//     calibration origin, all models, conformal bounds, stored in forecast_runs);
//   - warm: the same service warm, then one day later: D+1's prices (as the sync stores
//     them, fetched D 12:50) and D+2's series (fetched D+1 10:15) arrive and refresh()
//     recomputes (what prices.updated / exogenous.updated trigger); only that is timed;
//   - the live day: the same service from D 11:00 (with series), then D+1's prices at
//     D 13:00 (origin D+1, whose next day has no series yet: price only), D+2's series at
//     D+1 10:30 (with series again), D+2's prices at D+1 13:00 (price only): each refresh
//     timed; the last two are the daily updates of a service that has run a day.
// Band (issue 24): the service ships, per horizon, the band src/forecast/band-methods.json
// adopts (NL: the IDR/conformal average, which fits IDR at each horizon of the last origin).
// Every cold and warm line is measured twice, interleaved: with the conformal band
// everywhere (the service before the adoption: its deps' bandMethods with nothing measured)
// and with the shipped table; the line prints the difference in CPU and peak RSS.
// Targets: cold with exogenous inputs <= 30 s CPU and <= 100 MB of the forecaster's own
// memory (peak RSS above the baseline's); warm <= 2 s. CPU is user+sys of the process
// during the call (process.cpuUsage) and decides; wall is printed with the load average:
// on this shared 2-core machine wall time is CPU time stretched by the other processes. Exits 1 if a target is
// missed or the exogenous case did not use the series.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildDist, fromDist, repoRoot } from './dist.js';
import { shippedNodeFlags } from './shipped-node.js';

const TZ = 'Europe/Amsterdam';
const HOUR_MS = 3_600_000;
const DATA = resolve(repoRoot, '../shared/data/prices');
const HISTORY_FILE = 'nl-2015-2023h1-entsoe-hourly.csv';
// The forecaster of a market reads its coupled neighbours' series too (markets.json
// exogenous_neighbours: NL reads DE-LU's), which the gateway syncs with NL's; their history
// files, by zone. The neighbours' prices are not kept: the gateway syncs only their series.
const NEIGHBOUR_FILES: Readonly<Record<string, string>> = { 'DE-LU': 'de-lu-2018-2023h1-entsoe-hourly.csv' };
const TARGET = { coldCpuS: 30, ownMemoryMb: 100, warmS: 2 };

const DIST = process.env.DIST ? resolve(process.env.DIST) : join(repoRoot, 'dist');
if (!process.env.DIST) buildDist();
const { openDatabase } = await fromDist<typeof import('../../src/store/db.js')>('store/db.js');
const { PriceStore } = await fromDist<typeof import('../../src/store/prices.js')>('store/prices.js');
const { ExogenousStore } = await fromDist<typeof import('../../src/store/exogenous.js')>('store/exogenous.js');
const { importPriceFile } = await fromDist<typeof import('../../src/prices/import.js')>('prices/import.js');
const { dayFromIso, localMidnightMs } = await fromDist<typeof import('../../src/forecast/local-days.js')>('forecast/local-days.js');
const { EXOGENOUS_SERIES_NAMES } = await fromDist<typeof import('../../src/prices/exogenous/series.js')>('prices/exogenous/series.js');
const { forecastMarket } = await fromDist<typeof import('../../src/forecast/service.js')>('forecast/service.js');
const NEIGHBOURS = forecastMarket('NL')?.exogenousNeighbours ?? [];

// The measured process. argv: mode (baseline|cold|warm), db, case json. It prints one JSON line.
const CHILD = `
const [mode, dbPath, caseJson, dist] = process.argv.slice(1);
const c = JSON.parse(caseJson);
const imp = (p) => import(new URL('file://' + dist + '/' + p).href);
const { openDatabase } = await imp('store/db.js');
const { PriceStore } = await imp('store/prices.js');
const { mergePrices } = await imp('prices/price-merge.js');
const { mergeExogenous } = await imp('prices/exogenous/exogenous-merge.js');
const { ExogenousStore } = await imp('store/exogenous.js');
const { ForecastStore } = await imp('store/forecasts.js');
const { validateConfig } = await imp('config/load.js');
const { createLogger } = await imp('log.js');
const { toDayMatrix } = await imp('forecast/day-matrix.js');
const { localDayOf } = await imp('forecast/local-days.js');
const { historyDaysNeeded } = await imp('forecast/market-forecast.js');
const { ForecastService, forecastMarket, rollingOptions } = await imp('forecast/service.js');
const { EXOGENOUS_SERIES_NAMES } = await imp('prices/exogenous/series.js');
const { createHash } = await import('node:crypto');
const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/tmp/unused', prices: { regions: ['NL'] } }, 'bench', {});
const db = openDatabase(dbPath);
let nowMs = c.nowMs;
const prices = new PriceStore(db);
const exogenous = new ExogenousStore(db);
const forecasts = new ForecastStore(db);
const measure = async (fn) => {
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const out = await fn();
  const cpu = process.cpuUsage(cpu0);
  return { out, seconds: (performance.now() - started) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
};
let result;
if (mode === 'baseline') {
  // What any forecast reads, then the naive forecast: the same periods a week earlier.
  result = await measure(() => {
    const fromMs = nowMs - (historyDaysNeeded(rollingOptions(config)) + 2) * 86400000;
    const history = prices.native('NL', fromMs, nowMs + 3 * 86400000);
    let seriesPoints = 0;
    if (c.exogenous)
      for (const area of ['NL', ...(forecastMarket('NL')?.exogenousNeighbours ?? [])])
        for (const name of EXOGENOUS_SERIES_NAMES) seriesPoints += (exogenous.fetchedValues ?? exogenous.points).call(exogenous, area, name, fromMs, nowMs + 3 * 86400000).length;
    const slots = c.intervalS === 900 ? 96 : 24;
    const day = localDayOf('${TZ}', nowMs);
    const m = toDayMatrix('${TZ}', history.map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.pricePerMwh })), day - 14, day + 7, slots);
    let periods = 0;
    for (let d = day + 1; d <= day + 7; d++) for (let s = 0; s < slots; s++) if (Number.isFinite(m.values[(d - 7 - (day - 14)) * slots + s])) periods++;
    return { periods, historyPoints: history.length, seriesPoints };
  });
} else {
  // c.band 'conformal': the band before issue 24's adoption (nothing measured, conformal everywhere).
  const bandMethods = c.band === 'conformal' ? { ...(await imp('forecast/band-methods.js')).shippedBandMethods(), measured: [] } : undefined;
  const service = new ForecastService({
    config, logger: createLogger('silent'), clock: { now: () => nowMs }, forecasts, prices,
    ...(c.exogenous ? { exogenous } : {}), market: forecastMarket,
    ...(bandMethods ? { bandMethods } : {}),
  });
  const run = async (call) => {
    const ok = await call();
    const latest = forecasts.latestRun('NL');
    // A digest of the stored forecast: a change meant to make it cheaper must leave it as it was.
    const digest = createHash('sha256').update(JSON.stringify(forecasts.periods('NL', 0, Number.MAX_SAFE_INTEGER))).digest('hex').slice(0, 12);
    return { ok, originDay: latest?.originDay, inputs: latest?.inputs, method: latest?.method, health: service.health().reason, digest };
  };
  if (mode === 'cold') result = await measure(() => run(() => service.computeRegion('NL')));
  else if (mode === 'day') {
    // The live rhythm: with series at D 11:00, then the day's switches, each timed.
    const n = c.next;
    await run(() => service.computeRegion('NL'));
    const steps = [];
    const step = async (what, apply) => {
      apply();
      const m = await measure(() => run(() => service.refresh().then(() => true)));
      steps.push({ what, seconds: m.seconds, cpuSeconds: m.cpuSeconds, inputs: m.out.inputs, originDay: m.out.originDay, digest: m.out.digest });
    };
    await step("D+1's prices arrive (D 13:00): origin D+1, price only", () => { mergePrices(prices, n.prices, { source: 'entsoe', fetchedAtMs: n.pricesFetchedAtMs }); nowMs = n.pricesNowMs; });
    await step("D+2's series arrive (D+1 10:30): origin D+1 with series", () => { mergeExogenous(exogenous, n.series, { source: 'entsoe-exogenous', fetchedAtMs: n.seriesFetchedAtMs }); nowMs = n.seriesNowMs; });
    await step("D+2's prices arrive (D+1 13:00): origin D+2, price only", () => { mergePrices(prices, n.prices2, { source: 'entsoe', fetchedAtMs: n.prices2FetchedAtMs }); nowMs = n.prices2NowMs; });
    result = { out: { steps }, seconds: 0, cpuSeconds: 0 };
  } else {
    await run(() => service.computeRegion('NL'));
    // The next day's data, as the sync stores it (outside the timed part: the sync's work).
    const next = c.next;
    mergePrices(prices, next.prices, { source: 'entsoe', fetchedAtMs: next.pricesFetchedAtMs });
    if (next.series.length > 0) mergeExogenous(exogenous, next.series, { source: 'entsoe-exogenous', fetchedAtMs: next.seriesFetchedAtMs });
    nowMs = next.nowMs;
    // For PROFILE: the monotonic instant (µs, the profile's clock) the timed part starts.
    process.stderr.write('warm-start-us ' + process.hrtime.bigint() / 1000n + '\\n');
    result = await measure(() => run(() => service.refresh().then(() => true)));
  }
}
db.close();
process.stdout.write(JSON.stringify({ ...result, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
`;

interface Measured {
  seconds: number;
  cpuSeconds: number;
  peakRssMb: number;
  out: { steps?: Array<{ what: string; seconds: number; cpuSeconds: number; inputs?: string; originDay?: string; digest?: string }>; ok?: boolean; digest?: string; originDay?: string; inputs?: string; method?: string; health?: string; periods?: number; historyPoints?: number; seriesPoints?: number };
}

interface Case {
  readonly label: string;
  readonly originDay: string;
  readonly intervalS: 900 | 3600;
  readonly files: ReadonlyArray<{ name: string; exogenous: boolean }>;
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 16) + 'Z';

/** A scratch store holding what the gateway holds at 11:00 on the origin day, and the next day's data. */
function prepare(dir: string, c: Case) {
  const day = dayFromIso(c.originDay);
  const at = (d: number, hours: number) => localMidnightMs(TZ, d) + hours * HOUR_MS;
  const fetchedAtMs = at(day, 10.25);
  const dbPath = join(dir, `${c.originDay}.db`);
  const db = openDatabase(dbPath);
  const priceStore = new PriceStore(db);
  const exoStore = new ExogenousStore(db);
  for (const f of c.files) importPriceFile(priceStore, join(DATA, f.name), 'NL', fetchedAtMs, f.exogenous ? { exogenous: exoStore } : {});
  for (const area of NEIGHBOURS) {
    const file = NEIGHBOUR_FILES[area];
    if (!file) throw new Error(`NL reads ${area}'s series: add its history file to NEIGHBOUR_FILES`);
    importPriceFile(priceStore, join(DATA, file), area, fetchedAtMs, { exogenous: exoStore });
    db.prepare('DELETE FROM prices WHERE market_area = ?').run(area);
  }
  const areas = ['NL', ...NEIGHBOURS];
  // What is not published yet at D 11:00 goes; D+1's prices and D+2's series are kept for the warm step.
  const pricesFromMs = at(day + 1, 0);
  const seriesFromMs = at(day + 2, 0);
  const next = {
    prices: priceStore.native('NL', pricesFromMs, at(day + 2, 0)),
    pricesFetchedAtMs: at(day, 12.8),
    series: areas.flatMap((area) => EXOGENOUS_SERIES_NAMES.flatMap((name) => exoStore.points(area, name, seriesFromMs, at(day + 3, 0)))).map(({ marketArea, series, startMs, durationS, valueMw }) => ({ marketArea, series, startMs, durationS, valueMw })),
    seriesFetchedAtMs: at(day + 1, 10.25),
    nowMs: at(day + 1, 11),
    // The live day (mode day): D+1's prices at D 13:00, D+2's series at D+1 10:30, D+2's prices at D+1 13:00.
    pricesNowMs: at(day, 13),
    seriesNowMs: at(day + 1, 10.5),
    prices2: priceStore.native('NL', at(day + 2, 0), at(day + 3, 0)),
    prices2FetchedAtMs: at(day + 1, 12.8),
    prices2NowMs: at(day + 1, 13),
  };
  db.prepare('DELETE FROM prices WHERE market_area = ? AND start_ms >= ?').run('NL', pricesFromMs);
  db.prepare('DELETE FROM exogenous_series WHERE start_ms >= ?').run(seriesFromMs);
  const held = {
    prices: priceStore.coverage('NL'),
    series: Object.fromEntries(areas.flatMap((area) => EXOGENOUS_SERIES_NAMES.map((n) => [`${area} ${n}`, exoStore.points(area, n, 0, Number.MAX_SAFE_INTEGER).length]))),
  };
  db.close();
  if (next.prices.length === 0) throw new Error(`${c.label}: the files have no prices for the day after ${c.originDay}`);
  return { dbPath, nowMs: at(day, 11), next, held };
}

function measure(mode: 'baseline' | 'cold' | 'warm' | 'day', dbPath: string, c: Record<string, unknown>, profileName?: string): Measured {
  // Each process works on its own copy: the service writes its forecast (and the warm one the next day).
  const copy = `${dbPath}.${mode}.${c.exogenous ? 'exo' : 'price'}.${c.band ?? 'shipped'}.db`;
  copyFileSync(dbPath, copy);
  const profile = process.env.PROFILE && profileName ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE}`, `--cpu-prof-name=${profileName}.cpuprofile`] : [];
  const r = spawnSync('node', [...shippedNodeFlags(), ...profile, '--input-type=module', '-e', CHILD, mode, copy, JSON.stringify(c), DIST], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  rmSync(copy, { force: true });
  const warmStart = /warm-start-us (\d+)/.exec(r.stderr ?? '')?.[1];
  if (process.env.PROFILE && profileName && warmStart) writeFileSync(join(process.env.PROFILE, `${profileName}.warm-start-us`), warmStart);
  if (r.status !== 0) throw new Error(`${mode} process failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Measured;
}

const cases: Case[] = [
  { label: 'NL 2023-03-15, 3600 s', originDay: '2023-03-15', intervalS: 3600, files: [{ name: HISTORY_FILE, exogenous: true }] },
  {
    label: 'NL 2025-12-15, 900 s',
    originDay: '2025-12-15',
    intervalS: 900,
    files: [
      { name: HISTORY_FILE, exogenous: true },
      { name: 'nl-2024-hourly-local.csv', exogenous: false },
      { name: 'nl-2025-quarterhour-local-utc.csv', exogenous: false },
    ],
  },
];

// ONLY=900 (or any part of a case's label): just those cases, for a quick comparison.
if (process.env.ONLY) cases.splice(0, cases.length, ...cases.filter((c) => c.label.includes(process.env.ONLY ?? '')));
const dir = mkdtempSync(join(tmpdir(), 'metergate-bench-cost-'));
if (process.env.PROFILE) console.log(`CPU profiles of the cold forecasts go to ${process.env.PROFILE}`);
const failures: string[] = [];
const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);
try {
  console.log(`${DIST}: load average ${f1(loadavg()[0])} on ${cpus().length} CPUs; node ${process.version} ${shippedNodeFlags().join(' ')}; each line a fresh process`);
  for (const c of cases) {
    const { dbPath, nowMs, next, held } = prepare(dir, c);
    console.log(`\n${c.label}: clock ${iso(nowMs)} (11:00 local), store: prices ${iso(held.prices.firstStartMs ?? 0)} .. ${iso(held.prices.lastEndMs ?? 0)}, series points ${JSON.stringify(held.series)}, all fetched by 10:15 local`);
    // The daemon always gives the service its series store; at 900 s (2025) it holds nothing
    // that covers the target day, so that case is price only and its stored run says why.
    const withExo = c.intervalS === 3600;
    const arg = (exogenous: boolean, band?: 'conformal') => ({ nowMs, intervalS: c.intervalS, exogenous, next, ...(band ? { band } : {}) });
    // The baseline reads what the measured process reads: the series too, where it reads them.
    const baselines = new Map<boolean, Measured>();
    for (const exo of withExo ? [true, false] : [true]) {
      const base = measure('baseline', dbPath, arg(exo));
      baselines.set(exo, base);
      console.log(`  baseline${withExo ? (exo ? ' with series' : ' price only') : ''} (read the store + naive forecast): ${f2(base.seconds)} s wall, ${f2(base.cpuSeconds)} s CPU, peak RSS ${f1(base.peakRssMb)} MB (${base.out.historyPoints} prices, ${base.out.seriesPoints} series points read)`);
    }
    const rows: Array<[string, Measured, boolean, Measured]> = [];
    // Each measurement with the conformal band first, then the shipped one (interleaved).
    const both = (mode: 'cold' | 'warm', exogenous: boolean, name: string): [Measured, Measured] => {
      const conformal = measure(mode, dbPath, arg(exogenous, 'conformal'), `${name}-conformal`);
      return [measure(mode, dbPath, arg(exogenous), name), conformal];
    };
    if (withExo) {
      const [cold, coldConformal] = both('cold', true, `cold-exo-${c.intervalS}`);
      rows.push(['cold, with exogenous inputs', cold, true, coldConformal]);
      if (!cold.out.ok || !cold.out.inputs?.startsWith('prices + load')) {
        failures.push(`${c.label}: the cold forecast did not use the exogenous series (inputs: ${cold.out.inputs ?? 'none stored'})`);
      }
      const [price, priceConformal] = both('cold', false, `cold-price-${c.intervalS}`);
      rows.push(['cold, price only (service without a series store)', price, false, priceConformal]);
    } else {
      const [price, priceConformal] = both('cold', true, `cold-price-${c.intervalS}`);
      rows.push(['cold, price only (no series for 2025 in the files)', price, true, priceConformal]);
    }
    const [warm, warmConformal] = both('warm', true, `warm-${c.intervalS}`);
    rows.push([`warm daily update${withExo ? ', with exogenous inputs' : ', price only'}`, warm, true, warmConformal]);
    if (withExo && !warm.out.inputs?.startsWith('prices + load')) failures.push(`${c.label}: the warm update did not use the exogenous series (inputs: ${warm.out.inputs})`);
    const line = (what: string, m: Measured, exo: boolean) => {
      const base = baselines.get(exo)!;
      const own = m.peakRssMb - base.peakRssMb;
      console.log(
        `  ${what}: ${f2(m.seconds)} s wall, ${f2(m.cpuSeconds)} s CPU (x${f1(m.cpuSeconds / base.cpuSeconds)} the baseline's CPU, x${f1(m.seconds / base.seconds)} its wall), ` +
          `peak RSS ${f1(m.peakRssMb)} MB (own +${f1(own)} MB) | origin ${m.out.originDay}, ${m.out.method}, inputs: ${m.out.inputs}, forecast digest ${m.out.digest}`,
      );
    };
    for (const [what, m, exo, conformal] of rows) {
      line(`${what}, conformal band`, conformal, exo);
      line(`${what}, shipped band`, m, exo);
      console.log(`    shipped band vs conformal band: ${m.cpuSeconds >= conformal.cpuSeconds ? '+' : ''}${f2(m.cpuSeconds - conformal.cpuSeconds)} s CPU (x${f2(m.cpuSeconds / conformal.cpuSeconds)}), peak RSS ${m.peakRssMb >= conformal.peakRssMb ? '+' : ''}${f1(m.peakRssMb - conformal.peakRssMb)} MB`);
    }
    const [coldWhat, cold, coldExo] = rows[0];
    const own = cold.peakRssMb - baselines.get(coldExo)!.peakRssMb;
    const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
    // Judged on CPU: wall time on this shared machine is CPU times the load (printed).
    const checks: Array<[string, boolean]> = [
      [`${coldWhat}: ${f2(cold.cpuSeconds)} s CPU <= ${TARGET.coldCpuS} s (wall ${f2(cold.seconds)} s)`, cold.cpuSeconds <= TARGET.coldCpuS],
      [`${coldWhat}: own memory ${f1(own)} MB <= ${TARGET.ownMemoryMb} MB`, own <= TARGET.ownMemoryMb],
      [`warm daily update: ${f2(warm.cpuSeconds)} s CPU <= ${TARGET.warmS} s (wall ${f2(warm.seconds)} s at load average ${f1(loadavg()[0])})`, warm.cpuSeconds <= TARGET.warmS],
    ];
    for (const [what, ok] of checks) {
      console.log(`  ${verdict(ok)} ${what}`);
      if (!ok) failures.push(`${c.label}: ${what}`);
    }
    if (withExo) {
      // The live day: the inputs switch twice a day (with series once tomorrow's are fetched,
      // price only once tomorrow's prices are in); each switch is a daily update too.
      const dayM = measure('day', dbPath, arg(true), `day-${c.intervalS}`);
      console.log(`  the live day, in one warm service from D 11:00 (with series; peak RSS ${f1(dayM.peakRssMb)} MB, +${f1(dayM.peakRssMb - baselines.get(true)!.peakRssMb)} MB over the baseline):`);
      for (const st of dayM.out.steps ?? []) console.log(`    ${st.what}: ${f2(st.seconds)} s wall, ${f2(st.cpuSeconds)} s CPU | origin ${st.originDay}, inputs: ${st.inputs}, forecast digest ${st.digest}`);
      const [, seriesIn, pricesIn] = dayM.out.steps ?? [];
      for (const st of [seriesIn, pricesIn]) {
        const ok = st !== undefined && st.cpuSeconds <= TARGET.warmS;
        const what = `live day, ${st?.what ?? 'step missing'}: ${f2(st?.cpuSeconds ?? NaN)} s CPU <= ${TARGET.warmS} s`;
        console.log(`  ${verdict(ok)} ${what}`);
        if (!ok) failures.push(`${c.label}: ${what}`);
      }
      if (!seriesIn?.inputs?.startsWith('prices + load')) failures.push(`${c.label}: the live day's series did not reach the forecast (inputs: ${seriesIn?.inputs})`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
writeFileSync(1, failures.length === 0 ? '\nall targets met\n' : `\nMISSED:\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
process.exit(failures.length === 0 ? 0 : 1);
