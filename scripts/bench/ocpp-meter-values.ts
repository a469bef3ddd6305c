// Benchmark: N chargers (ocpp-rpc clients, strict) connected over ws to the compiled gateway
// (`node dist/cli.js run`, its own process), each with an open transaction, sending a call
// every interval (staggered). Three phases of the same length and rate, measured in the
// same run: Heartbeat (the baseline: a round trip and a one-row upsert), MeterValues
// (energy register + power and current per phase, committed durably, the session's reading
// at that instant appended), and MeterValues on transactions that already hold 8 hours of
// 10 s values. Prints answer latency (p50/p95/max) and the gateway's CPU share per phase,
// the ratios against the Heartbeat baseline, and 8 h in against the session's start: the
// cost of a message must not grow with the session's length (about 1x).
// Run: npx tsx scripts/bench/ocpp-meter-values.ts [chargers=50] [phaseS=30] [intervalMs=10000]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import { freePort } from '../../src/free-port.js';
import { buildDist, repoRoot } from './dist.js';

const chargers = Number(process.argv[2] ?? 50);
const phaseS = Number(process.argv[3] ?? 30);
const intervalMs = Number(process.argv[4] ?? 10_000);
const PASSWORD = 'bench-password-0123456789';
type ClientOptions = ConstructorParameters<typeof RPCClient>[0];

