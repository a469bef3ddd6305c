// Benchmark: outbox drain rate vs a bare mqtt.js QoS 1 publish loop, same local mosquitto.
//   npx tsx scripts/bench/outbox-drain.ts [messages=10000] [rounds=15]   (WINDOWS=50,200 to compare windows)
// Both sides publish the same measurement payloads over TLS with MQTT 5 to the same broker
// (mosquitto with TLS, password file and ACL, as in the tests). The baseline publishes all
// messages at once with mqtt.js and waits for every PUBACK; it keeps nothing on disk. The
// outbox side is the real publisher: rows paged from SQLite, a bounded in-flight window,
// a delete per PUBACK (batched), backlog pacing off (rate 1e9/s).
// The publisher is the compiled one (dist/, built first), and the benchmark runs in a node
// started with the daemon's shipped flags (systemd/metergate.service ExecStart), so the
// garbage collector works as in the field; BENCH_NODE_FLAGS adds flags (e.g. --cpu-prof),
// NODE_FLAGS="..." replaces the shipped ones (NODE_FLAGS=" " for V8 defaults).
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt from 'mqtt';
import { startTlsBroker } from '../../test/helpers/mosquitto.js';
import { buildDist, distGateway } from './dist.js';
import { shippedNodeFlags } from './shipped-node.js';

if (process.env.MG_BENCH_CHILD !== '1') {
  buildDist();
  const base = process.env.NODE_FLAGS === undefined ? shippedNodeFlags() : process.env.NODE_FLAGS.split(' ').filter(Boolean);
  const flags = [...base, ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)];
  const origin = process.env.NODE_FLAGS === undefined ? 'shipped flags of systemd/metergate.service ExecStart' : 'NODE_FLAGS';
  console.log(`node ${process.version} ${flags.join(' ') || '(V8 defaults)'} (${origin}${process.env.BENCH_NODE_FLAGS ? ' + BENCH_NODE_FLAGS' : ''}); publisher from dist/`);
  const child = spawnSync(process.execPath, [...flags, '--import', 'tsx', fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, MG_BENCH_CHILD: '1' },
  });
  process.exit(child.status ?? 1);
}

const { validateConfig, createContext, createLogger, openDatabase, buildUplink } = await distGateway();

const N = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.argv[3] ?? 15);
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const RID = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const WINDOWS = (process.env.WINDOWS ?? '50,200').split(',').map(Number);

const broker = await startTlsBroker([{ username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] }]);
const dir = mkdtempSync(join(tmpdir(), 'mg-bench-drain-'));
const t0 = Math.floor(Date.now() / 1000) * 1000 - N * 1000;
const sample = (i: number) => ({
  resourceId: RID,
  sampledAtMs: t0 + i * 1000,
  metrics: [
    { name: 'total_active_power', value: 1234.567 + i, unit: 'W' },
    { name: 'active_energy_import', value: 12_345_678 + i, unit: 'Wh' },
    { name: 'voltage_l1', value: 230.1, unit: 'V' },
  ],
});

const cpuUs: Record<string, number[]> = {};
/** CPU time of this process per message (both sides run here, one after the other): robust on a busy machine. */
function cpuPerMessage(side: string, since: NodeJS.CpuUsage): void {
  const d = process.cpuUsage(since);
  (cpuUs[side] ??= []).push((d.user + d.system) / N);
}

/** `withId`: the bare loop plus the MQTT 5 user property the gateway must attach (message_id). */
async function baseline(withId = false): Promise<number> {
  const client = await mqtt.connectAsync(broker.url, { ca: readFileSync(broker.caFile), username: 'gateway', password: 'gw-secret', protocolVersion: 5 });
  const topic = `svc/resources/${RID}/measurements`;
  const payloads = Array.from({ length: N }, (_, i) =>
    JSON.stringify({ message_type: 'measurement', resource_id: RID, organization_id: ORG, data: { sampled_at: new Date(sample(i).sampledAtMs).toISOString(), metrics: sample(i).metrics } }),
  );
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  await new Promise<void>((resolve, reject) => {
    let acked = 0;
    for (const p of payloads)
      client.publish(topic, p, withId ? { qos: 1, properties: { userProperties: { message_id: randomUUID() } } } : { qos: 1 }, (err) => {
        if (err) reject(err);
        else if (++acked === N) resolve();
      });
  });
  const rate = N / ((performance.now() - start) / 1000);
  cpuPerMessage(withId ? 'bareId' : 'bare', cpu0);
  await client.endAsync();
  return rate;
}

