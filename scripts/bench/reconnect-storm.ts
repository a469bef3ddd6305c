// Benchmark: a reconnect storm. N gateway uplinks share one broker (mosquitto with TLS and
// a password, as in the tests); the broker goes away for DOWN seconds while every uplink
// keeps recording (a backlog of BACKLOG readings each, plus a live reading every 10 s), then
// comes back. Printed per second after the restart: CONNECT attempts, uplinks connected,
// uplinks drained; then the peak CONNECT rate, the time until all are connected and until
// all backlogs are drained, and the delay of the live readings (sampled -> PUBACK) during
// the drain. Two fleets in the same run, one after the other on a fresh broker:
//   ours:     the real uplink (uplink/connection.ts + publisher.ts with an outbox in SQLite,
//             in memory here), default backoff (equal jitter, 1 s .. 60 s), default backlog
//             pacing (backlog_rate_per_s 200, fresh readings first);
//   baseline: bare mqtt.js with its default fixed 1 s reconnectPeriod, publishing its
//             backlog at once on every connect (what a gateway without our layer does).
//   npx tsx scripts/bench/reconnect-storm.ts [N=2000] [processes=4] [BACKLOG=360] [DOWN=10]
// The uplinks run from src/ (tsx) in `processes` child processes; the file descriptor limit
// must allow N broker connections (ulimit -n).
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import mqtt, { type MqttClient } from 'mqtt';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const LIVE_EVERY_MS = 10_000;
type Mode = 'ours' | 'baseline';

interface WorkerArgs {
  mode: Mode;
  first: number;
  count: number;
  url: string;
  caFile: string;
  backlog: number;
}
/** Worker -> parent, once a second: what happened in that second. */
interface Tick {
  attempts: number;
  connected: number;
  drained: number;
  liveDelaysMs: number[];
  /** The worker's longest event-loop delay in that second (ms): how saturated the shared process was. */
  loopDelayMaxMs: number;
}

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const sample = (rid: string, atMs: number) => ({
  resourceId: rid,
  sampledAtMs: atMs,
  metrics: [
    { name: 'total_active_power', value: 1234.5, unit: 'W' },
    { name: 'active_energy_import', value: 12_345_678, unit: 'Wh' },
  ],
});

if (process.env.MG_STORM_WORKER === '1') {
  await worker();
} else {
  await main();
}

