// Benchmark: resident memory of the whole daemon as a gateway runs it — meters polled, the
// uplink to a TLS mosquitto, the HTTP API, the price forecaster training on a year of real
// prices, and the OCPP central system with a charger connected — for the baseline's code and
// unit flags and for this checkout's, in the same run.
//   npx tsx scripts/bench/daemon-rss.ts [seconds=120] [rounds=1]   (BASELINE=<git ref>, METERS=4)
// Each variant: the compiled daemon (dist/cli.js run) under the node flags of ITS
// systemd/metergate.service ExecStart, a fresh data directory seeded with REAL NL day-ahead
// prices (../shared/data/prices/nl-2025-quarterhour-local-utc.csv, moved forward by whole
// weeks so that the last day is tomorrow: the forecaster then trains at start as on a live
// gateway), METERS simulated SDM630 meters on a Modbus TCP bus (`metergate sim`, its own
// process) polled every 10 s, and one simulated OCPP 1.6J charger (ocpp-rpc) that boots,
// reports its status and sends MeterValues every 10 s. RSS (VmRSS) is sampled every 250 ms
// for `seconds`: at 'metergate started', the peak, and the steady value (median of the last
// third). Target: peak below 100 MB (a 512 MB board). BASELINE defaults to 4ca041a (main
// before these changes).
// Looking closer: EXTRA_FLAGS='--trace-gc' adds node flags to both variants (to try a flag
// before it goes into the unit), TRACE=1 prints the log's messages with the RSS at each
// during start and the RSS every 2 s, DAEMON_LOG=<path> keeps each daemon's output
// (<path>.baseline, <path>.now), SMAPS=<path> keeps each daemon's /proc/PID/smaps at the end (its groups are printed
// in any case: scripts/bench/smaps.ts), HEAPSNAPSHOT=<dir> writes V8 heap snapshots of each
// daemon into <dir>/<variant>-<round>/ (--heapsnapshot-signal: one when it has started, one at
// the end; they cost time and RSS while written, so read that run's figures as disturbed;
// scripts/bench/heap-breakdown.ts summarizes a snapshot), TRY='<flags or KEY=value>; ...' adds
// variants of this checkout measured against `now` in the same rounds, WRAP='heaptrack -o
// <path>' runs each daemon under a tool, PRICES=entsoe turns the price sync on against a
// local ENTSO-E stand-in (each explained where it is read). On the Node the package bundles: run this script with that
// node first in PATH and node_modules' better-sqlite3 built for it (as scripts/test-bundled-node
// does); the daemons run on the node that runs this script.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RPCClient } from 'ocpp-rpc';
import { buildAcknowledgement } from '../../test/helpers/a44.js';
import { FakePlatform } from '../../test/helpers/entsoe-server.js';
import { freePort, startTlsBroker } from '../../test/helpers/mosquitto.js';
import { sharedData } from '../../test/helpers/shared-data.js';
import { buildBaselineDist, buildDist, repoRoot } from './dist.js';
import { shippedNodeFlags } from './shipped-node.js';
import { formatBreakdown, smapsBreakdown } from './smaps.js';
import { storePrices } from '../../src/prices/price-merge.js';

const SECONDS = Number(process.argv[2] ?? 120);
const ROUNDS = Number(process.argv[3] ?? 1);
const METERS = Number(process.env.METERS ?? 4);
const BASELINE = process.env.BASELINE ?? '4ca041a';
const EXTRA_FLAGS = (process.env.EXTRA_FLAGS ?? '').split(/\s+/).filter(Boolean);
const TRACE = process.env.TRACE !== undefined;
const HEAPSNAPSHOT = process.env.HEAPSNAPSHOT;
// WRAP='heaptrack -o /tmp/ht' runs each daemon under a tool that starts node as its child
// (malloc's allocations by call stack; not with HEAPSNAPSHOT); the figures are then read
// from that node process.
const WRAP = (process.env.WRAP ?? '').split(/\s+/).filter(Boolean);
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const CHARGER = 'CP-BENCH-1';
const CHARGER_PASSWORD = 'charger-secret-0123456789';
const WEEK_MS = 7 * 86_400_000;
type ClientOptions = ConstructorParameters<typeof RPCClient>[0];

