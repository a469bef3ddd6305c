// Benchmark: a mixed fleet on the compiled gateway (`node dist/cli.js run`, its own process,
// built first): N chargers speaking OCPP 1.6 (strict ocpp-rpc clients) and N stations
// speaking OCPP 2.0.1 (ocpp-ws-io, every frame the gateway sends checked against the
// official 2.0.1 schemas), all at once on the same port (test/helpers/mixed-fleet.ts).
// Each boots, reports its status, then charges `transactions` sessions of `meterValues`
// register readings (energy register and power per phase), one message every `stepMs`
// with a Heartbeat after each, so heartbeats and transaction messages are answered under
// the same load in the same run. Charger i of each version sends the same readings at the
// same instants as the other's charger i.
//
// Printed per version: p50/p95/max answer latency of Heartbeats, StatusNotifications and the
// transaction messages (start, meter values, stop; 1.6 StartTransaction/MeterValues/
// StopTransaction, 2.0.1 TransactionEvent Started/Updated/Ended), and the ratio of the
// transaction messages' p95 to the Heartbeats' p95 in the same run (the figure: the machine
// is shared, absolute times carry the others' load); the gateway's CPU per message. Then
// whether every session was stored and priced, and the twins priced identically.
//   npx tsx scripts/bench/ocpp-mixed-fleet.ts [perVersion=25] [transactions=3] [meterValues=10] [stepMs=1000]   (needs ../shared/data)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/free-port.js';
import { fleetCdr, percentile, prepareFleetGateway, runFleet, TRANSACTION_KINDS, type FleetKind, type FleetVersion } from '../../test/helpers/mixed-fleet.js';
import { buildDist, repoRoot } from './dist.js';

const perVersion = Number(process.argv[2] ?? 25);
const transactions = Number(process.argv[3] ?? 3);
const meterValues = Number(process.argv[4] ?? 10);
const stepMs = Number(process.argv[5] ?? 1000);