async function worker(): Promise<void> {
  const args = JSON.parse(process.env.MG_STORM_ARGS!) as WorkerArgs;
  let attempts = 0;
  const liveDelaysMs: number[] = [];
  const uplinks: Array<{ connected: () => boolean; drained: () => boolean; record: (atMs: number, live: boolean) => void; stop: () => Promise<void> }> = [];
  if (args.mode === 'ours') {
    const { validateConfig } = await import('../../src/config/load.js');
    const { createContext, buildUplink } = await import('../../src/daemon.js');
    const { createLogger } = await import('../../src/log.js');
    const { openDatabase } = await import('../../src/store/db.js');
    const logger = createLogger('error');
    for (let i = args.first; i < args.first + args.count; i++) {
      const rid = uuid(i);
      const config = validateConfig(
        {
          organization_id: ORG,
          data_dir: '/nonexistent',
          meters: [],
          mqtt: { url: args.url, username: 'gateway', password: 'gw-secret', ca_file: args.caFile, client_id: `storm-${i}` },
        },
        'bench',
        {},
      );
      const ctx = createContext(config, { db: openDatabase(':memory:'), logger });
      const uplink = buildUplink(ctx);
      const publisher = uplink.publisher!;
      // The connection is the publisher's; its attempts and PUBACKs are observed, not replaced.
      const connection = (publisher as unknown as { deps: { connection: import('../../src/uplink/connection.js').MqttConnection } }).deps.connection;
      connection.on('attempt', () => (attempts += 1));
      const publish = connection.publish.bind(connection);
      const liveSince = new Set<string>();
      connection.publish = (req, done) =>
        publish(req, (err) => {
          if (!err && liveSince.size > 0) {
            const at = /"sampled_at":"([^"]+)"/.exec(req.payload)?.[1];
            if (at && liveSince.delete(at)) liveDelaysMs.push(Date.now() - Date.parse(at));
          }
          done(err);
        });
      for (const m of uplink.modules) if (m !== uplink.deviceMessages) await m.start();
      uplinks.push({
        connected: () => connection.state === 'connected',
        drained: () => uplink.outbox.depth === 0,
        record: (atMs, live) => {
          // Starvation is measured on readings taken while connected (and the backlog draining):
          // one taken while away waits for the reconnect, which the CONNECT lines show.
          if (live && connection.state === 'connected') liveSince.add(new Date(atMs).toISOString());
          uplink.recorder.record(sample(rid, atMs));
        },
        stop: async () => {
          for (const m of [...uplink.modules].reverse()) if (m !== uplink.deviceMessages) await m.stop();
          ctx.db.close();
        },
      });
    }
  } else {
    const ca = readFileSync(args.caFile);
    for (let i = args.first; i < args.first + args.count; i++) {
      const rid = uuid(i);
      const topic = `svc/resources/${rid}/measurements`;
      // mqtt.js as it comes: reconnectPeriod 1000 (its default), its own in-memory queue.
      const client: MqttClient = mqtt.connect(args.url, { ca, username: 'gateway', password: 'gw-secret', clientId: `storm-base-${i}`, protocolVersion: 5, clean: true });
      attempts += 1;
      client.on('reconnect', () => (attempts += 1));
      client.on('error', () => undefined);
      let waiting = 0;
      uplinks.push({
        connected: () => client.connected,
        drained: () => waiting === 0,
        record: (atMs, live) => {
          waiting += 1;
          const measured = live && client.connected;
          const payload = JSON.stringify({ message_type: 'measurement', resource_id: rid, organization_id: ORG, data: { sampled_at: new Date(atMs).toISOString(), metrics: sample(rid, atMs).metrics } });
          client.publish(topic, payload, { qos: 1 }, (err) => {
            if (err) return;
            waiting -= 1;
            if (measured) liveDelaysMs.push(Date.now() - atMs);
          });
        },
        stop: () => client.endAsync(true),
      });
    }
  }
  const send = (m: unknown) => process.send!(m);
  process.on('message', (msg: { cmd: string }) => {
    void (async () => {
      if (msg.cmd === 'backlog') {
        // The readings of the outage, stamped in the past: BACKLOG per uplink, 10 s apart.
        const now = Date.now();
        for (const u of uplinks) for (let k = args.backlog; k > 0; k--) u.record(now - k * LIVE_EVERY_MS, false);
        send({ cmd: 'backlogged' });
      } else if (msg.cmd === 'stop') {
        for (const u of uplinks) await u.stop();
        send({ cmd: 'stopped' });
        process.exit(0);
      }
    })();
  });
  // Live readings: every uplink every 10 s, spread over the 10 s.
  uplinks.forEach((u, k) =>
    setTimeout(() => setInterval(() => u.record(Date.now(), true), LIVE_EVERY_MS), Math.floor((k / uplinks.length) * LIVE_EVERY_MS)),
  );
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  setInterval(() => {
    const tick: Tick = { attempts, connected: uplinks.filter((u) => u.connected()).length, drained: uplinks.filter((u) => u.drained()).length, liveDelaysMs: liveDelaysMs.splice(0), loopDelayMaxMs: loop.max / 1e6 };
    loop.reset();
    attempts = 0;
    send({ cmd: 'tick', tick });
  }, 1000);
  send({ cmd: 'ready' });
}