buildDist();
// TRY='--max-lazy; UV_THREADPOOL_SIZE=2; --jitless MALLOC_MMAP_THRESHOLD_=16384' adds a
// variant of this checkout per ';'-separated item, with its node flags (words starting with -)
// added to the unit's and its KEY=value words over the unit's environment, measured in the
// same rounds and compared with `now` (a flag or setting tried as data before the unit gets it).
const TRIES = (process.env.TRY ?? '').split(';').map((item) => item.trim().split(/\s+/).filter(Boolean)).filter((words) => words.length > 0);
const variants = [
  { name: 'baseline', dist: () => buildBaselineDist(BASELINE), tried: [] as string[] },
  { name: 'now', dist: () => join(repoRoot, 'dist'), tried: [] as string[] },
  ...TRIES.map((words) => ({ name: `now ${words.join(' ')}`, dist: () => join(repoRoot, 'dist'), tried: words })),
]
  .filter((v) => process.env.ONLY === undefined || v.name === process.env.ONLY || v.name.startsWith(`${process.env.ONLY} `))
  .map((v) => ({ ...v, dist: v.dist() }))
  .map((v) => {
    const unit = readFileSync(join(dirname(v.dist), 'systemd', 'metergate.service'), 'utf8');
    const settings = v.tried.filter((w) => !w.startsWith('-')).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]);
    return { ...v, flags: [...shippedNodeFlags(unit), ...v.tried.filter((w) => w.startsWith('-'))], env: { ...unitEnvironment(unit), ...Object.fromEntries(settings) } };
  });

/** The unit's Environment= assignments (KEY=value words), which the daemon runs with as installed. */
function unitEnvironment(unit: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of unit.split('\n')) {
    if (!line.startsWith('Environment=')) continue;
    for (const word of line.slice('Environment='.length).trim().split(/\s+/)) {
      const eq = word.indexOf('=');
      if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1);
    }
  }
  return env;
}

