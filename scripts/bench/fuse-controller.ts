// Benchmark: the fuse controller (src/ocpp/fuse-controller.ts) on the real path, against
// today's followers before it (src/ocpp/site-follower.ts at commit 1cb1cd6) in the same run.
//
// Each side runs in its own child process (tsx): a real Daemon (buildModules: clock guard,
// site meter, central system, plan follower, fuse controller or site follower, HTTP API...) on
// a temporary SQLite file with real NL prices of 2025-05-10..13 (../shared/data), and 10
// chargers: strict ocpp-rpc clients in the same child process, connected over websockets on
// loopback, each with a target (PUT …/plan over HTTP) and an open transaction. The site
// meter's readings are injected as sample.taken events (its Modbus TCP bus points at a closed
// port and is polled once an hour). The gateway's clock (ctx.clock) is a fake one the bench
// advances (6 s per reading, past site.raise_interval_s 5 s, its floor), the websocket I/O
// is real.
//
//   latency    1,000 load steps alternating down/up (other load 10 A / 60 A per phase under
//              site.limit_a 150 A: each connector's share 14 A / 9 A). Every up-step demands
//              a lowering of all 10: the time from the emit of the reading to each
//              SetChargingProfile arriving at its charger client (performance.now() in the
//              same process), first and last of the 10 per step, p50/p99.
//   cpu        process.cpuUsage (user+system) of the child per site-meter reading: steady
//              (N readings, no load change, nothing sent: what a 1 s poll pays) and per
//              up-step (the lowering: the reading, 10 calls sent and answered, the clients'
//              own handling included), each from the emit until 30 ms after the last call
//              arrived. The current code's figure over the baseline's is the ratio.
//
// The baseline is built from git (git archive 1cb1cd6 into a temporary directory, node_modules
// linked); in a shallow clone without it the bench says so and prints the current figures.
// The fake clock reads 2025, before the build date: the clock guard holds the readings in both
// trees (nothing recorded), so the CPU is the site meter's and the controller's path.
// The machine is shared: wall latencies carry the others' load (the load average is
// printed); CPU time is the fairer figure.
//   npx tsx scripts/bench/fuse-controller.ts [steps=1000] [readings=500]   (needs ../shared/data)
//   MG_BENCH_LOG=FILE: each child's daemon logs at info level to FILE (a step that missed is named)
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { RPCClient } from 'ocpp-rpc';
import pino from 'pino';
import type { MeterSample } from '../../src/domain.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const BASELINE_COMMIT = '1cb1cd6';
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PRICES_CSV = resolve(REPO, '../shared/data/prices/nl-2025-quarterhour-local-utc.csv');
const START_MS = Date.parse('2025-05-11T06:20:00Z');
const SITE_METER = '6f1c2a9e-3b7d-4e58-a1c4-9d2e7b5f0c31';
const PASSWORD = 'charger-secret-0123456789';
const CHARGERS = 10;
const LIMIT_A = 150;
const LOW_A = 10;
const HIGH_A = 60;
/** Past site.raise_interval_s (5 s, its floor): every down-step may raise, every up-step must lower. */
const STEP_MS = 6000;
/** After the last call of a step: its answers are stored before the next reading. */
const QUIET_MS = 30;

interface ChildResult {
  root: string;
  followerFile: string;
  steps: number;
  /** Per up-step: ms from the emit to the first and to the last (10th) SetChargingProfile at its client. */
  firstMs: number[];
  lastMs: number[];
  /** Every lowering call: ms from the emit to its arrival. */
  callMs: number[];
  /** Up-steps that did not lower all 10 within 10 s (their missing calls count as Infinity). */
  missedSteps: number;
  /** Down-steps that did not raise all 10 within 10 s. */
  missedRaises: number;
  readings: number;
  steadyCpuMs: number;
  steadySent: number;
  loweringCpuMs: number;
}

if (process.argv[2] === '--child') {
  const result = await measure(resolve(process.argv[3]!), Number(process.argv[4]), Number(process.argv[5]));
  // To a file: a large line on a pipe is cut short by process.exit. A call that never came (Infinity) is written as null.
  writeFileSync(process.argv[6]!, JSON.stringify(result));
  process.exit(0);
} else {
  await main();
}