async function main(): Promise<void> {
  const { startTlsBroker } = await import('../../test/helpers/mosquitto.js');
  const N = Number(process.argv[2] ?? 2000);
  const P = Number(process.argv[3] ?? 4);
  const BACKLOG = Number(process.argv[4] ?? 360);
  const DOWN_S = Number(process.argv[5] ?? 10);
  const results: Record<Mode, string[]> = { ours: [], baseline: [] };

  for (const mode of ['ours', 'baseline'] as const) {
    const broker = await startTlsBroker([{ username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] }]);
    const workers: ChildProcess[] = [];
    const latest = new Map<ChildProcess, Tick>();
    let onTick: (() => void) | null = null;
    const until = (msgCmd: string, w: ChildProcess) => new Promise<void>((resolve) => w.on('message', (m: { cmd: string }) => m.cmd === msgCmd && resolve()));
    const per = Math.ceil(N / P);
    const sums = { attempts: 0, loopMaxMs: 0 };
    const delays: number[] = [];
    for (let p = 0; p < P; p++) {
      const args: WorkerArgs = { mode, first: p * per, count: Math.min(per, N - p * per), url: broker.url, caFile: broker.caFile, backlog: BACKLOG };
      const w = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, MG_STORM_WORKER: '1', MG_STORM_ARGS: JSON.stringify(args) } });
      w.on('message', (m: { cmd: string; tick?: Tick }) => {
        if (m.cmd !== 'tick') return;
        latest.set(w, m.tick!);
        sums.attempts += m.tick!.attempts;
        sums.loopMaxMs = Math.max(sums.loopMaxMs, m.tick!.loopDelayMaxMs);
        delays.push(...m.tick!.liveDelaysMs);
        onTick?.();
      });
      workers.push(w);
    }
    await Promise.all(workers.map((w) => until('ready', w)));
    const total = (k: 'connected' | 'drained') => [...latest.values()].reduce((n, t) => n + t[k], 0);
    const waitFor = (ok: () => boolean, timeoutMs: number) =>
      new Promise<boolean>((resolve) => {
        const t = setTimeout(() => ((onTick = null), resolve(false)), timeoutMs);
        onTick = () => {
          if (latest.size === P && ok()) {
            clearTimeout(t);
            onTick = null;
            resolve(true);
          }
        };
      });
    const progress = setInterval(() => console.error(`  ${mode}: coming up, ${total('connected')} of ${N} connected`), 10_000);
    const up = await waitFor(() => total('connected') === N && total('drained') === N, 300_000);
    clearInterval(progress);
    if (!up) throw new Error(`${mode}: the fleet never came up (${total('connected')} connected)`);
    await broker.pause();
    await Promise.all(workers.map((w) => (w.send({ cmd: 'backlog' }), until('backlogged', w))));
    await new Promise((r) => setTimeout(r, DOWN_S * 1000));
    // The restart: from here on, a line per second.
    sums.attempts = 0;
    sums.loopMaxMs = 0;
    delays.length = 0;
    await broker.resume();
    const t0 = Date.now();
    const lines: string[] = [];
    let peak = 0;
    let allConnectedS: number | null = null;
    let allDrainedS: number | null = null;
    const rates: number[] = [];
    await new Promise<void>((resolve) => {
      let last = Date.now();
      onTick = () => {
        if (latest.size < P || Date.now() - last < 900) return;
        // Per second of wall time (a saturated worker's ticks come late and carry more).
        const a = Math.round(sums.attempts / ((Date.now() - last) / 1000));
        last = Date.now();
        const s = Math.round((Date.now() - t0) / 1000);
        sums.attempts = 0;
        rates.push(a);
        peak = Math.max(peak, a);
        const c = total('connected');
        const d = total('drained');
        if (allConnectedS === null && c === N) allConnectedS = s;
        if (allDrainedS === null && d === N && c === N) allDrainedS = s;
        lines.push(`  ${String(s).padStart(4)} s  CONNECT ${String(a).padStart(5)}/s  connected ${String(c).padStart(5)}  drained ${String(d).padStart(5)}`);
        if ((allDrainedS !== null && s >= allDrainedS + 2) || s > 240) {
          onTick = null;
          resolve();
        }
      };
    });
    const sorted = [...delays].sort((x, y) => x - y);
    const q = (f: number) => (sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor(f * sorted.length))]! / 1000).toFixed(1) : '-');
    results[mode] = [
      ...lines,
      `  peak CONNECT rate ${peak}/s; all ${N} connected after ${allConnectedS ?? '>240'} s; all backlogs (${BACKLOG} each) drained after ${allDrainedS ?? '>240'} s`,
      `  live readings taken while connected during the return: ${sorted.length}, delay sampled -> PUBACK median ${q(0.5)} s, p95 ${q(0.95)} s, max ${q(1)} s`,
      `  longest event-loop delay in a worker process: ${(sums.loopMaxMs / 1000).toFixed(1)} s (all uplinks share ${P} processes and 2 cores with the broker)`,
    ];
    await Promise.all(workers.map((w) => (w.send({ cmd: 'stop' }), until('stopped', w))));
    await broker.stop();
    console.log(`${mode === 'ours' ? 'metergate uplink (equal-jitter backoff 1..60 s, outbox, backlog 200/s behind live)' : 'baseline: mqtt.js fixed 1 s reconnectPeriod, backlog published at once'}; N=${N} in ${P} processes, broker down ${DOWN_S} s`);
    console.log(results[mode].join('\n'));
  }
}