// PRICES=entsoe: the price sync on, against a local stand-in for the ENTSO-E platform that
// answers every request with "no matching data" (the default config syncs prices; off by
// default here so the figures stay comparable with the earlier rounds).
const platform = process.env.PRICES === 'entsoe' ? new FakePlatform(() => ({ kind: 'xml', body: buildAcknowledgement() })) : null;
const platformUrl = platform ? await platform.start() : null;
const broker = await startTlsBroker([{ username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] }]);
const sim = spawn(process.execPath, ['dist/cli.js', 'sim', '--tcp', '0', '--unit', Array.from({ length: METERS }, (_, i) => i + 1).join(','), '--exit-with-parent'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
const simPort = await new Promise<number>((resolve, reject) => {
  let text = '';
  sim.stdout!.on('data', (d: Buffer) => {
    text += d.toString();
    const m = /"tcpPort":(\d+)/.exec(text);
    if (m) resolve(Number(m[1]));
  });
  sim.once('exit', (code) => reject(new Error(`simulator exited (${code})`)));
});
const meterIds = Array.from({ length: METERS }, () => randomUUID());

/** A data directory with a year of real prices, moved forward by whole weeks to end tomorrow, written by the variant's own code. */
async function seed(dist: string, dataDir: string): Promise<{ n: number; firstMs: number }> {
  const from = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(dist, path)).href)) as T;
  const { openDatabase } = await from<typeof import('../../src/store/db.js')>('store/db.js');
  const { PriceStore } = await from<typeof import('../../src/store/prices.js')>('store/prices.js');
  const { parsePriceCsv } = await from<typeof import('../../src/prices/sources/csv.js')>('prices/sources/csv.js');
  const { requireMarket } = await from<typeof import('../../src/prices/markets.js')>('prices/markets.js');
  const periods = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL')).periods;
  const lastEnd = Math.max(...periods.map((p) => p.startMs + p.durationS * 1000));
  const shift = Math.floor((Date.now() + 2 * 86_400_000 - lastEnd) / WEEK_MS) * WEEK_MS;
  const db = openDatabase(join(dataDir, 'metergate.db'));
  const n = storePrices(new PriceStore(db), periods.map((p) => ({ ...p, startMs: p.startMs + shift })), { source: 'csv:nl-2025-quarterhour-local-utc.csv', fetchedAtMs: Date.now() });
  db.close();
  return { n, firstMs: Math.min(...periods.map((p) => p.startMs)) + shift };
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
/** CPU seconds (user + system) the process has used, from /proc/PID/stat (clock ticks of 10 ms). */
const cpuS = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
/** The node process a WRAP tool started (a descendant of `pid` running this node; Node 24's main thread is named MainThread). */
function nodeUnder(pid: number): number {
  const children = (p: number): number[] => readdirSync(`/proc/${p}/task`).flatMap((t) => readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  const queue = [pid];
  for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
    if (p !== pid && readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith(`${process.execPath}\0`)) return p;
    queue.push(...children(p));
  }
  throw new Error(`no node process under ${WRAP[0]} (pid ${pid})`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Result {
  startedMb: number;
  peakMb: number;
  steadyMb: number;
  forecastAtS: number | null;
  /** CPU seconds the daemon had used when the forecast was stored (start-up and the first training), and at the end. */
  forecastCpuS: number | null;
  cpuS: number;
  peakAtS: number;
  /** At the end: private and shared RSS, V8 heap, external memory, threads, and the smaps groups (smaps.ts). */
  makeup: string;
}

/** Writes a heap snapshot of the daemon (started with --heapsnapshot-signal=SIGUSR2) into snapDir, and waits until it is complete. */
async function heapSnapshot(child: ChildProcess, snapDir: string): Promise<void> {
  const before = readdirSync(snapDir).length;
  child.kill('SIGUSR2');
  // Node writes the file as it goes; it is complete when its size stops changing after it appeared.
  let last = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const files = readdirSync(snapDir).filter((f) => f.endsWith('.heapsnapshot'));
    if (files.length <= before) continue;
    const size = statSync(join(snapDir, files.sort()[files.length - 1])).size;
    if (size > 0 && size === last) return;
    last = size;
  }
}

async function runVariant(v: (typeof variants)[number], round: number): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-bench-rss-'));
  const snapDir = HEAPSNAPSHOT === undefined ? null : join(HEAPSNAPSHOT, `${v.name}-${round + 1}`);
  if (snapDir) mkdirSync(snapDir, { recursive: true });
  const snapFlags = snapDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapDir}`] : [];
  const { n: prices, firstMs } = await seed(v.dist, join(dir, 'data'));
  // From the first seeded day on: the platform is asked for what the seeded year lacks, as on a gateway that has run for a year.
  const priceConfig = platform ? `{ regions: [NL], source: entsoe, backfill_from: '${new Date(firstMs + 86_400_000).toISOString().slice(0, 10)}', entsoe: { base_url: '${platformUrl}', security_token: bench-token } }` : '{ regions: [NL], source: none }';
  const [httpPort, ocppPort] = [await freePort(), await freePort()];
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `organization_id: ${ORG}
data_dir: ${dir}/data
log_level: info
buses: [{ name: sim, type: tcp, host: 127.0.0.1, tcp_port: ${simPort} }]
meters:
${meterIds.map((id, i) => `  - { resource_id: ${id}, bus: sim, unit_id: ${i + 1}, profile: sdm630 }`).join('\n')}
mqtt: { url: '${broker.url}', username: gateway, password: gw-secret, ca_file: '${broker.caFile}' }
clock: { trust: system }
http: { host: 127.0.0.1, port: ${httpPort} }
prices: ${priceConfig}
forecast: { enabled: true }
ocpp: { host: 127.0.0.1, port: ${ocppPort} }
chargers: [{ id: ${CHARGER}, password: ${CHARGER_PASSWORD}, auth: accept_all }]
`,
  );
  const nodeArgs = [...v.flags, ...EXTRA_FLAGS, ...snapFlags, join(v.dist, 'cli.js'), 'run', '--config', config];
  const child: ChildProcess = spawn(WRAP[0] ?? process.execPath, [...WRAP.slice(1), ...(WRAP.length > 0 ? [process.execPath] : []), ...nodeArgs], { cwd: dir, env: { ...process.env, ...v.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  let charger: RPCClient | null = null;
  let wrapped: number | null = null;
  let meterTimer: NodeJS.Timeout | null = null;
  try {
    const t0 = performance.now();
    let logged = 0;
    const traceStart = (): void => {
      if (!TRACE) return;
      const lines = out.split('\n');
      for (; logged < lines.length - 1; logged++) {
        const msg = /"msg":"([^"]*)"/.exec(lines[logged])?.[1];
        if (msg) console.log(`    ${((performance.now() - t0) / 1000).toFixed(1)} s ${rssMb(child.pid!).toFixed(1)} MB: ${msg.slice(0, 80)}`);
      }
    };
    while (!out.includes('metergate started')) {
      traceStart();
      if (child.exitCode !== null) throw new Error(`daemon exited:\n${out.slice(-3000)}`);
      if (performance.now() - t0 > 120_000) throw new Error(`daemon did not start:\n${out.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const pid = WRAP.length > 0 ? nodeUnder(child.pid!) : child.pid!;
    wrapped = pid === child.pid ? null : pid;
    const startedMb = rssMb(pid);
    if (snapDir) await heapSnapshot(child, snapDir);
    charger = new RPCClient({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity: CHARGER, password: CHARGER_PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    charger.handle(async () => ({ status: 'Accepted' }));
    await charger.connect();
    await charger.call('BootNotification', { chargePointVendor: 'Bench', chargePointModel: 'RSS' });
    await charger.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Available' });
    let wh = 1000;
    meterTimer = setInterval(() => {
      wh += 10;
      void charger!
        .call('MeterValues', { connectorId: 1, meterValue: [{ timestamp: new Date().toISOString(), sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] }] })
        .catch(() => undefined);
    }, 10_000);
    const samples: Array<{ s: number; mb: number }> = [];
    let forecastAtS: number | null = null;
    let forecastCpuS: number | null = null;
    const tRun = performance.now();
    while ((performance.now() - tRun) / 1000 < SECONDS) {
      await new Promise((r) => setTimeout(r, 250));
      if (child.exitCode !== null) throw new Error(`daemon exited:\n${out.slice(-3000)}`);
      const s = (performance.now() - tRun) / 1000;
      samples.push({ s, mb: rssMb(pid) });
      traceStart();
      if (TRACE && samples.length % 8 === 0) console.log(`    ${s.toFixed(0)} s: ${samples[samples.length - 1].mb.toFixed(1)} MB`);
      if (forecastAtS === null && out.includes('"msg":"forecast stored"')) [forecastAtS, forecastCpuS] = [s, cpuS(pid)];
    }
    if (snapDir) await heapSnapshot(child, snapDir);
    if (forecastAtS === null) console.log(`  ${v.name}: no 'forecast stored' within ${SECONDS} s (${prices} prices seeded)`);
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    const num = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN) / 1048576;
    const smaps = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const smapsText = readFileSync(`/proc/${pid}/smaps`, 'utf8');
    if (process.env.SMAPS) writeFileSync(`${process.env.SMAPS}.${v.name}`, smapsText);
    const threads = /^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '?';
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(smaps)?.[1] ?? 0) / 1024;
    const makeup = `private ${(kb('Private_Clean') + kb('Private_Dirty')).toFixed(1)} MB, shared ${(kb('Shared_Clean') + kb('Shared_Dirty')).toFixed(1)} MB, V8 heap used ${num('metergate_nodejs_heap_size_used_bytes').toFixed(1)} of ${num('metergate_nodejs_heap_size_total_bytes').toFixed(1)} MB, external ${num('metergate_nodejs_external_memory_bytes').toFixed(1)} MB, ${threads} threads\n      smaps: ${formatBreakdown(smapsBreakdown(smapsText))}`;
    const peak = samples.reduce((a, b) => (b.mb > a.mb ? b : a), { s: 0, mb: startedMb });
    const steady = median(samples.slice(Math.floor((samples.length * 2) / 3)).map((x) => x.mb));
    return { startedMb, peakMb: peak.mb, peakAtS: peak.s, steadyMb: steady, forecastAtS, forecastCpuS, cpuS: cpuS(pid), makeup };
  } finally {
    if (meterTimer) clearInterval(meterTimer);
    if (process.env.DAEMON_LOG) writeFileSync(`${process.env.DAEMON_LOG}.${v.name}`, out);
    await charger?.close({ force: true }).catch(() => undefined);
    if (wrapped !== null) process.kill(wrapped, 'SIGTERM'); // the tool ends with it
    else child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`${METERS} simulated SDM630 meters (10 s), uplink to TLS mosquitto, HTTP, forecast on a year of real NL prices, OCPP with one charger${platform ? ", price sync from a local ENTSO-E stand-in" : ""}; ${SECONDS} s per run; baseline ${BASELINE}`);