/** `v311`: MQTT 3.1.1, i.e. without the message_id user property (to show what it costs). */
async function outbox(window: number, round: number, v311 = false): Promise<number> {
  const name = `w${window}${v311 ? '-v311' : ''}-r${round}`;
  const config = validateConfig(
    {
      organization_id: ORG,
      data_dir: join(dir, name),
      mqtt: { url: broker.url, username: 'gateway', password: 'gw-secret', ca_file: broker.caFile, client_id: `bench-${name}`, inflight_window: window, backlog_rate_per_s: 1e9, protocol_version: v311 ? 4 : 5 },
      store: { outbox_max_rows: 10_000_000 },
    },
    'bench',
    {},
  );
  const ctx = createContext(config, { db: openDatabase(join(dir, `${name}.db`)), logger: createLogger(process.env.BENCH_LOG ?? 'error') });
  const uplink = buildUplink(ctx);
  ctx.db.transaction(() => {
    for (let i = 0; i < N; i++) uplink.recorder.record(sample(i));
  })();
  const publisher = uplink.publisher!;
  const connected = new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (publisher.view().state === 'connected') {
        clearInterval(check);
        resolve();
      }
    }, 1);
  });
  // Time from the connect (the moment a gateway starts draining) to an empty outbox.
  for (const m of uplink.modules) await m.start();
  await connected;
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (uplink.outbox.depth === 0) {
        clearInterval(check);
        resolve();
      }
    }, 2);
  });
  const rate = N / ((performance.now() - start) / 1000);
  cpuPerMessage(`w${window}${v311 ? '-v311' : ''}`, cpu0);
  for (const m of [...uplink.modules].reverse()) await m.stop();
  ctx.db.close();
  return rate;
}

try {
  // One warm-up round (JIT, TLS session) that does not count; then paired rounds, so a
  // busy machine slows both sides of a pair alike; the median of the pair ratios is the
  // figure, with its spread. CPU per message is the steadier figure on a shared machine.
  await baseline();
  await outbox(WINDOWS[0], -1);
  for (const k of Object.keys(cpuUs)) delete cpuUs[k];
  const base: number[] = [];
  const baseId: number[] = [];
  const ours = new Map<number, number[]>(WINDOWS.map((w) => [w, []]));
  const oursV311: number[] = [];
  // Within a round the order alternates (bare first, then outbox first), so a load that
  // rises or falls during a round does not favour one side.
  for (let r = 0; r < ROUNDS; r++) {
    const bare = async () => {
      base[r] = await baseline();
      baseId[r] = await baseline(true);
    };
    const mine = async () => {
      for (const w of WINDOWS) ours.get(w)![r] = await outbox(w, r);
      oursV311[r] = await outbox(WINDOWS[0], r, true);
    };
    if (r % 2 === 0) {
      await bare();
      await mine();
    } else {
      await mine();
      await bare();
    }
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
  /** Median, interquartile range and extremes: the spread says how much one run can be trusted. */
  const spread = (xs: number[], digits: number) => {
    const s = sorted(xs);
    const q = (f: number) => s[Math.min(s.length - 1, Math.max(0, Math.round(f * (s.length - 1))))].toFixed(digits);
    return `median ${q(0.5)} (IQR ${q(0.25)}-${q(0.75)}, min ${q(0)}, max ${q(1)})`;
  };
  console.log(`outbox drain, ${N} measurement messages, QoS 1, MQTT 5 over TLS to local mosquitto, ${ROUNDS} paired rounds`);
  console.log(`  bare mqtt.js publish loop (all at once, no disk):  ${spread(base, 0)} msg/s`);
  console.log(`  same loop + MQTT 5 user property message_id:       ${spread(baseId, 0)} msg/s`);
  for (const w of WINDOWS) {
    const xs = ours.get(w)!;
    const ratios = xs.map((x, i) => x / base[i]);
    console.log(`  outbox publisher, inflight_window ${String(w).padEnd(4)}:          ${spread(xs, 0)} msg/s`);
    console.log(`    ratio to the bare loop, paired rounds: ${spread(ratios, 2)}x`);
  }
  console.log(`  outbox publisher, window ${WINDOWS[0]}, MQTT 3.1.1 (no message_id): ${spread(oursV311, 0)} msg/s`);
  console.log(`    ratio to the bare loop, paired rounds: ${spread(oursV311.map((x, i) => x / base[i]), 2)}x   (what the user property costs; not the shipped default)`);
  const cpu = (k: string) => spread(cpuUs[k], 1);
  console.log(`  CPU per message (us, user+system, all threads): bare ${cpu('bare')}`);
  console.log(`    bare + message_id ${cpu('bareId')}`);
  for (const w of WINDOWS) console.log(`    outbox w${w} ${cpu(`w${w}`)}`);
  console.log(`    outbox w${WINDOWS[0]}, MQTT 3.1.1 (no message_id property) ${cpu(`w${WINDOWS[0]}-v311`)}`);
  console.log(`  CPU-bound ratio (bare CPU / outbox CPU, w${WINDOWS[0]}, medians): ${(median(cpuUs.bare) / median(cpuUs[`w${WINDOWS[0]}`])).toFixed(2)}x`);
  console.log('  target: >= 0.8x with the default window (50)');
} finally {
  await broker.stop();
  rmSync(dir, { recursive: true, force: true });
}
