// Migration 200 on a gateway that has readings (real SQLite files): the old table is kept
// as readings_by_meter (no copy at start), new readings go to the time-ordered
// meter_readings, and every per-meter read — readings of a range, the latest, the readings
// around a session, a measurement's metrics in the outbox, clock-step flags, the retention
// purge — sees both as one. The file keeps its 4 KiB pages (no VACUUM at upgrade).
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MeterSample } from '../../src/domain.js';
import { ClockStepStore, suspectReadings } from '../../src/store/clock-steps.js';
import { listMigrations, migrate, openDatabase, type Db } from '../../src/store/db.js';
import { Outbox } from '../../src/store/outbox.js';
import { ReadingsStore } from '../../src/store/readings.js';
import { SessionStore } from '../../src/store/sessions.js';

const A = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const B = '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f';
const OLD_ONLY = '2d9a5b6e-3f4c-4a71-8cbd-2e3f4a5b6c7d';
const T0 = Date.parse('2026-11-01T00:00:00Z');
const UPGRADE = T0 + 3_600_000; // old readings before, new ones from here
const HOUR = 3_600_000;
const sample = (resourceId: string, sampledAtMs: number, wh: number | null): MeterSample => ({
  resourceId,
  sampledAtMs,
  metrics: [{ name: 'total_active_power', value: 500, unit: 'W' }, ...(wh === null ? [] : [{ name: 'active_energy_import', value: wh, unit: 'Wh' }])],
});

const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A gateway's database as a release before migration 200 left it: 4 KiB pages, readings of A and OLD_ONLY every 10 s for an hour, one waiting measurement. */
function upgraded(): Db {
  const dir = mkdtempSync(join(tmpdir(), 'mg-by-meter-'));
  dirs.push(dir);
  const path = join(dir, 'metergate.db');
  const old = new Database(path);
  old.pragma('page_size = 4096');
  old.pragma('journal_mode = WAL');
  migrate(old, listMigrations().filter((m) => m.version < 200));
  const insert = old.prepare('INSERT INTO readings (resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json) VALUES (?, ?, ?, 500, ?)');
  old.transaction(() => {
    for (let t = T0; t < UPGRADE; t += 10_000) {
      const wh = 1000 + (t - T0) / 10_000;
      insert.run(A, t, wh, JSON.stringify([{ name: 'active_energy_import', value: wh, unit: 'Wh' }]));
      insert.run(OLD_ONLY, t, wh, JSON.stringify([{ name: 'active_energy_import', value: wh, unit: 'Wh' }]));
    }
    const payload = `{"message_type":"measurement","resource_id":"${A}","data":{"sampled_at":"x","metrics":[]}}`;
    old.prepare(
      `INSERT INTO outbox (id, message_id, topic, payload, bytes, stamped_at_ms, created_at_ms, reading_resource_id, metrics_at) VALUES (1, 'm-1', 't', ?, 100, ?, 0, ?, ?)`,
    ).run(payload, T0 + 10_000, A, payload.indexOf('[]'));
  })();
  old.close();
  const db = openDatabase(path);
  dbs.push(db);
  return db;
}

