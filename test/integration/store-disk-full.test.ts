// The data directory on a real 2 MiB tmpfs filled to the last byte while `metergate run`
// polls a simulated SDM630 over Modbus TCP and publishes to mosquitto (TLS, ACL):
// - a daemon started on the full disk starts and polls; what it cannot store waits in
//   memory and arrives (in the database and at the broker) once space is freed;
// - full for longer than store.write_queue_max_entries readings: the oldest are dropped
//   and counted, every other reading arrives;
// - /healthz says the store cannot write and why; counters count only what was stored.
// Needs root (mount). With CI set it fails instead of skipping when it cannot mount.
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillToLastByte } from '../helpers/disk-fill.js';
import { cloudUser, GATEWAY_USER, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { canMountTmpfs } from '../helpers/peers.js';
import { until } from '../helpers/wait.js';
import { seriesValue as sample } from '../helpers/prom-text.js';

const MINE = '6e8a0c2e-4b5d-4f7a-9c1e-3b5d7f9a1c3e';
const QUEUE_MAX = 15;

// With CI set, a missing mount or broker fails the file (test/helpers/peers.ts) instead of skipping.
const mountable = canMountTmpfs();

describe.skipIf(!mountable || !hasMosquitto)('data directory on a full disk', () => {
  let rig: MeterRig;
  let mnt: string;
  let secondStartMs = 0;
  let filler: string | null = null;
  const scrape = async () => (await fetch(`${rig.httpBase}/metrics`)).text();
  const health = async () => (await (await fetch(`${rig.httpBase}/healthz`)).json()) as { components: { store: { status: string; reason: string } } };
  const measurements = () => rig.sub.messages.filter((m) => m.topic.endsWith('/measurements'));
  const sampledAt = (since: number) => [...new Set(measurements().map((m) => Date.parse((m.json.data as { sampled_at: string }).sampled_at)))].filter((t) => t >= since).sort((a, b) => a - b);
  const free = () => {
    if (filler) rmSync(filler, { force: true });
    filler = null;
  };

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-diskfull-',
      broker: { users: [GATEWAY_USER, cloudUser(MINE)] },
      meters: [{ line: 'tcp', args: ['--unit', '1'] }],
      http: true,
      config: ({ meters }) => ({
        poll: { interval_ms: 1000, offline_after_misses: 100 },
        buses: [{ name: 'tcp', type: 'tcp', host: '127.0.0.1', tcp_port: meters[0].tcpPort, timeout_ms: 1000 }],
        meters: [{ resource_id: MINE, bus: 'tcp', unit_id: 1, profile: 'sdm630' }],
        mqtt: { reconnect_min_ms: 200, reconnect_max_ms: 1000 },
        store: { write_queue_max_entries: QUEUE_MAX },
      }),
      subscriber: { username: 'cloud', topic: `svc/resources/${MINE}/+` },
      startDaemon: false,
    });
    // The data directory is the tmpfs; daemons started later stop before it is unmounted.
    mnt = rig.dataDir;
    mkdirSync(mnt);
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`mount failed: ${r.stderr}`);
    rig.defer(() => spawnSync('umount', [mnt]));
  });

  afterAll(async () => {
    await rig?.stop();
  });

  it('starts and polls on a full disk; what it took meanwhile arrives once space is freed', { timeout: 180_000 }, async () => {
    // A first run creates the database; a clean stop removes its WAL and shared-memory files.
    const sub = rig.sub;
    const first = await rig.startDaemon();
    await sub.waitFor(() => measurements().length >= 2, 'readings before the disk fills', 30_000);
    expect(await first.stop()).toBe(0);

    filler = fillToLastByte(mnt);
    secondStartMs = Date.now();
    await rig.startDaemon(); // today: exit 1 while storing the boot notification
    await until(async () => (await health()).components.store.status === 'degraded', '/healthz to report the store', 30_000);
    expect((await health()).components.store.reason).toMatch(/^cannot write \(SQLITE_(FULL|IOERR)[A-Z_]*: .+\) since .+; \d+ of at most 15 write\(s\) waiting in memory/);
    await until(async () => (sample(await scrape(), 'metergate_store_pending_writes') ?? 0) >= 5, '5 writes waiting', 30_000);
    const metrics = await scrape();
    // Nothing stored, so nothing counted: no reading, no phantom outbox row.
    expect(sample(metrics, 'metergate_readings_stored_total')).toBe(0);
    expect(sample(metrics, 'metergate_outbox_depth')).toBe(0);
    expect(measurements().filter((m) => Date.parse((m.json.data as { sampled_at: string }).sampled_at) >= secondStartMs)).toHaveLength(0);

    free();
    await until(async () => (await health()).components.store.status === 'ok', 'the store to take writes again', 30_000);
    await sub.waitFor(() => sub.messages.some((m) => m.topic.endsWith('/boot_notifications') && Date.parse(String(m.json.booted_at)) >= secondStartMs - 1000), 'the boot notification stored late', 30_000);
    await sub.waitFor(() => sampledAt(secondStartMs).length >= 8, 'the readings taken on the full disk', 30_000);
  });

  it('full for longer than the queue holds: the oldest are dropped and counted, every other reading arrives', { timeout: 180_000 }, async () => {
    const sub = rig.sub;
    filler = fillToLastByte(mnt);
    await until(async () => (sample(await scrape(), 'metergate_store_pending_dropped_total', { kind: 'reading' }) ?? 0) >= 5, '5 readings dropped from the full queue', 60_000);
    expect(sample(await scrape(), 'metergate_store_pending_writes')).toBe(QUEUE_MAX);
    // Dropping data: /healthz says so (down, not ready) with the reason.
    expect((await health()).components.store).toMatchObject({ status: 'down', reason: expect.stringMatching(/; queue full, dropping the oldest readings; 15 of at most 15 /) });
    free();
    await until(async () => (await health()).components.store.status === 'ok', 'the store to take writes again', 30_000);
    expect((await health()).components.store.reason).toMatch(/^writes ok; \d+ dropped since start \(queue full\)$/);

    // The meter goes silent, so what was taken is final; then count.
    await rig.meters[0].sim.kill();
    await until(async () => (sample(await scrape(), 'metergate_meter_poll_failures_total') ?? 0) >= 2, 'polls failing after the meter died', 30_000);
    // The last readings taken may still wait in the write queue: counted as stored once committed.
    await until(async () => sample(await scrape(), 'metergate_store_pending_writes') === 0, 'the write queue empty', 30_000);
    const m = await scrape();
    // Both counted when a poll ends (polls_total counts at its start: one may be in flight).
    const taken = (sample(m, 'metergate_meter_poll_duration_seconds_count') ?? 0) - (sample(m, 'metergate_meter_poll_failures_total') ?? 0);
    const dropped = sample(m, 'metergate_store_pending_dropped_total', { kind: 'reading' }) ?? 0;
    const stored = sample(m, 'metergate_readings_stored_total') ?? 0;
    expect(sample(m, 'metergate_meter_samples_dropped_total') ?? 0).toBe(0);
    expect(dropped).toBeGreaterThanOrEqual(5);
    expect(stored).toBe(taken - dropped);
    await sub.waitFor(() => sampledAt(secondStartMs).length >= taken - dropped, `${taken - dropped} readings at the broker`, 60_000);
    const delivered = sampledAt(secondStartMs);
    expect(delivered).toHaveLength(taken - dropped);
    // The dropped ones were the oldest in the queue: consecutive, one gap of at least that many polls.
    const gaps = delivered.slice(1).map((t, i) => t - delivered[i]);
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(dropped * 1000);

    expect(await rig.daemons[1].stop()).toBe(0);
    const db = new Database(join(mnt, 'metergate.db'), { readonly: true });
    try {
      const rows = db.prepare('SELECT sampled_at_ms FROM readings WHERE resource_id = ? AND sampled_at_ms >= ? ORDER BY sampled_at_ms').pluck().all(MINE, secondStartMs);
      expect(rows).toEqual(delivered);
    } finally {
      db.close();
    }
  });
});
