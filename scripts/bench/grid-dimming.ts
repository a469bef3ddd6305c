// Benchmark: the gateway's part of the §14a reaction (docs/grid-limits.md "Reaction time"):
// from the control box's contact changing to the lowering on the wire, for 10 chargers.
//
// A real Daemon (buildModules: site meter, central system, plan follower, fuse controller,
// grid control...) on a temporary SQLite file with real NL prices of 2025-05-10..13
// (../shared/data), 10 chargers as strict ocpp-rpc clients in the same process over
// websockets on loopback, each with a target and an open transaction; the control box is the
// simulated Modbus TCP I/O module of the tests (test/helpers/control-box.py, Debian's
// python3-pymodbus), read every POLL_MS with DEBOUNCE_MS debounce. The gateway's clock is a
// fake one the bench advances (6 s per step, past site.raise_interval_s 5 s, so every
// release raises again); the I/O and the input's timers are real. Per cycle: the contact
// opens (all 10 raised), then closes: dimmed to P_min,14a of 10 devices (4.2 kW + 9 x 0.45 x
// 4.2 kW = 21.21 kW = 30.74 A per phase): all 10 lowered (5 to 6.14 A, 5 to 0 A).
//
//   contact -> wire     from the box's register changing (its "set" line) to each
//                       SetChargingProfile at its client: includes the poll interval (0 to
//                       POLL_MS) and the debounce, i.e. what the input adds
//   accepted -> wire    from the debounced change ('grid.limit-changed') to each call: the
//                       planner, the shares and the fuse controller's sending
// first and last of the 10 per cycle, p50/p99. The machine is shared: wall figures carry the
// others' load (the load average is printed).
//   npx tsx scripts/bench/grid-dimming.ts [cycles=100]   (needs ../shared/data and python3-pymodbus)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { RPCClient } from 'ocpp-rpc';
import { validateConfig } from '../../src/config/load.js';
import { createContext, Daemon } from '../../src/daemon.js';
import type { MeterSample } from '../../src/domain.js';
import { freePort } from '../../src/free-port.js';
import { createLogger } from '../../src/log.js';
import { importPriceFile } from '../../src/prices/import.js';
import { PriceStore } from '../../src/store/prices.js';
import { TokenStore } from '../../src/store/tokens.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PRICES_CSV = resolve(REPO, '../shared/data/prices/nl-2025-quarterhour-local-utc.csv');
const SITE_METER = '6f1c2a9e-3b7d-4e58-a1c4-9d2e7b5f0c31';
const PASSWORD = 'charger-secret-0123456789';
const CHARGERS = 10;
const POLL_MS = 100;
const DEBOUNCE_MS = 50;
const STEP_MS = 6000;

