// Benchmark: the gateway's memory under the network attacks of the fuzz campaign
// (test/helpers/ocpp-attacks.ts). The compiled daemon (`node dist/cli.js run`, with the V8
// flags of systemd/metergate.service) runs with two chargers configured and a healthy
// charger connected; its idle RSS is measured first, then each attack runs on its own and
// the daemon's peak RSS during it is read from the kernel (VmHWM, reset before each attack
// through /proc/<pid>/clear_refs), so a peak between two samples is not missed. Prints each
// attack's peak against the idle RSS of the same run, and the worst, as ratios. The OCPP 2.0.1
// twins of the attacks after the handshake (OCPP201_ATTACKS, on a connection speaking
// ocpp2.0.1) run on their own too, after the 1.6 ones, so each peak is one attack's.
// Run: npx tsx scripts/bench/ocpp-attack-rss.ts [repeatS=10]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import { freePort } from '../../src/free-port.js';
import { HTTP_ATTACKS, lanAddress, OCPP201_ATTACKS, OCPP_ATTACKS, type AttackTarget } from '../../test/helpers/ocpp-attacks.js';
import { buildDist, repoRoot } from './dist.js';

const repeatS = Number(process.argv[2] ?? 10);
const PASSWORD = 'bench-password-0123456789';
type ClientOptions = ConstructorParameters<typeof RPCClient>[0];

buildDist();
const dir = mkdtempSync(join(tmpdir(), 'metergate-bench-attack-'));
const [ocppPort, httpPort] = [await freePort(), await freePort()];
writeFileSync(
  join(dir, 'config.yaml'),
  [
    'organization_id: 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    `data_dir: ${dir}`,
    'log_level: error',
    `http: { host: 127.0.0.1, port: ${httpPort} }`,
    'prices: { regions: [NL], source: none }',
    'forecast: { enabled: false }',
    `ocpp: { host: 0.0.0.0, port: ${ocppPort} }`,
    'chargers:',
    `  - { id: CP-HEALTHY, password: ${PASSWORD}, auth: accept_all }`,
    `  - { id: CP-FUZZ, password: ${PASSWORD}, auth: accept_all }`,
    `  - { id: CS-FUZZ-201, password: ${PASSWORD}, auth: accept_all, ocpp_version: '2.0.1' }`,
    '',
  ].join('\n'),
);
// The V8 flags the systemd unit runs the daemon with (systemd/metergate.service ExecStart).
const unit = readFileSync(join(repoRoot, 'systemd/metergate.service'), 'utf8');
const v8Flags = (/^ExecStart=\S+ (.*?) \/opt\/metergate/m.exec(unit)?.[1] ?? '').split(' ').filter((f) => f.startsWith('--'));
const gateway = spawn(process.execPath, [...v8Flags, 'dist/cli.js', 'run', '--config', join(dir, 'config.yaml')], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
gateway.stdout.on('data', (d: Buffer) => (output += d));
gateway.stderr.on('data', (d: Buffer) => (output += d));

const status = (field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${gateway.pid}/status`, 'utf8'))?.[1]) / 1024;
const resetPeak = () => writeFileSync(`/proc/${gateway.pid}/clear_refs`, '5');
const alive = () => gateway.exitCode === null && gateway.signalCode === null;

try {
  let healthy: RPCClient | null = null;
  for (let attempt = 0; healthy === null; attempt++) {
    try {
      const c = new RPCClient({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity: 'CP-HEALTHY', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
      await c.connect();
      healthy = c;
    } catch (err) {
      if (!alive() || attempt > 300) throw new Error(`gateway did not start: ${output || String(err)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await healthy.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  // Idle: the healthy charger's Heartbeats only, 10 s.
  resetPeak();
  for (const end = Date.now() + 10_000; Date.now() < end; ) {
    await healthy.call('Heartbeat', {});
    await new Promise((r) => setTimeout(r, 100));
  }
  const idle = { rss: status('VmRSS'), peak: status('VmHWM') };
  console.log(`idle: RSS ${idle.rss.toFixed(1)} MB (peak ${idle.peak.toFixed(1)} MB over 10 s)`);
  const target: AttackTarget = { host: '127.0.0.1', ocppPort, httpPort, chargerId: 'CP-FUZZ', password: PASSWORD, lanAddress: lanAddress() };
  const rows: Array<{ name: string; peak: number; after: number; up: boolean }> = [];
  const target201: AttackTarget = { ...target, chargerId: 'CS-FUZZ-201', subprotocol: 'ocpp2.0.1' };
  for (const attack of [...OCPP_ATTACKS, ...OCPP201_ATTACKS, ...HTTP_ATTACKS]) {
    resetPeak();
    const from = Date.now();
    do await attack.run(attack.beside ? target201 : target);
    while (Date.now() - from < repeatS * 1000 && alive());
    const up = alive() && (await healthy.call('Heartbeat', {}).then(() => true, () => false));
    rows.push({ name: attack.name, peak: up ? status('VmHWM') : NaN, after: up ? status('VmRSS') : NaN, up });
    console.log(`${attack.name}: peak ${rows.at(-1)!.peak.toFixed(1)} MB (${(rows.at(-1)!.peak / idle.peak).toFixed(2)}x idle)${up ? '' : ' — GATEWAY DOWN'}`);
    if (!up) break;
  }
  console.log('');
  console.log('| attack | peak RSS (MB) | ratio to idle peak | RSS after (MB) |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.name} | ${r.peak.toFixed(1)} | ${(r.peak / idle.peak).toFixed(2)} | ${r.after.toFixed(1)} |`);
  const worst = rows.reduce((a, b) => (b.peak > a.peak ? b : a));
  console.log(`\nidle peak ${idle.peak.toFixed(1)} MB; worst: ${worst.name}, peak ${worst.peak.toFixed(1)} MB = ${(worst.peak / idle.peak).toFixed(2)}x idle (node ${process.version}, ${v8Flags.join(' ')})`);
  await healthy.close({ force: true });
} finally {
  gateway.kill('SIGTERM');
  await new Promise((r) => gateway.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