describe('readings after migration 200 on a database with readings', () => {
  it('keeps the old rows where they are and the page size the file has', () => {
    const db = upgraded();
    expect(db.pragma('page_size', { simple: true })).toBe(4096);
    expect(db.prepare('SELECT count(*) FROM readings_by_meter').pluck().get()).toBe(720);
    expect(db.prepare('SELECT count(*) FROM meter_readings').pluck().get()).toBe(0);
    expect(new ReadingsStore(db).count()).toBe(720);
  });

  it('does not store twice, through the readings view, an instant the old table holds', () => {
    const db = upgraded();
    db.prepare("INSERT INTO readings (resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json) VALUES (?, ?, 1, NULL, '[]')").run(A, T0);
    expect(db.prepare('SELECT count(*) FROM readings WHERE resource_id = ? AND sampled_at_ms = ?').pluck().get(A, T0)).toBe(1);
    expect(db.prepare('SELECT count(*) FROM meter_readings').pluck().get()).toBe(0);
  });

  it('reads both tables as one, per meter and in time order', () => {
    const db = upgraded();
    const readings = new ReadingsStore(db);
    // The instant of an old reading is not stored again; new instants are.
    expect(readings.insert(sample(A, UPGRADE - 10_000, 9999))).toBe(false);
    for (let t = UPGRADE; t < UPGRADE + 3 * HOUR; t += 10_000) {
      expect(readings.insert(sample(A, t, 1360 + (t - UPGRADE) / 10_000))).toBe(true);
      expect(readings.insert(sample(B, t + 1, null))).toBe(true); // B reports power only
    }
    expect(readings.insert(sample(B, UPGRADE + 5 * HOUR, 42))).toBe(true); // after two hours of nothing
    expect(readings.count()).toBe(720 + 2 * 1080 + 1);

    const span = readings.between(A, UPGRADE - 20_000, UPGRADE + 10_000);
    expect(span.map((r) => [r.sampledAtMs - UPGRADE, r.energyImportWh])).toEqual([[-20_000, 1358], [-10_000, 1359], [0, 1360], [10_000, 1361]]);
    expect(span.every((r) => r.resourceId === A)).toBe(true);
    expect(span[0].metrics).toEqual([{ name: 'active_energy_import', value: 1358, unit: 'Wh' }]);
    expect(span[2].metrics).toEqual([{ name: 'total_active_power', value: 500, unit: 'W' }, { name: 'active_energy_import', value: 1360, unit: 'Wh' }]);
    expect(readings.latest(A)?.sampledAtMs).toBe(UPGRADE + 3 * HOUR - 10_000);
    expect(readings.latest(B)?.sampledAtMs).toBe(UPGRADE + 5 * HOUR);
    expect(readings.latest(OLD_ONLY)?.sampledAtMs).toBe(UPGRADE - 10_000);
    expect(readings.latest('9f0e1d2c-3b4a-4958-8677-665544332211')).toBeNull();
    // The last n, newest first: within an hour, across the two hours of nothing (B), and into the old table.
    expect(readings.newest(A, 3).map((r) => r.sampledAtMs - UPGRADE)).toEqual([3 * HOUR - 10_000, 3 * HOUR - 20_000, 3 * HOUR - 30_000]);
    expect(readings.newest(B, 2).map((r) => r.sampledAtMs - UPGRADE)).toEqual([5 * HOUR, 3 * HOUR - 9_999]);
    expect(readings.newest(OLD_ONLY, 2).map((r) => r.sampledAtMs - UPGRADE)).toEqual([-10_000, -20_000]);
    expect(readings.newest('9f0e1d2c-3b4a-4958-8677-665544332211', 2)).toEqual([]);

    // Around a session: the nearest reading with energy before and after, however far (B: across hours of power-only readings).
    const sessions = new SessionStore(db);
    const around = sessions.localMeterReadingsAround(A, UPGRADE - 15_000, UPGRADE + 5_000);
    expect(around.map((r) => [r.timestampMs - UPGRADE, r.energyKwh])).toEqual([[-20_000, 1.358], [-10_000, 1.359], [0, 1.36], [10_000, 1.361]]);
    expect(sessions.localMeterReadingsAround(B, UPGRADE + HOUR, UPGRADE + 2 * HOUR).map((r) => r.timestampMs)).toEqual([UPGRADE + 5 * HOUR]);
    expect(sessions.localMeterReadingsAround(A, UPGRADE + 10 * HOUR, UPGRADE + 11 * HOUR).map((r) => r.timestampMs)).toEqual([UPGRADE + 3 * HOUR - 10_000]);
    expect(sessions.localMeterReadingsAround(OLD_ONLY, T0 - HOUR, T0 - 1).map((r) => r.timestampMs)).toEqual([T0]);

    // The view for tools shows both, in the old columns.
    expect(db.prepare('SELECT count(*) FROM readings WHERE resource_id = ?').pluck().get(A)).toBe(360 + 1080);
  });

  it('gives a waiting measurement its metrics from the old table, and a new one from the new', () => {
    const db = upgraded();
    const readings = new ReadingsStore(db);
    const outbox = new Outbox(db, { maxRows: 1000, maxBytes: 1e9 });
    const metricsJson = JSON.stringify([{ name: 'active_energy_import', value: 7, unit: 'Wh' }]);
    db.transaction(() => {
      readings.insert({ resourceId: A, sampledAtMs: UPGRADE, metrics: [{ name: 'active_energy_import', value: 7, unit: 'Wh' }] });
      outbox.enqueue({ topic: 't', payload: `{"metrics":${metricsJson}}`, qos: 1, retain: false, stampedAtMs: UPGRADE, reading: { resourceId: A, metricsJson } }, 0);
    })();
    const page = outbox.page(0, 10);
    expect(page.map((r) => r.payload)).toEqual([
      `{"message_type":"measurement","resource_id":"${A}","data":{"sampled_at":"x","metrics":[{"name":"active_energy_import","value":1001,"unit":"Wh"}]}}`,
      `{"metrics":${metricsJson}}`,
    ]);
    // The retention keeps the old reading the waiting message takes its metrics from.
    expect(readings.purgeCutoff(UPGRADE)).toBe(T0 + 10_000);
  });

  it('flags and counts readings of a clock step in both tables', () => {
    const db = upgraded();
    const readings = new ReadingsStore(db);
    for (let t = UPGRADE; t < UPGRADE + 60_000; t += 10_000) readings.insert(sample(A, t, 1));
    const flagged = new ClockStepStore(db).record({ detectedAtMs: UPGRADE + HOUR, stepMs: -30_000, suspectFromMs: UPGRADE - 20_000, suspectToMs: UPGRADE + 20_000 });
    expect(flagged).toBe(2 + 3 + 2); // A: 2 old + 3 new; OLD_ONLY: 2 old
    expect(new ClockStepStore(db).flaggedCount()).toBe(7);
    expect(suspectReadings(db, A, UPGRADE - HOUR, UPGRADE + HOUR)).toEqual({ count: 5, firstMs: UPGRADE - 20_000, lastMs: UPGRADE + 20_000 });
    expect(readings.between(A, UPGRADE - 30_000, UPGRADE + 30_000).map((r) => r.clockSuspect)).toEqual([false, true, true, true, true, true, false]);
    // A reading stored later inside the window is flagged as it is stored.
    readings.insert(sample(B, UPGRADE + 5_000, 1));
    expect(readings.latest(B)?.clockSuspect).toBe(true);
  });

  it('purges both tables past the retention, keeping what a session is priced from', () => {
    const db = upgraded();
    const readings = new ReadingsStore(db);
    for (let t = UPGRADE; t < UPGRADE + 2 * HOUR; t += 10_000) readings.insert(sample(B, t, 1));
    db.prepare(
      `INSERT INTO sessions (cpo_transaction_id, cdr_id, market_area, status, start_ms, end_ms, resource_id, content_sha256, created_at_ms, updated_at_ms, last_updated_ms)
       VALUES ('S1', 'C1', 'NL', 'completed', ?, ?, ?, 'x', 0, 0, 0), ('S2', 'C2', 'NL', 'completed', ?, ?, ?, 'x', 0, 0, 0)`,
    ).run(T0 + 600_000, T0 + 900_000, A, UPGRADE + 600_000, UPGRADE + 900_000, B);
    db.prepare('DELETE FROM outbox').run();
    const cutoff = UPGRADE + HOUR;
    const removed = readings.purgeBefore(cutoff, 0);
    // Kept: A's old readings in [T0+600 s, T0+900 s] (31), B's new ones in its session (31), and B's last hour (360).
    expect(readings.count()).toBe(31 + 31 + 360);
    expect(removed).toBe(720 + 720 - 31 - 31 - 360);
    expect(readings.between(A, 0, cutoff).map((r) => r.sampledAtMs)).toEqual(Array.from({ length: 31 }, (_, i) => T0 + 600_000 + i * 10_000));
    expect(readings.between(OLD_ONLY, 0, cutoff)).toEqual([]);
    expect(readings.between(B, UPGRADE + 600_000, UPGRADE + 900_000)).toHaveLength(31);
    // Hours before the oldest reading left are forgotten; later ones stay.
    expect(db.prepare('SELECT min(hour) FROM meter_reading_hours').pluck().get()).toBe(Math.floor((UPGRADE + 600_000) / HOUR));
  });
});

