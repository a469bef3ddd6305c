// The database locked by another process for 30 s (it holds the write lock: SQLITE_BUSY
// past any busy timeout) while `metergate run` polls a simulated SDM630 over Modbus TCP and
// publishes to mosquitto (TLS, ACL): /healthz says why the store cannot write, the readings
// wait in memory, and once the lock goes every reading taken arrives — in the database and
// at the broker, none lost, none counted twice.
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudUser, GATEWAY_USER, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { seriesValue } from '../helpers/prom-text.js';
import { until } from '../helpers/wait.js';

const MINE = '7f9b1d3f-5c6e-4a8b-8d2f-4c6e8a0b2d4f';
const LOCK_MS = 30_000;

/** Another process that takes the database's write lock, holds it for `ms`, then lets go. */
async function holdWriteLock(dbPath: string, ms: number): Promise<{ child: ChildProcess; released: Promise<void> }> {
  const script = `import Database from 'better-sqlite3';
const db = new Database(${JSON.stringify(dbPath)});
db.exec('BEGIN IMMEDIATE');
console.log('locked');
setTimeout(() => { db.exec('COMMIT'); db.close(); console.log('released'); }, ${ms});`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const seen = (word: string) => new Promise<void>((resolve, reject) => {
    lines.on('line', (l) => l === word && resolve());
    child.once('exit', (code) => reject(new Error(`lock holder exited ${code} before "${word}"`)));
  });
  const locked = seen('locked');
  const released = seen('released');
  await locked;
  return { child, released };
}

describe.skipIf(!hasMosquitto)('database locked by another process for 30 s', () => {
  let rig: MeterRig;
  let holder: ChildProcess | undefined;
  const scrape = async () => (await fetch(`${rig.httpBase}/metrics`)).text();
  const health = async () => (await (await fetch(`${rig.httpBase}/healthz`)).json()) as { components: { store: { status: string; reason: string } } };
  const sampledAt = () =>
    [...new Set(rig.sub.messages.filter((m) => m.topic.endsWith('/measurements')).map((m) => Date.parse((m.json.data as { sampled_at: string }).sampled_at)))].sort((a, b) => a - b);

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-locked-',
      broker: { users: [GATEWAY_USER, cloudUser(MINE)] },
      meters: [{ line: 'tcp', args: ['--unit', '1'] }],
      http: true,
      config: ({ meters }) => ({
        poll: { interval_ms: 1000, offline_after_misses: 100 },
        buses: [{ name: 'tcp', type: 'tcp', host: '127.0.0.1', tcp_port: meters[0].tcpPort, timeout_ms: 1000 }],
        meters: [{ resource_id: MINE, bus: 'tcp', unit_id: 1, profile: 'sdm630' }],
        mqtt: { reconnect_min_ms: 200, reconnect_max_ms: 1000 },
      }),
      subscriber: { username: 'cloud', topic: `svc/resources/${MINE}/+` },
    });
  });

  afterAll(async () => {
    holder?.kill('SIGKILL');
    await rig?.stop();
  });

  it('loses no reading and counts each once', { timeout: 180_000 }, async () => {
    const { sub, daemon, dataDir } = rig;
    await sub.waitFor(() => sampledAt().length >= 3, 'readings before the lock', 30_000);
    const lock = await holdWriteLock(join(dataDir, 'metergate.db'), LOCK_MS);
    holder = lock.child;
    await until(async () => (await health()).components.store.status === 'degraded', '/healthz to report the locked store', 20_000);
    expect((await health()).components.store.reason).toMatch(/^cannot write \(SQLITE_BUSY: database is locked\) since .+; \d+ of at most 5000 write\(s\) waiting in memory$/);
    await lock.released;
    await until(async () => (await health()).components.store.status === 'ok', 'the store to take writes again', 30_000);
    await sub.waitFor(() => sampledAt().length >= 3 + LOCK_MS / 1000 - 5, 'the readings taken while it was locked', 30_000);

    // The meter goes silent, so what was taken is final; then count.
    await rig.meters[0].sim.kill();
    await until(async () => (seriesValue(await scrape(), 'metergate_meter_poll_failures_total') ?? 0) >= 2, 'polls failing after the meter died', 30_000);
    // The last readings taken may still wait in the write queue: counted as stored once committed.
    await until(async () => seriesValue(await scrape(), 'metergate_store_pending_writes') === 0, 'the write queue empty', 30_000);
    const m = await scrape();
    // Both counted when a poll ends (polls_total counts at its start: one may be in flight).
    const taken = (seriesValue(m, 'metergate_meter_poll_duration_seconds_count') ?? 0) - (seriesValue(m, 'metergate_meter_poll_failures_total') ?? 0);
    expect(seriesValue(m, 'metergate_meter_samples_dropped_total') ?? 0).toBe(0);
    expect(seriesValue(m, 'metergate_store_write_failures_total', { code: 'SQLITE_BUSY' })).toBeGreaterThan(0);
    expect(seriesValue(m, 'metergate_store_pending_dropped_total', { kind: 'reading' }) ?? 0).toBe(0);
    expect(seriesValue(m, 'metergate_readings_stored_total')).toBe(taken);
    await sub.waitFor(() => sampledAt().length >= taken, `all ${taken} readings at the broker`, 60_000);
    expect(sampledAt()).toHaveLength(taken);
    // Polling went on while the lock was held: no writer in the daemon waited seconds for
    // the lock on the event loop (a 5 s wait showed as 10 s gaps between readings).
    const at = sampledAt();
    expect(Math.max(...at.slice(1).map((t, i) => t - at[i]))).toBeLessThan(4000);

    expect(await daemon.stop()).toBe(0);
    const db = new Database(join(dataDir, 'metergate.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT sampled_at_ms FROM readings ORDER BY sampled_at_ms').pluck().all()).toEqual(sampledAt());
    } finally {
      db.close();
    }
  });
});