buildDist();
const dir = mkdtempSync(join(tmpdir(), 'metergate-bench-ocpp-'));
const port = await freePort();
const ids = Array.from({ length: chargers }, (_, i) => `CP-${String(i + 1).padStart(3, '0')}`);
writeFileSync(
  join(dir, 'config.yaml'),
  [
    'organization_id: 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    `data_dir: ${dir}`,
    'log_level: warn',
    'http: { enabled: false }',
    'prices: { source: none }',
    'forecast: { enabled: false }',
    `ocpp: { host: 127.0.0.1, port: ${port} }`,
    'chargers:',
    ...ids.map((id) => `  - { id: ${id}, password: ${PASSWORD}, auth: accept_all }`),
    '',
  ].join('\n'),
);
const gateway = spawn(process.execPath, ['dist/cli.js', 'run', '--config', join(dir, 'config.yaml')], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
gateway.stdout.on('data', (d: Buffer) => (output += d));
gateway.stderr.on('data', (d: Buffer) => (output += d));

/** The gateway's CPU time so far (utime + stime from /proc, in ms). */
function gatewayCpuMs(): number {
  const fields = readFileSync(`/proc/${gateway.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks at USER_HZ 100
}

try {
  const clients: RPCClient[] = [];
  for (let attempt = 0; clients.length === 0; attempt++) {
    try {
      const probe = new RPCClient({ endpoint: `ws://127.0.0.1:${port}`, identity: ids[0], password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
      await probe.connect();
      clients.push(probe);
    } catch {
      if (attempt > 600 || gateway.exitCode !== null) throw new Error(`gateway did not accept chargers: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  for (const id of ids.slice(1)) {
    const c = new RPCClient({ endpoint: `ws://127.0.0.1:${port}`, identity: id, password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    await c.connect();
    clients.push(c);
  }
  const startMs = Date.parse('2025-10-01T00:00:00Z');
  const tx = await Promise.all(
    clients.map(async (c) => {
      await c.call('BootNotification', { chargePointVendor: 'Bench', chargePointModel: 'Sim' });
      return ((await c.call('StartTransaction', { connectorId: 1, idTag: 'BENCH', meterStart: 0, timestamp: new Date(startMs).toISOString() })) as { transactionId: number }).transactionId;
    }),
  );
  const tick = new Map<number, number>(); // per charger, the next sample index
  const meterValue = (i: number, k: number) => ({
    timestamp: new Date(startMs + k * 10_000).toISOString(),
    sampledValue: [
      { value: String(k * 30), measurand: 'Energy.Active.Import.Register', unit: 'Wh', context: 'Sample.Periodic' },
      ...['L1', 'L2', 'L3'].flatMap((phase) => [
        { value: '3680', measurand: 'Power.Active.Import', unit: 'W', phase },
        { value: '16.0', measurand: 'Current.Import', unit: 'A', phase },
      ]),
    ],
  });
  const send = (i: number, method: 'Heartbeat' | 'MeterValues') => {
    if (method === 'Heartbeat') return clients[i].call('Heartbeat', {});
    const k = (tick.get(i) ?? 0) + 1;
    tick.set(i, k);
    return clients[i].call('MeterValues', { connectorId: 1, transactionId: tx[i], meterValue: [meterValue(i, k)] });
  };

  async function phase(name: string, method: 'Heartbeat' | 'MeterValues') {
    const latencies: number[] = [];
    const cpu0 = gatewayCpuMs();
    const t0 = Date.now();
    const running: Promise<unknown>[] = [];
    await new Promise<void>((resolve) => {
      const timers = clients.map((_, i) =>
        setTimeout(
          () => {
            const fire = () => {
              const s = process.hrtime.bigint();
              running.push(send(i, method).then(() => latencies.push(Number(process.hrtime.bigint() - s) / 1e6)));
            };
            fire();
            timers.push(setInterval(fire, intervalMs) as unknown as NodeJS.Timeout);
          },
          (i * intervalMs) / clients.length,
        ),
      );
      setTimeout(() => {
        for (const t of timers) clearTimeout(t), clearInterval(t);
        resolve();
      }, phaseS * 1000);
    });
    await Promise.all(running);
    const wallMs = Date.now() - t0;
    const cpuShare = (gatewayCpuMs() - cpu0) / wallMs;
    latencies.sort((a, b) => a - b);
    const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
    const r = { name, calls: latencies.length, p50: q(0.5), p95: q(0.95), max: latencies[latencies.length - 1], cpuShare };
    console.log(`${name.padEnd(34)} ${String(r.calls).padStart(5)} calls  p50 ${r.p50.toFixed(2)} ms  p95 ${r.p95.toFixed(2)} ms  max ${r.max.toFixed(2)} ms  gateway CPU ${(100 * cpuShare).toFixed(2)} % of one core`);
    return r;
  }

  console.log(`${chargers} chargers, one call each every ${intervalMs / 1000} s, ${phaseS} s per phase`);
  const base = await phase('Heartbeat (baseline)', 'Heartbeat');
  const mv = await phase('MeterValues (7 values)', 'MeterValues');
  // 8 hours of 10 s values already in each transaction (one big MeterValues each).
  await Promise.all(
    clients.map(async (c, i) => {
      const k0 = (tick.get(i) ?? 0) + 1;
      const values = Array.from({ length: 2880 }, (_, j) => meterValue(i, k0 + j));
      tick.set(i, k0 + 2880);
      await c.call('MeterValues', { connectorId: 1, transactionId: tx[i], meterValue: values });
    }),
  );
  const long = await phase('MeterValues, 8 h into the session', 'MeterValues');
  const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : 'n/a');
  console.log(`ratios to the Heartbeat baseline: MeterValues p50 ${ratio(mv.p50, base.p50)}x, p95 ${ratio(mv.p95, base.p95)}x, CPU ${ratio(mv.cpuShare, base.cpuShare)}x; 8 h in: p50 ${ratio(long.p50, base.p50)}x, p95 ${ratio(long.p95, base.p95)}x, CPU ${ratio(long.cpuShare, base.cpuShare)}x`);
  console.log(`8 h into the session vs its start: p50 ${ratio(long.p50, mv.p50)}x, p95 ${ratio(long.p95, mv.p95)}x, CPU ${ratio(long.cpuShare, mv.cpuShare)}x`);
  for (const c of clients) await c.close({ force: true });
} finally {
  gateway.kill('SIGTERM');
  await new Promise((r) => gateway.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