for (const v of variants) console.log(`  ${v.name}: ${Object.entries(v.env).map(([k, x]) => `${k}=${x} `).join('')}node ${[...v.flags, ...EXTRA_FLAGS].join(' ')} ${v.dist}/cli.js run (node ${process.version})`);
const results = new Map<string, Result[]>(variants.map((v) => [v.name, []]));
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating order, so neither side always runs on the busier minute.
    for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
      const r = await runVariant(v, round);
      results.get(v.name)!.push(r);
      console.log(
        `  round ${round + 1} ${v.name.padEnd(8)}: RSS at start ${r.startedMb.toFixed(1)} MB, peak ${r.peakMb.toFixed(1)} MB (at ${r.peakAtS.toFixed(0)} s), steady ${r.steadyMb.toFixed(1)} MB; forecast stored at ${r.forecastAtS === null ? '-' : `${r.forecastAtS.toFixed(0)} s (CPU ${r.forecastCpuS!.toFixed(1)} s)`}, CPU ${r.cpuS.toFixed(1)} s in all\n      at the end: ${r.makeup}`,
      );
    }
  }
} finally {
  sim.kill('SIGTERM');
  await broker.stop();
  if (platform) {
    console.log(`price platform: ${platform.requests.length} requests answered`);
    await platform.stop();
  }
}
const med = (rs: Result[], k: 'startedMb' | 'peakMb' | 'steadyMb') => median(rs.map((r) => r[k]));
const cpuMed = (rs: Result[]) => median(rs.map((r) => r.cpuS));
const trained = (rs: Result[]) => rs.filter((r) => r.forecastCpuS !== null).map((r) => r.forecastCpuS!);
/** Medians of `to` against `from`, as ratios. */
function compare(fromName: string, toName: string): void {
  const [a, b] = [results.get(fromName)!, results.get(toName)!];
  console.log(`\nmedians over rounds      ${fromName} -> ${toName}  (ratio)`);
  for (const k of ['startedMb', 'steadyMb', 'peakMb'] as const) {
    console.log(`  ${k.replace('Mb', ' RSS (MB)').padEnd(22)} ${med(a, k).toFixed(1).padStart(8)} -> ${med(b, k).toFixed(1).padStart(6)}  (${(med(b, k) / med(a, k)).toFixed(2)}x)`);
  }
  console.log(`  CPU in all (s)         ${cpuMed(a).toFixed(1).padStart(8)} -> ${cpuMed(b).toFixed(1).padStart(6)}  (${(cpuMed(b) / cpuMed(a)).toFixed(2)}x)`);
  if (trained(a).length > 0 && trained(b).length > 0) {
    console.log(`  CPU to forecast (s)    ${median(trained(a)).toFixed(1).padStart(8)} -> ${median(trained(b)).toFixed(1).padStart(6)}  (${(median(trained(b)) / median(trained(a))).toFixed(2)}x)`);
  } else console.log(`  CPU to forecast: not comparable (forecast stored in ${trained(a).length} / ${trained(b).length} of the rounds)`);
}
if (results.has('baseline') && results.has('now')) compare('baseline', 'now');
for (const v of variants) if (v.tried.length > 0 && results.has('now')) compare('now', v.name);
if (results.has('now')) console.log(`target: peak below 100 MB: ${med(results.get('now')!, 'peakMb') < 100 ? 'met' : 'NOT met'}`);