buildDist();
const dir = mkdtempSync(join(tmpdir(), 'metergate-bench-mixed-fleet-'));
const gw = prepareFleetGateway(dir, { perVersion, ocppPort: await freePort(), httpPort: await freePort(), logLevel: 'warn' });
const gateway = spawn(process.execPath, ['dist/cli.js', 'run', '--config', gw.configPath], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
gateway.stdout.on('data', (d: Buffer) => (output += d));
gateway.stderr.on('data', (d: Buffer) => (output += d));

/** The gateway's CPU time so far (utime + stime from /proc, in ms). */
function gatewayCpuMs(): number {
  const fields = readFileSync(`/proc/${gateway.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks at USER_HZ 100
}

try {
  for (let attempt = 0; ; attempt++) {
    if ((await fetch(`http://127.0.0.1:${gw.httpPort}/healthz/live`).catch(() => null))?.status === 200) break;
    if (attempt > 600 || gateway.exitCode !== null) throw new Error(`gateway did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const load0 = loadavg()[0]!;
  console.log(`mixed fleet: ${perVersion} OCPP 1.6 chargers (ocpp-rpc) + ${perVersion} OCPP 2.0.1 stations (ocpp-ws-io) at once on the compiled gateway; each boot, status, then ${transactions} session(s) of ${meterValues} meter values, a message every ${stepMs} ms with a Heartbeat after each; load average ${load0.toFixed(1)} on a shared machine`);
  const cpu0 = gatewayCpuMs();
  const r = await runFleet(gw, { transactions, meterValues, stepMs });
  const cpuMs = gatewayCpuMs() - cpu0;

  const ms = (v: number) => (Number.isNaN(v) ? '-' : `${v.toFixed(1)} ms`);
  const line = (name: string, xs: readonly number[]) => `${name.padEnd(48)} ${String(xs.length).padStart(6)} ${ms(percentile(xs, 50)).padStart(10)} ${ms(percentile(xs, 95)).padStart(10)} ${ms(Math.max(...xs)).padStart(10)}`;
  const names: Record<FleetVersion, Record<FleetKind, string>> = {
    '1.6': { boot: 'BootNotification', status: 'StatusNotification', heartbeat: 'Heartbeat', start: 'StartTransaction', meter: 'MeterValues (register + 3 powers)', stop: 'StopTransaction' },
    '2.0.1': { boot: 'BootNotification', status: 'StatusNotification', heartbeat: 'Heartbeat', start: 'TransactionEvent Started', meter: 'TransactionEvent Updated (register + 3 powers)', stop: 'TransactionEvent Ended' },
  };
  console.log('');
  console.log(`${'message'.padEnd(48)} ${'calls'.padStart(6)} ${'p50'.padStart(10)} ${'p95'.padStart(10)} ${'max'.padStart(10)}`);
  const ratios: string[] = [];
  for (const v of ['1.6', '2.0.1'] as const) {
    console.log(`-- OCPP ${v}`);
    for (const k of ['heartbeat', 'status', 'start', 'meter', 'stop'] as const) console.log(line(names[v][k], r.latencyMs[v][k]));
    const tx = TRANSACTION_KINDS.flatMap((k) => r.latencyMs[v][k]);
    console.log(line('transaction messages, all', tx));
    const hb = percentile(r.latencyMs[v].heartbeat, 95);
    ratios.push(`${v}: transaction p95 / Heartbeat p95 = ${(percentile(tx, 95) / hb).toFixed(2)} (p50 ${(percentile(tx, 50) / percentile(r.latencyMs[v].heartbeat, 50)).toFixed(2)})`);
  }
  const tx16 = TRANSACTION_KINDS.flatMap((k) => r.latencyMs['1.6'][k]);
  const tx201 = TRANSACTION_KINDS.flatMap((k) => r.latencyMs['2.0.1'][k]);
  console.log('');
  for (const line of ratios) console.log(line);
  console.log(`2.0.1 against 1.6 in the same run: transaction p95 ${(percentile(tx201, 95) / percentile(tx16, 95)).toFixed(2)}x, Heartbeat p95 ${(percentile(r.latencyMs['2.0.1'].heartbeat, 95) / percentile(r.latencyMs['1.6'].heartbeat, 95)).toFixed(2)}x`);
  const messages = (['1.6', '2.0.1'] as const).reduce((n, v) => n + Object.values(r.latencyMs[v]).reduce((m, xs) => m + xs.length, 0), 0);
  console.log(`gateway CPU ${(cpuMs / 1000).toFixed(1)} s over ${(r.wallMs / 1000).toFixed(1)} s (${((100 * cpuMs) / r.wallMs).toFixed(1)} % of one core), ${(cpuMs / messages).toFixed(2)} ms per message (${messages} answered)`);

  // What the fleet left: every session stored and priced, the twins alike.
  const cdrs = await Promise.all(r.sessions.map(async (s) => ({ s, cdr: s.transactionId === null ? null : await fleetCdr(gw, s) })));
  const priced = cdrs.filter(({ s, cdr }) => cdr?.status === 200 && Math.abs((cdr.body.total_energy ?? NaN) - (s.readings.at(-1)![1] - s.readings[0]![1]) / 1000) < 1e-6 && Number.isFinite(cdr.body.total_cost?.excl_vat)).length;
  const twinsAlike = cdrs.filter(({ s, cdr }) => {
    if (s.version !== '1.6') return false;
    const twin = cdrs.find((c) => c.s.version === '2.0.1' && c.s.pair === s.pair && c.s.index === s.index);
    return JSON.stringify(twin?.cdr?.body.total_cost) === JSON.stringify(cdr?.body.total_cost) && cdr !== null;
  }).length;
  console.log(`sessions: ${r.sessions.length} sent, ${priced} stored and priced with their energy; ${twinsAlike} of ${r.sessions.length / 2} 1.6/2.0.1 twins priced identically; ${r.errors.length} calls failed${r.errors.length ? ` (first: ${r.errors[0]})` : ''}; ${r.violations.length} frames to the 2.0.1 stations broke the official schemas`);
  console.log(`load average at the end ${loadavg()[0]!.toFixed(1)}`);
} finally {
  gateway.kill('SIGTERM');
  await new Promise((r) => gateway.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
