// Broker stopped for 30 s then restarted: every reading sampled meanwhile arrives, oldest
// first, none lost. The subscriber keeps a persistent session (mosquitto persistence), so
// what the gateway publishes before the subscriber is back waits for it on the broker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { messageProblems } from '../../src/uplink/validate.js';
import { cloudUser, GATEWAY_USER, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { until } from '../helpers/wait.js';

const MINE = '2d4f6a8c-0e1b-4d3f-9a5c-7e9b1d3f5a7c';
const OUTAGE_MS = 30_000;

describe.skipIf(!hasMosquitto)('broker outage of 30 s', () => {
  let rig: MeterRig;

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-outage-',
      broker: { users: [GATEWAY_USER, cloudUser(MINE)], persistence: true },
      meters: [{ line: 'pty', args: ['--unit', '1'] }],
      config: ({ meters }) => ({
        poll: { interval_ms: 1000 },
        buses: [{ name: 'line-a', type: 'rtu', port: meters[0].port, timeout_ms: 300 }],
        meters: [{ resource_id: MINE, bus: 'line-a', unit_id: 1, profile: 'sdm630' }],
        mqtt: { reconnect_min_ms: 200, reconnect_max_ms: 1000, heartbeat_interval_ms: 2000 },
      }),
      subscriber: { username: 'cloud', topic: `svc/resources/${MINE}/+`, clientId: 'cloud-outage-test' },
    });
  });

  afterAll(async () => {
    await rig?.stop();
  });

  it('delivers every reading sampled during the outage, oldest first, none lost', { timeout: 150_000 }, async () => {
    const { broker, sub, daemon, dataDir } = rig!;
    const measurements = () => sub.messages.filter((m) => m.topic.endsWith('/measurements'));
    const heartbeatsAt = () => sub.messages.filter((m) => m.topic.endsWith('/heartbeats')).map((m) => Date.parse(String(m.json.published_at)));
    const sampledAt = () => measurements().map((m) => Date.parse((m.json.data as { sampled_at: string }).sampled_at));
    await sub.waitFor(() => measurements().length >= 2 && heartbeatsAt().length >= 1, 'measurements and a heartbeat before the outage', 30_000);

    const downAt = Date.now();
    await broker.pause();
    const goneAt = Date.now(); // the broker process has exited
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const restartAt = Date.now(); // no broker to publish to before this
    await broker.resume();
    const upAt = Date.now();

    // What the gateway stored while the broker was away (read-only look at its database).
    const readDb = <T>(query: (db: Database.Database) => T): T => {
      const db = new Database(join(dataDir, 'metergate.db'), { readonly: true, fileMustExist: true });
      try {
        return query(db);
      } finally {
        db.close();
      }
    };
    // A reading is stamped with its first answer and stored after its last: one sampled just
    // before upAt may not be stored yet. Once one sampled after upAt is, every earlier one is.
    await until(() => readDb((db) => (db.prepare('SELECT max(sampled_at_ms) FROM readings WHERE resource_id = ?').pluck().get(MINE) as number | null) ?? 0) >= upAt, 'a reading sampled after the outage stored');
    const stored = readDb((db) => db.prepare('SELECT sampled_at_ms FROM readings WHERE resource_id = ? AND sampled_at_ms > ? AND sampled_at_ms < ? ORDER BY sampled_at_ms').pluck().all(MINE, downAt, upAt) as number[]);
    expect(stored.length, daemon.output()).toBeGreaterThanOrEqual(20); // ~1 a second

    await sub.waitFor(
      () => {
        const got = new Set(sampledAt());
        return stored.every((t) => got.has(t));
      },
      `all ${stored.length} readings sampled during the outage`,
      40_000,
    );
    for (const m of measurements()) expect(messageProblems('measurement', m.json)).toEqual([]);

    // Oldest first: in arrival order (first arrival of each), the outage readings are sorted.
    const seen = new Set<number>();
    const outageOrder = sampledAt().filter((t) => t > downAt && t < upAt && !seen.has(t) && seen.add(t));
    expect(outageOrder).toEqual([...stored]);

    // Heartbeats only while connected: none stamped while the broker was away is sent later
    // (a second of slack after it exited, for one sent before the gateway saw the link drop),
    // and they resume after.
    await sub.waitFor(() => heartbeatsAt().some((t) => t > upAt), 'a heartbeat after the outage', 20_000);
    expect(heartbeatsAt().filter((t) => t > goneAt + 1000 && t < restartAt).map((t) => new Date(t).toISOString())).toEqual([]);
  });
});
