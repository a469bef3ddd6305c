// A gateway upgraded to migration 200 with a backlog waiting (real `metergate run`
// processes, a real SQLite file with 4 KiB pages as releases before it left it, TLS
// mosquitto): the daemon migrates at start without copying the readings, sends the waiting
// measurements with their metrics taken from the old table, is killed with -9 mid-drain,
// and after a restart every one of them has arrived and every old reading is still stored.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../src/store/db.js';
import { buildMeasurement } from '../../src/uplink/messages.js';
import { cloudUser, GATEWAY_USER, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { ORG } from '../helpers/poller-harness.js';

const MINE = '4a6c8e0a-2b3c-4d5e-8f6a-7b8c9d0e1f2a';
const N = 1500;

describe.skipIf(!hasMosquitto)('upgrade to time-ordered readings with a backlog, kill -9 mid-drain', () => {
  let rig: MeterRig;
  let dbPath: string;
  /** sampled_at -> the metrics JSON its message must carry */
  const expected = new Map<string, string>();

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-upgrade-crash-',
      broker: { users: [GATEWAY_USER, cloudUser(MINE)] },
      config: () => ({ mqtt: { backlog_rate_per_s: 300, inflight_window: 20, reconnect_min_ms: 200, reconnect_max_ms: 1000 } }),
      subscriber: { username: 'cloud', topic: `svc/resources/${MINE}/measurements` },
      startDaemon: false,
    });
    // The database as the release before migration 200 leaves it: readings keyed by meter,
    // measurements in the outbox by reference to them (metrics `[]` at metrics_at).
    mkdirSync(rig.dataDir);
    dbPath = join(rig.dataDir, 'metergate.db');
    const db = new Database(dbPath);
    db.pragma('page_size = 4096');
    db.pragma('journal_mode = WAL');
    migrate(db, listMigrations().filter((m) => m.version < 200));
    const reading = db.prepare('INSERT INTO readings (resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json) VALUES (?, ?, ?, ?, ?)');
    const row = db.prepare(
      `INSERT INTO outbox (id, message_id, topic, payload, bytes, stamped_at_ms, created_at_ms, reading_resource_id, metrics_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    db.transaction(() => {
      for (let i = 0; i < N; i++) {
        const at = t0 + i * 1000;
        const metrics = [{ name: 'total_active_power', value: 1000 + (i % 100), unit: 'W' }, { name: 'active_energy_import', value: 5_000_000 + i, unit: 'Wh' }];
        const payload = JSON.stringify(buildMeasurement(ORG, { resourceId: MINE, sampledAtMs: at, metrics }));
        const metricsJson = JSON.stringify(metrics);
        const metricsAt = payload.lastIndexOf(metricsJson);
        reading.run(MINE, at, 5_000_000 + i, 1000 + (i % 100), metricsJson);
        const topic = `svc/resources/${MINE}/measurements`;
        row.run(i + 1, `m-${i}`, topic, `${payload.slice(0, metricsAt)}[]${payload.slice(metricsAt + metricsJson.length)}`, Buffer.byteLength(payload) + topic.length, at, Date.now(), MINE, metricsAt);
        expected.set(new Date(at).toISOString(), metricsJson);
      }
    })();
    db.close();
  });

  afterAll(async () => {
    await rig?.stop();
  });

  it('delivers every waiting measurement whole and keeps every old reading', { timeout: 120_000 }, async () => {
    const sub = rig.sub;
    const first = await rig.startDaemon();
    await sub.waitFor((all) => all.length >= 200, 'part of the backlog');
    await first.kill9();
    expect(first.output()).toMatch(/200_readings_in_time_order/); // migrated at start, said so
    const beforeRestart = new Set(sub.messages.map((m) => (m.json.data as { sampled_at: string }).sampled_at)).size;
    expect(beforeRestart, first.output()).toBeLessThan(N); // the crash really came mid-drain

    const second = await rig.startDaemon();
    await sub.waitFor((all) => new Set(all.map((m) => (m.json.data as { sampled_at: string }).sampled_at)).size >= N, `all ${N} backlog readings`, 60_000);
    for (const m of sub.messages) {
      const data = m.json.data as { sampled_at: string; metrics: unknown };
      expect(JSON.stringify(data.metrics)).toBe(expected.get(data.sampled_at));
    }
    expect(await second.stop()).toBe(0);

    const db = new Database(dbPath, { readonly: true });
    try {
      expect(db.pragma('page_size', { simple: true })).toBe(4096); // no VACUUM at the upgrade
      expect(db.prepare('SELECT count(*) FROM readings_by_meter WHERE resource_id = ?').pluck().get(MINE)).toBe(N);
      expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });
});