async function main(): Promise<void> {
  const steps = Number(process.argv[2] ?? 1000);
  const readings = Number(process.argv[3] ?? 500);
  if (!existsSync(PRICES_CSV)) throw new Error(`${PRICES_CSV} not found: the bench needs ../shared/data`);
  const baseline = baselineTree();
  const load0 = loadavg()[0]!;
  console.log(`fuse controller: ${CHARGERS} chargers (strict ocpp-rpc clients in the daemon's process, websockets on loopback), site.limit_a ${LIMIT_A} A, other load ${LOW_A}/${HIGH_A} A per phase alternating, ${steps} load steps, ${readings} steady readings; load average ${load0.toFixed(1)} on a shared machine`);
  try {
    const current = await child(REPO, steps, readings);
    const old = 'root' in baseline ? await child(baseline.root, steps, readings) : null;
    if (!('root' in baseline)) console.log(`baseline: ${baseline.why}; the current figures only`);
    report(current, old);
  } finally {
    if ('root' in baseline) rmSync(baseline.root, { recursive: true, force: true });
  }
  console.log(`load average at the end ${loadavg()[0]!.toFixed(1)}`);
}

/** The tree of the baseline commit, from git (src/, package.json, tsconfig.json; node_modules linked). */
function baselineTree(): { root: string } | { why: string } {
  try {
    execFileSync('git', ['-C', REPO, 'cat-file', '-e', `${BASELINE_COMMIT}^{commit}`], { stdio: 'ignore' });
  } catch {
    return { why: `commit ${BASELINE_COMMIT} (the last with src/ocpp/site-follower.ts) is not in this clone (shallow?)` };
  }
  const root = mkdtempSync(join(tmpdir(), 'mg-bench-fuse-base-'));
  const tar = execFileSync('git', ['-C', REPO, 'archive', BASELINE_COMMIT, 'src', 'package.json', 'tsconfig.json'], { maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', root], { input: tar });
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  return { root };
}

/** Runs the measurement in a child (tsx) on the tree at root; its result. */
function child(root: string, steps: number, readings: number): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const tsx = join(REPO, 'node_modules/.bin/tsx');
    const out = join(mkdtempSync(join(tmpdir(), 'mg-bench-fuse-out-')), 'result.json');
    const p = spawn(tsx, [fileURLToPath(import.meta.url), '--child', root, String(steps), String(readings), out], { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] });
    p.on('error', reject);
    p.on('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`child on ${root} exited ${code}`);
        resolvePromise(JSON.parse(readFileSync(out, 'utf8'), (_key, v: unknown) => (v === null ? Infinity : v)) as ChildResult);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      } finally {
        rmSync(dirname(out), { recursive: true, force: true });
      }
    });
  });
}

