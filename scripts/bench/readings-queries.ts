// Benchmark: per-meter reads of the time-ordered readings (migration 200) on a long history,
// against the same reads of the same rows in the layout before it (readings_by_meter, keyed
// by resource and time), in one real SQLite file on the disk of the temporary directory.
//   npx tsx scripts/bench/readings-queries.ts [days=365] [meters=10] [page=1024]
// Rows: every meter every 10 s for `days` (SDM630-sized values), written straight into both
// tables. The last meter stops reporting energy 30 days before the end (power only), so "the
// reading before" has to look back a month. Each query runs 20 times; the median is printed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../../src/store/db.js';
import { METER_SLOTS, ReadingsStore } from '../../src/store/readings.js';
import { SessionStore } from '../../src/store/sessions.js';
import { suspectReadings } from '../../src/store/clock-steps.js';

const DAYS = Number(process.argv[2] ?? 365);
const METERS = Number(process.argv[3] ?? 10);
const PAGE = Number(process.argv[4] ?? 1024);
const STEP_MS = 10_000;
const END = Date.parse('2026-11-01T00:00:00Z');
const START = END - DAYS * 86_400_000;
const ids = Array.from({ length: METERS }, (_, i) => `0b7e3f4c-1d2a-4e5f-8a9b-${String(i).padStart(12, '0')}`);
const dir = mkdtempSync(join(tmpdir(), 'mg-bench-queries-'));
const db = openDatabase(join(dir, 'metergate.db'), undefined, PAGE);
const values = JSON.stringify([1, 230.1, 230.2, 230.3, 5.1, 5.2, 5.3, 1100.1, 1100.2, 1100.3, 3300.6]);
const quiet = ids.length - 1;

const t0 = performance.now();
const insNew = db.prepare('INSERT INTO meter_readings (id, meter, energy_import_wh, power_w, metrics_json) VALUES (?, ?, ?, 3300.6, ?)');
const insHour = db.prepare('INSERT INTO meter_reading_hours (meter, hour, with_energy) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET with_energy = 1 WHERE excluded.with_energy = 1 AND with_energy = 0');
// The layout before migration 200 in a table of its own (readings_by_meter stays empty, as on a new gateway).
db.exec(`CREATE TABLE old_readings (resource_id TEXT NOT NULL, sampled_at_ms INTEGER NOT NULL, energy_import_wh REAL, power_w REAL, metrics_json TEXT NOT NULL,
  clock_suspect INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (resource_id, sampled_at_ms)) WITHOUT ROWID;
  CREATE INDEX old_readings_clock_suspect ON old_readings (resource_id, sampled_at_ms) WHERE clock_suspect = 1;`);
const insOld = db.prepare('INSERT INTO old_readings (resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json) VALUES (?, ?, ?, 3300.6, ?)');
ids.forEach((r, m) => db.prepare('INSERT INTO reading_meters (id, resource_id) VALUES (?, ?)').run(m, r));
const names = ['voltage_l1', 'voltage_l2', 'voltage_l3', 'current_l1', 'current_l2', 'current_l3', 'power_l1', 'power_l2', 'power_l3', 'total_active_power'];
db.prepare('INSERT INTO metric_sets (id, names_units) VALUES (1, ?)').run(JSON.stringify(names.map((n) => [n, n.startsWith('voltage') ? 'V' : n.startsWith('current') ? 'A' : 'W'])));
const energyAt = (m: number, t: number) => (m === quiet && t > END - 30 * 86_400_000 ? null : (t - START) / 1000);
for (let day = START; day < END; day += 86_400_000) {
  db.transaction(() => {
    for (let t = day; t < day + 86_400_000; t += STEP_MS) {
      for (let m = 0; m < METERS; m++) insNew.run(t * METER_SLOTS + m, m, energyAt(m, t), values);
      if (t % 3_600_000 === 0) for (let m = 0; m < METERS; m++) insHour.run(m, t / 3_600_000, energyAt(m, t) === null ? 0 : 1);
    }
  })();
}
// The old layout, filled meter by meter (its rows in key order, as a long-running table ends up).
for (const [m, r] of ids.entries()) {
  for (let day = START; day < END; day += 30 * 86_400_000) {
    db.transaction(() => {
      for (let t = day; t < Math.min(END, day + 30 * 86_400_000); t += STEP_MS) insOld.run(r, t, energyAt(m, t), values);
    })();
  }
}
const rows = (db.prepare('SELECT count(*) FROM meter_readings').pluck().get() as number).toLocaleString('en');
console.log(`${rows} readings per layout (${METERS} meters x ${DAYS} days at 10 s), ${PAGE} B pages, filled in ${((performance.now() - t0) / 1000).toFixed(0)} s, on ${tmpdir()}`);

