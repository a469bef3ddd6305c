// Benchmark: resident memory of the daemon with 1,000,000 queued messages, and while it
// drains them to a local mosquitto.
//   npx tsx scripts/bench/outbox-memory.ts [messages=1000000] [maxDrainSeconds=300]
// Builds (npm run build), writes the backlog into a fresh database in one transaction,
// then runs the compiled daemon as it ships (`node <flags of systemd/metergate.service
// ExecStart> dist/cli.js run`) against mosquitto (TLS, password file, ACL) with backlog
// pacing off, and samples every second: RSS (VmRSS), private memory (smaps_rollup:
// Private_Clean + Private_Dirty, i.e. without the node binary's and libraries' pages
// shared with other processes), PSS, and the V8 heap, external memory and outbox depth
// from its /metrics. Targets: RSS at most 80 MB, flat while it drains.
// NODE_FLAGS="..." replaces the shipped flags (e.g. NODE_FLAGS=" " for V8 defaults).
// METERS=N (default 2): N simulated SDM630 meters on a Modbus TCP bus (`metergate sim`, a
// separate process) polled every 10 s, as on a real gateway; METERS=0 for the uplink alone.
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/store/db.js';
import { buildMeasurement } from '../../src/uplink/messages.js';
import { freePort, startTlsBroker } from '../../test/helpers/mosquitto.js';
import { shippedNodeFlags } from './shipped-node.js';

const N = Number(process.argv[2] ?? 1_000_000);
const MAX_DRAIN_S = Number(process.argv[3] ?? 300);
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const RIDS = ['0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b', '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f'];
const root = fileURLToPath(new URL('../..', import.meta.url));

execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
const dir = mkdtempSync(join(tmpdir(), 'mg-bench-mem-'));
const broker = await startTlsBroker([{ username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] }]);

// 1. The backlog: N measurement rows of two meters, one transaction (1 s apart, so the
//    timestamps stay within days of now).
let t = performance.now();
const db = openDatabase(join(dir, 'data', 'metergate.db'));
const insert = db.prepare('INSERT INTO outbox (message_id, topic, payload, bytes, qos, retain, stamped_at_ms, created_at_ms) VALUES (?, ?, ?, ?, 1, 0, ?, ?)');
const t0 = Date.now() - N * 500 - 60_000;
db.transaction(() => {
  for (let i = 0; i < N; i++) {
    const rid = RIDS[i % 2];
    const at = t0 + Math.floor(i / 2) * 1_000;
    const payload = JSON.stringify(
      buildMeasurement(ORG, { resourceId: rid, sampledAtMs: at, metrics: [{ name: 'total_active_power', value: 1000 + (i % 977), unit: 'W' }, { name: 'active_energy_import', value: 5_000_000 + i, unit: 'Wh' }] }),
    );
    const topic = `svc/resources/${rid}/measurements`;
    insert.run(randomUUID(), topic, payload, Buffer.byteLength(payload) + Buffer.byteLength(topic), at, at);
  }
})();
db.close();
console.log(`wrote ${N} outbox rows in ${((performance.now() - t) / 1000).toFixed(1)} s`);

// 2. The meters (simulated, their own process) and the daemon, compiled, with its HTTP API for /metrics.
const METERS = Number(process.env.METERS ?? 2);
const sim = METERS > 0 ? spawn(process.execPath, ['dist/cli.js', 'sim', '--tcp', '0', '--unit', Array.from({ length: METERS }, (_, i) => i + 1).join(','), '--exit-with-parent'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] }) : null;
const simPort = sim
  ? await new Promise<number>((resolve, reject) => {
      let text = '';
      sim.stdout!.on('data', (d: Buffer) => {
        text += d.toString();
        const m = /"tcpPort":(\d+)/.exec(text);
        if (m) resolve(Number(m[1]));
      });
      sim.once('exit', (code) => reject(new Error(`simulator exited (${code})`)));
    })
  : 0;
const metersYaml =
  METERS > 0
    ? `buses: [{ name: sim, type: tcp, host: 127.0.0.1, tcp_port: ${simPort} }]\nmeters:\n${Array.from({ length: METERS }, (_, i) => `  - { resource_id: ${randomUUID()}, bus: sim, unit_id: ${i + 1}, profile: sdm630 }`).join('\n')}\n`
    : '';