function pct(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

function ms(v: number): string {
  return Number.isNaN(v) ? '-' : v === Infinity ? '> 10 s' : v < 10 ? `${v.toFixed(2)} ms` : `${v.toFixed(0)} ms`;
}

function report(current: ChildResult, old: ChildResult | null): void {
  const rows: Array<[string, (r: ChildResult) => number, boolean]> = [
    ['reading -> first lowering on the wire, p50', (r) => pct(r.firstMs, 50), false],
    ['reading -> first lowering on the wire, p99', (r) => pct(r.firstMs, 99), false],
    [`reading -> all ${CHARGERS} lowerings on the wire, p50`, (r) => pct(r.lastMs, 50), false],
    [`reading -> all ${CHARGERS} lowerings on the wire, p99`, (r) => pct(r.lastMs, 99), false],
    ['reading -> a lowering on the wire (every call), p99', (r) => pct(r.callMs, 99), false],
    ['CPU per reading, steady (nothing sent)', (r) => r.steadyCpuMs / r.readings, true],
    [`CPU per reading with a lowering (${CHARGERS} calls)`, (r) => r.loweringCpuMs / r.steps, true],
  ];
  const w = Math.max(...rows.map((r) => r[0].length));
  console.log('');
  console.log(`${''.padEnd(w)} | ${'current'.padStart(9)} | ${`${BASELINE_COMMIT}`.padStart(9)} | ratio`);
  for (const [name, f, ratio] of rows) {
    const a = f(current);
    const b = old ? f(old) : NaN;
    console.log(`${name.padEnd(w)} | ${ms(a).padStart(9)} | ${ms(b).padStart(9)} | ${ratio && old ? (a / b).toFixed(2) : ''}`);
  }
  for (const [name, r] of [['current', current], [BASELINE_COMMIT, old]] as const) {
    if (!r) continue;
    console.log(`${name}: ${r.followerFile}; ${r.steps} up-steps (${r.missedSteps} not lowered in full within 10 s; ${r.missedRaises} down-steps not raised in full), ${r.readings} steady readings (${r.steadySent} calls sent during them)`);
  }
}

// --- the child: one tree's daemon, 10 clients, the measurements ---

async function measure(root: string, steps: number, readings: number): Promise<ChildResult> {
  const load = <T>(rel: string) => import(pathToFileURL(join(root, rel)).href) as Promise<T>;
  const { validateConfig } = await load<typeof import('../../src/config/load.js')>('src/config/load.ts');
  const { createContext, Daemon } = await load<typeof import('../../src/daemon.js')>('src/daemon.ts');
  const { createLogger } = await load<typeof import('../../src/log.js')>('src/log.ts');
  const { freePort } = await load<typeof import('../../src/free-port.js')>('src/free-port.ts');
  const { importPriceFile } = await load<typeof import('../../src/prices/import.js')>('src/prices/import.ts');
  const { PriceStore } = await load<typeof import('../../src/store/prices.js')>('src/store/prices.ts');
  const { TokenStore } = await load<typeof import('../../src/store/tokens.js')>('src/store/tokens.ts');
  const followerFile = existsSync(join(root, 'src/ocpp/fuse-controller.ts')) ? 'src/ocpp/fuse-controller.ts' : 'src/ocpp/site-follower.ts';

  const dir = mkdtempSync(join(tmpdir(), 'mg-bench-fuse-'));
  mkdirSync(join(dir, 'data'));
  // Three days of real prices around the run (the file is large: only these lines are imported).
  const csvLines = readFileSync(PRICES_CSV, 'utf8').split('\n');
  const csv = join(dir, 'prices.csv');
  writeFileSync(csv, [csvLines[0], ...csvLines.filter((l) => /^"2025-05-1[0-3] /.test(l))].join('\n') + '\n');
  let nowMs = START_MS;
  const clock = { now: () => nowMs };
  const httpPort = await freePort();
  const ocppPort = await freePort();
  const closedPort = await freePort();
  const config = validateConfig(
    {
      organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      data_dir: join(dir, 'data'),
      log_level: 'fatal',
      // The site meter's bus answers nothing; its readings are injected. Polled once an hour.
      poll: { interval_ms: 3_600_000, offline_after_misses: 100 },
      buses: [{ name: 'site', type: 'tcp', host: '127.0.0.1', tcp_port: closedPort, timeout_ms: 500, retries: 0 }],
      meters: [{ resource_id: SITE_METER, bus: 'site', unit_id: 1, profile: 'sdm630', extra_metrics: ['current_l1', 'current_l2', 'current_l3'] }],
      site: { meter: SITE_METER, limit_a: LIMIT_A, meter_includes_chargers: false, max_reading_age_s: 60, raise_interval_s: 5, raise_hysteresis_a: 2 },
      clock: { trust: 'system' },
      http: { host: '127.0.0.1', port: httpPort },
      prices: { regions: ['NL'], source: 'none' },
      forecast: { enabled: false },
      ocpp: { host: '127.0.0.1', port: ocppPort },
      chargers: Array.from({ length: CHARGERS }, (_, i) => ({ id: `CP-${i}`, password: PASSWORD, auth: 'accept_all', connectors: [{ connector_id: 1, max_current_a: 16, min_current_a: 6, phases: 3, voltage_v: 230 }] })),
    },
    'bench',
    {},
  );
  // MG_BENCH_LOG=<file>: the daemon's log at info level there (to see why a step missed), else silent.
  const logFile = process.env.MG_BENCH_LOG;
  const ctx = createContext(config, { logger: logFile ? createLogger('info', pino.destination({ dest: logFile, sync: true })) : createLogger('fatal'), clock });
  importPriceFile(new PriceStore(ctx.db), csv, 'NL', 0);
  const token = new TokenStore(ctx.db).create({ name: 'bench', type: 'cpo', nowMs }).token;
  const daemon = new Daemon(ctx);
  await daemon.start();

  // The site meter's reading, as its source would emit it.
  const emitReading = (otherA: number) =>
    ctx.events.emit('sample.taken', {
      resourceId: SITE_METER,
      sampledAtMs: nowMs,
      metrics: [1, 2, 3].map((l) => ({ name: `current_l${l}`, value: otherA, unit: 'A' })),
    } satisfies MeterSample);

  // Every SetChargingProfile as it arrives at a client (performance.now()).
  let arrivals: number[] = [];
  let lastArrival = performance.now();
  /** What arrived() waits for: woken by the client's handler, no polling (it would count as CPU). */
  let awaited = { n: Infinity, done: () => {} };
  const clients: RPCClient[] = [];
  for (let i = 0; i < CHARGERS; i++) {
    const client = new RPCClient({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity: `CP-${i}`, password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    client.handle('SetChargingProfile', async () => {
      lastArrival = performance.now();
      arrivals.push(lastArrival);
      if (arrivals.length >= awaited.n) awaited.done();
      return { status: 'Accepted' };
    });
    client.handle('ClearChargingProfile', async () => ({ status: 'Accepted' }));
    client.handle('GetConfiguration', async ({ params }: { params?: unknown }) => ({ unknownKey: (params as { key?: string[] }).key ?? [] }));
    await client.connect();
    await client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
    clients.push(client);
  }
  const sleep = (waitMs: number) => new Promise((r) => setTimeout(r, waitMs));
  /** Until n calls arrived since `arrivals` was emptied (or timeoutMs), then QUIET_MS with none: true if all came. */
  const arrived = async (n: number, timeoutMs: number): Promise<boolean> => {
    if (arrivals.length < n) {
      await new Promise<void>((done) => {
        const timer = setTimeout(done, timeoutMs);
        awaited = { n, done: () => (clearTimeout(timer), done()) };
      });
      awaited = { n: Infinity, done: () => {} };
    }
    do await sleep(QUIET_MS);
    while (performance.now() - lastArrival < QUIET_MS);
    return arrivals.length >= n;
  };

  emitReading(LOW_A);
  for (let i = 0; i < CHARGERS; i++) {
    const res = await fetch(`http://127.0.0.1:${httpPort}/api/v1/chargers/CP-${i}/connectors/1/plan`, {
      method: 'PUT',
      headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ departure_time: new Date(Date.parse('2025-05-11T20:00:00Z') + i * 600_000).toISOString(), energy_wh: 40_000 }),
    });
    if (res.status !== 201) throw new Error(`PUT plan CP-${i}: ${res.status} ${await res.text()}`);
  }
  for (const [i, client] of clients.entries()) {
    await client.call('StartTransaction', { connectorId: 1, idTag: `TAG-${i}`, meterStart: 0, timestamp: new Date(nowMs).toISOString() });
  }
  // Every connector holds its TxProfile under the low load: then the steady readings.
  arrivals = [];
  await sleep(1000);
  await arrived(0, 0);

  arrivals = [];
  let cpu = process.cpuUsage();
  for (let r = 0; r < readings; r++) {
    nowMs += 1000;
    emitReading(LOW_A);
    await sleep(1);
  }
  await arrived(0, 0);
  const steadyCpu = process.cpuUsage(cpu);
  const steadySent = arrivals.length;

  const firstMs: number[] = [];
  const lastMs: number[] = [];
  const callMs: number[] = [];
  let loweringCpuUs = 0;
  let missedSteps = 0;
  let missedRaises = 0;
  for (let s = 0; s < steps; s++) {
    // Down: the load falls, every connector may be raised (after the raise interval).
    nowMs += STEP_MS;
    arrivals = [];
    emitReading(LOW_A);
    // (The first has nothing to raise: the steady readings ran at this load.)
    if (!(await arrived(CHARGERS, 10_000)) && s > 0) {
      missedRaises++;
      if (logFile) ctx.logger.warn({ step: s, arrived: arrivals.length }, 'bench: down-step not raised in full within 10 s');
    }
    // Up: every connector above its new share, lowered at once.
    nowMs += STEP_MS;
    arrivals = [];
    cpu = process.cpuUsage();
    const t0 = performance.now();
    emitReading(HIGH_A);
    const all = await arrived(CHARGERS, 10_000);
    const used = process.cpuUsage(cpu);
    loweringCpuUs += used.user + used.system;
    if (!all) {
      missedSteps++;
      if (logFile) ctx.logger.warn({ step: s, arrived: arrivals.length }, 'bench: up-step not lowered in full within 10 s');
    }
    // A call that did not come within 10 s counts as never (Infinity), not left out.
    const calls = Array.from({ length: CHARGERS }, (_, i) => (arrivals[i] === undefined ? Infinity : arrivals[i]! - t0));
    firstMs.push(calls[0]!);
    lastMs.push(calls[CHARGERS - 1]!);
    callMs.push(...calls);
  }

  for (const client of clients) await client.close({ force: true }).catch(() => undefined);
  await daemon.stop();
  rmSync(dir, { recursive: true, force: true });
  return {
    root,
    followerFile,
    steps,
    firstMs,
    lastMs,
    callMs,
    missedSteps,
    missedRaises,
    readings,
    steadyCpuMs: (steadyCpu.user + steadyCpu.system) / 1000,
    steadySent,
    loweringCpuMs: loweringCpuUs / 1000,
  };
}