const cycles = Number(process.argv[2] ?? 100);
if (!existsSync(PRICES_CSV)) throw new Error(`${PRICES_CSV} not found: the bench needs ../shared/data`);
const load0 = loadavg()[0]!;
const dir = mkdtempSync(join(tmpdir(), 'mg-bench-dimming-'));
mkdirSync(join(dir, 'data'));
const csvLines = readFileSync(PRICES_CSV, 'utf8').split('\n');
const csv = join(dir, 'prices.csv');
writeFileSync(csv, [csvLines[0], ...csvLines.filter((l) => /^"2025-05-1[0-3] /.test(l))].join('\n') + '\n');

// The control box.
const boxPort = await freePort();
const box = spawn('/usr/bin/python3', [join(REPO, 'test/helpers/control-box.py'), String(boxPort)]);
let boxSet: (() => void) | null = null;
let boxSetAt = 0;
let ready = false;
createInterface({ input: box.stdout }).on('line', (l) => {
  if (l.startsWith('ready')) ready = true;
  if (l.startsWith('set ')) {
    boxSetAt = performance.now();
    boxSet?.();
  }
});
const sleep = (waitMs: number) => new Promise((r) => setTimeout(r, waitMs));
while (!ready) await sleep(50);

let nowMs = Date.parse('2025-05-11T06:20:00Z');
const clock = { now: () => nowMs };
const httpPort = await freePort();
const ocppPort = await freePort();
const closedPort = await freePort();
const config = validateConfig(
  {
    organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    data_dir: join(dir, 'data'),
    log_level: 'fatal',
    poll: { interval_ms: 3_600_000, offline_after_misses: 100 },
    buses: [
      { name: 'site', type: 'tcp', host: '127.0.0.1', tcp_port: closedPort, timeout_ms: 500, retries: 0 },
      { name: 'io', type: 'tcp', host: '127.0.0.1', tcp_port: boxPort, timeout_ms: 500, retries: 0 },
    ],
    meters: [{ resource_id: SITE_METER, bus: 'site', unit_id: 1, profile: 'sdm630', extra_metrics: ['current_l1', 'current_l2', 'current_l3'] }],
    site: { meter: SITE_METER, limit_a: 250, meter_includes_chargers: false, max_reading_age_s: 3600, raise_interval_s: 5, raise_hysteresis_a: 2 },
    clock: { trust: 'system' },
    http: { host: '127.0.0.1', port: httpPort },
    prices: { regions: ['NL'], source: 'none' },
    forecast: { enabled: false },
    ocpp: { host: '127.0.0.1', port: ocppPort },
    chargers: Array.from({ length: CHARGERS }, (_, i) => ({ id: `CP-${i}`, password: PASSWORD, auth: 'accept_all', connectors: [{ connector_id: 1, max_current_a: 16, min_current_a: 6, phases: 3, voltage_v: 230, default_target: { departure_local_time: '18:00', energy_wh: 30000 } }] })),
    grid_control: { input: { type: 'modbus', bus: 'io', unit_id: 1, addresses: [0], poll_ms: POLL_MS, debounce_ms: DEBOUNCE_MS }, reaction_deadline_s: 60 },
  },
  'bench',
  {},
);
const ctx = createContext(config, { logger: createLogger('fatal'), clock });
importPriceFile(new PriceStore(ctx.db), csv, 'NL', 0);
const token = new TokenStore(ctx.db).create({ name: 'bench', type: 'cpo', nowMs }).token;
let acceptedAt = 0;
ctx.events.on('grid.limit-changed', () => void (acceptedAt = performance.now()));
const daemon = new Daemon(ctx);
await daemon.start();
ctx.events.emit('sample.taken', { resourceId: SITE_METER, sampledAtMs: nowMs, metrics: [1, 2, 3].map((l) => ({ name: `current_l${l}`, value: 5, unit: 'A' })) } satisfies MeterSample);

let arrivals: Array<{ at: number; limit: number }> = [];
let awaited = { n: Infinity, done: () => {} };
const clients: RPCClient[] = [];
for (let i = 0; i < CHARGERS; i++) {
  const client = new RPCClient({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity: `CP-${i}`, password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
  client.handle('SetChargingProfile', async ({ params }: { params?: unknown }) => {
    const p = params as { csChargingProfiles: { chargingSchedule: { chargingSchedulePeriod: Array<{ limit: number }> } } };
    arrivals.push({ at: performance.now(), limit: Math.max(...p.csChargingProfiles.chargingSchedule.chargingSchedulePeriod.map((x) => x.limit)) });
    if (arrivals.length >= awaited.n) awaited.done();
    return { status: 'Accepted' };
  });
  client.handle('ClearChargingProfile', async () => ({ status: 'Accepted' }));
  client.handle('GetConfiguration', async ({ params }: { params?: unknown }) => ({ unknownKey: (params as { key?: string[] }).key ?? [] }));
  await client.connect();
  await client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  clients.push(client);
}
for (let i = 0; i < CHARGERS; i++) {
  const res = await fetch(`http://127.0.0.1:${httpPort}/api/v1/chargers/CP-${i}/connectors/1/plan`, {
    method: 'PUT',
    headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ departure_time: new Date(Date.parse('2025-05-11T20:00:00Z') + i * 600_000).toISOString(), energy_wh: 40_000 }),
  });
  if (res.status !== 201) throw new Error(`PUT plan CP-${i}: ${res.status}`);
}
for (const [i, client] of clients.entries()) await client.call('StartTransaction', { connectorId: 1, idTag: `TAG-${i}`, meterStart: 0, timestamp: new Date(nowMs).toISOString() });
await sleep(1500);

const arrived = async (n: number, timeoutMs: number): Promise<boolean> => {
  if (arrivals.length < n) {
    await new Promise<void>((done) => {
      const timer = setTimeout(done, timeoutMs);
      awaited = { n, done: () => (clearTimeout(timer), done()) };
    });
    awaited = { n: Infinity, done: () => {} };
  }
  await sleep(30);
  return arrivals.length >= n;
};
const setContact = async (bits: string) => {
  const set = new Promise<void>((r) => (boxSet = r));
  box.stdin.write(`${bits}\n`);
  await set;
  boxSet = null;
  return boxSetAt;
};

const contactFirst: number[] = [];
const contactLast: number[] = [];
const acceptedFirst: number[] = [];
const acceptedLast: number[] = [];
let missed = 0;
let sumA = 0;
for (let c = 0; c < cycles; c++) {
  nowMs += STEP_MS;
  arrivals = [];
  await setContact('0');
  await arrived(CHARGERS, 10_000);
  nowMs += STEP_MS;
  arrivals = [];
  acceptedAt = 0;
  const t0 = await setContact('1');
  if (!(await arrived(CHARGERS, 10_000)) || acceptedAt === 0) {
    missed++;
    continue;
  }
  const at = arrivals.slice(0, CHARGERS).map((a) => a.at);
  contactFirst.push(at[0]! - t0);
  contactLast.push(at[CHARGERS - 1]! - t0);
  acceptedFirst.push(at[0]! - acceptedAt);
  acceptedLast.push(at[CHARGERS - 1]! - acceptedAt);
  sumA = Math.max(sumA, arrivals.slice(0, CHARGERS).reduce((s, a) => s + a.limit, 0));
}

const pct = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const f = (v: number) => (Number.isNaN(v) ? '-' : `${v.toFixed(1)} ms`);
console.log(`grid dimming: ${CHARGERS} chargers, Modbus control box polled every ${POLL_MS} ms, debounce ${DEBOUNCE_MS} ms, ${cycles} cycles (${missed} not lowered in full within 10 s); load average ${load0.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)} on a shared machine`);
console.log(`highest sum of the 10 lowered limits: ${sumA.toFixed(2)} A (dimmed total 30.74 A per phase)`);
for (const [name, xs] of [
  ['contact -> first lowering on the wire', contactFirst],
  [`contact -> all ${CHARGERS} lowerings on the wire`, contactLast],
  ['accepted -> first lowering on the wire', acceptedFirst],
  [`accepted -> all ${CHARGERS} lowerings on the wire`, acceptedLast],
] as const) console.log(`${name.padEnd(40)} p50 ${f(pct(xs, 50)).padStart(9)}  p99 ${f(pct(xs, 99)).padStart(9)}  max ${f(Math.max(...xs)).padStart(9)}`);

for (const client of clients) await client.close({ force: true }).catch(() => undefined);
await daemon.stop();
box.kill('SIGKILL');
rmSync(dir, { recursive: true, force: true });
process.exit(0);