describe('a sample re-stamped with a fraction of a millisecond (held while the clock was not trusted)', () => {
  it('is stored at its whole millisecond and its measurement finds it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-fraction-'));
    dirs.push(dir);
    const db = openDatabase(join(dir, 'metergate.db'));
    dbs.push(db);
    const readings = new ReadingsStore(db);
    const outbox = new Outbox(db, { maxRows: 1000, maxBytes: 1e9 });
    const at = UPGRADE + 1234.567;
    const metricsJson = JSON.stringify([{ name: 'active_energy_import', value: 5, unit: 'Wh' }]);
    db.transaction(() => {
      expect(readings.insert({ resourceId: A, sampledAtMs: at, metrics: [{ name: 'active_energy_import', value: 5, unit: 'Wh' }] })).toBe(true);
      outbox.enqueue({ topic: 't', payload: `{"metrics":${metricsJson}}`, qos: 1, retain: false, stampedAtMs: at, reading: { resourceId: A, metricsJson } }, 0);
    })();
    expect(readings.between(A, UPGRADE, UPGRADE + 2000).map((r) => r.sampledAtMs)).toEqual([UPGRADE + 1234]);
    expect(outbox.page(0, 10).map((r) => r.payload)).toEqual([`{"metrics":${metricsJson}}`]);
    // The view's insert does the same.
    db.prepare("INSERT INTO readings (resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json) VALUES (?, ?, 1, NULL, '[]')").run(B, at);
    expect(db.prepare('SELECT sampled_at_ms FROM readings WHERE resource_id = ?').pluck().all(B)).toEqual([UPGRADE + 1234]);
  });
});