console.log(METERS > 0 ? `${METERS} simulated SDM630 meter(s) on a Modbus TCP bus, polled every 10 s` : 'no meters (METERS=0)');
const httpPort = await freePort();
const config = join(dir, 'config.yaml');
writeFileSync(
  config,
  `${metersYaml}organization_id: ${ORG}
data_dir: ${dir}/data
log_level: info
mqtt: { url: '${broker.url}', username: gateway, password: gw-secret, ca_file: '${broker.caFile}', backlog_rate_per_s: 1000000000 }
store: { outbox_max_rows: ${Math.max(2 * N, 100)} }
clock: { trust: system }
http: { port: ${httpPort} }
prices: { source: none }
forecast: { enabled: false }
`,
);
const rss = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
/** Memory that is the daemon's own (not the node binary and libraries shared with other processes). */
const smaps = (pid: number) => {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { privMb: (kb('Private_Dirty') + kb('Private_Clean')) / 1024, pssMb: kb('Pss') / 1024, sharedMb: (kb('Shared_Clean') + kb('Shared_Dirty')) / 1024 };
};
interface Scrape {
  depth: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
}
const scrape = async (): Promise<Scrape> => {
  try {
    const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    const num = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
    return {
      depth: num('metergate_outbox_depth'),
      heapUsedMb: num('metergate_nodejs_heap_size_used_bytes') / 1048576,
      heapTotalMb: num('metergate_nodejs_heap_size_total_bytes') / 1048576,
      externalMb: num('metergate_nodejs_external_memory_bytes') / 1048576,
    };
  } catch (err) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`daemon exited (${child.exitCode ?? child.signalCode}):\n${out.slice(-3000)}`);
    throw err;
  }
};
t = performance.now();
const nodeFlags = process.env.NODE_FLAGS === undefined ? shippedNodeFlags() : process.env.NODE_FLAGS.split(' ').filter(Boolean);
console.log(`node ${process.version} ${nodeFlags.join(' ') || '(V8 defaults)'} dist/cli.js run${process.env.NODE_FLAGS === undefined ? '   (flags of systemd/metergate.service ExecStart)' : ''}`);
const child = spawn(process.execPath, [...nodeFlags, 'dist/cli.js', 'run', '--config', config], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
let out = '';
child.stdout.on('data', (d: Buffer) => (out += d.toString()));
child.stderr.on('data', (d: Buffer) => (out += d.toString()));
try {
  while (!out.includes('metergate started')) {
    if (child.exitCode !== null) throw new Error(out);
    await new Promise((r) => setTimeout(r, 20));
  }
  const samples: Array<{ s: number; rssMb: number; privMb: number; pssMb: number; depth: number } & Scrape> = [];
  const startedRss = rss(child.pid!);
  const atStart = { ...smaps(child.pid!), ...(await scrape()) };
  console.log(
    `daemon started in ${((performance.now() - t) / 1000).toFixed(1)} s: RSS ${startedRss.toFixed(1)} MB = private ${atStart.privMb.toFixed(1)} + shared ${atStart.sharedMb.toFixed(1)} MB (PSS ${atStart.pssMb.toFixed(1)}); V8 heap used ${atStart.heapUsedMb.toFixed(1)} of ${atStart.heapTotalMb.toFixed(1)} MB, external ${atStart.externalMb.toFixed(1)} MB; depth ${atStart.depth}`,
  );
  const drainStart = performance.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const scraped = await scrape();
    const d = scraped.depth;
    const s = (performance.now() - drainStart) / 1000;
    samples.push({ s, rssMb: rss(child.pid!), ...smaps(child.pid!), ...scraped });
    const x = samples[samples.length - 1];
    if (samples.length % 10 === 0) {
      console.log(`  t=${s.toFixed(0)} s  depth ${d}  RSS ${x.rssMb.toFixed(1)} MB  private ${x.privMb.toFixed(1)} MB  heap ${x.heapUsedMb.toFixed(1)}/${x.heapTotalMb.toFixed(1)} MB  external ${x.externalMb.toFixed(1)} MB`);
    }
    if (d === 0 || s > MAX_DRAIN_S) break;
  }
  const last = samples[samples.length - 1];
  const drained = N - last.depth;
  const during = samples.filter((x) => x.depth > 0);
  const rssValues = (during.length > 0 ? during : samples).map((x) => x.rssMb);
  const peak = Math.max(startedRss, ...samples.map((x) => x.rssMb));
  const privValues = (during.length > 0 ? during : samples).map((x) => x.privMb);
  const heapTotals = (during.length > 0 ? during : samples).map((x) => x.heapTotalMb);
  console.log(`daemon private memory (RSS minus pages shared with other processes) while draining: min ${Math.min(...privValues).toFixed(1)} / max ${Math.max(...privValues).toFixed(1)} MB; V8 heap total max ${Math.max(...heapTotals).toFixed(1)} MB`);
  console.log(`daemon RSS with ${N} queued messages: ${startedRss.toFixed(1)} MB at start; while draining min ${Math.min(...rssValues).toFixed(1)} / max ${Math.max(...rssValues).toFixed(1)} MB; peak ${peak.toFixed(1)} MB (target <= 80 MB)`);
  console.log(`drained ${drained} messages in ${last.s.toFixed(0)} s (${(drained / last.s).toFixed(0)} msg/s)${last.depth > 0 ? `; stopped with ${last.depth} left (maxDrainSeconds)` : ''}`);
  const quarter = Math.max(1, Math.floor(samples.length / 4));
  const firstQ = samples.slice(0, quarter).map((x) => x.rssMb);
  const lastQ = samples.slice(-quarter).map((x) => x.rssMb);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`flatness: mean RSS first quarter ${mean(firstQ).toFixed(1)} MB, last quarter ${mean(lastQ).toFixed(1)} MB (ratio ${(mean(lastQ) / mean(firstQ)).toFixed(2)})`);
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  sim?.kill('SIGTERM');
  await broker.stop();
  rmSync(dir, { recursive: true, force: true });
}