const median = (f: () => unknown): number => {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const a = performance.now();
    f();
    times.push(performance.now() - a);
  }
  return times.sort((a, b) => a - b)[10];
};
const readings = new ReadingsStore(db);
const sessions = new SessionStore(db);
const old = {
  before: db.prepare('SELECT sampled_at_ms, energy_import_wh FROM old_readings WHERE resource_id = ? AND sampled_at_ms < ? AND energy_import_wh IS NOT NULL ORDER BY sampled_at_ms DESC LIMIT 1'),
  between: db.prepare('SELECT sampled_at_ms, energy_import_wh FROM old_readings WHERE resource_id = ? AND sampled_at_ms >= ? AND sampled_at_ms <= ? AND energy_import_wh IS NOT NULL ORDER BY sampled_at_ms'),
  after: db.prepare('SELECT sampled_at_ms, energy_import_wh FROM old_readings WHERE resource_id = ? AND sampled_at_ms > ? AND energy_import_wh IS NOT NULL ORDER BY sampled_at_ms LIMIT 1'),
  latest: db.prepare('SELECT * FROM old_readings WHERE resource_id = ? ORDER BY sampled_at_ms DESC LIMIT 1'),
  rangeAll: db.prepare('SELECT * FROM old_readings WHERE resource_id = ? AND sampled_at_ms >= ? AND sampled_at_ms <= ? ORDER BY sampled_at_ms'),
  suspect: db.prepare('SELECT COUNT(*) AS n, MIN(sampled_at_ms) AS first, MAX(sampled_at_ms) AS last FROM old_readings WHERE resource_id = ? AND sampled_at_ms BETWEEN ? AND ? AND clock_suspect = 1'),
};
const dayNew = db.prepare(`SELECT m.resource_id, r.id >> 10, r.energy_import_wh, r.power_w, r.metrics_json, r.clock_suspect FROM meter_readings r JOIN reading_meters m ON m.id = r.meter
  WHERE r.id BETWEEN ? * ${METER_SLOTS} AND ? * ${METER_SLOTS} + ${METER_SLOTS - 1} AND r.meter = ? ORDER BY r.id`);
const sessionFrom = END - 10 * 3_600_000;
const sessionTo = END - 2 * 3_600_000;
const cases: Array<[string, () => unknown, () => unknown]> = [
  ['readings around an 8 h session (pricing)', () => sessions.localMeterReadingsAround(ids[0], sessionFrom, sessionTo), () => [old.before.get(ids[0], sessionFrom), old.between.all(ids[0], sessionFrom, sessionTo), old.after.get(ids[0], sessionTo)]],
  ['same, meter without energy for 30 days', () => sessions.localMeterReadingsAround(ids[quiet], sessionFrom, sessionTo), () => [old.before.get(ids[quiet], sessionFrom), old.between.all(ids[quiet], sessionFrom, sessionTo), old.after.get(ids[quiet], sessionTo)]],
  // Rows as SQLite gives them on both sides (ReadingsStore.between also decodes each row's metrics).
  ['a day of one meter (rows)', () => dayNew.all(END - 86_400_000, END, 0), () => old.rangeAll.all(ids[0], END - 86_400_000, END)],
  ['latest reading of a meter', () => readings.latest(ids[3]), () => old.latest.get(ids[3])],
  ['clock-suspect readings of a session', () => suspectReadings(db, ids[0], sessionFrom, sessionTo), () => old.suspect.get(ids[0], sessionFrom, sessionTo)],
];
console.log('query | before migration 200 (by meter) -> time-ordered, median of 20 (ratio)');
cases.forEach(([name, now_, before]) => {
  const stmtBefore = median(before);
  const now = median(now_);
  console.log(`${name.padEnd(44)} | ${stmtBefore.toFixed(3).padStart(8)} ms -> ${now.toFixed(3).padStart(8)} ms (${(now / stmtBefore).toFixed(1)}x)`);
});
db.close();
rmSync(dir, { recursive: true, force: true });
