// Benchmark: what the table layout and SQLite settings cost in storage writes per reading,
// on plain SQLite (no metergate code), to choose before changing the store (docs/uplink.md,
// Storage wear). Each variant runs in its own process on a fresh file: 20 warm-up ticks,
// then `ticks` ticks of `meters` SDM630-sized readings (11 values), one synchronous=FULL
// transaction per tick writing each reading and its outbox row, and (the steady state of a
// connected gateway) the acknowledged outbox rows deleted after each tick in a NORMAL
// transaction of their own, or ("piggy") inside the next tick's transaction. Bytes from
// /proc/self/io write_bytes (page-cache pages sent to storage), checkpoints included.
//   npx tsx scripts/bench/storage-layouts.ts [ticks=400] [meters=1,10]
// Variant keys: page (page_size), compact (reading keeps only its values), ref (outbox row
// without the payload's metrics), plainIds (outbox without AUTOINCREMENT), piggy (deletes
// in the next tick), timeRowid (readings as a rowid table keyed by time*1024+meter: appends
// at the right edge instead of one leaf per meter), ckpt (wal_autocheckpoint).
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Variant {
  page?: number;
  compact?: boolean;
  ref?: boolean;
  plainIds?: boolean;
  piggy?: boolean;
  timeRowid?: boolean;
  ckpt?: number;
}

if (process.argv[2] === 'child') {
  const v = JSON.parse(process.argv[3]) as Variant;
  const [meters, ticks] = [Number(process.argv[4]), Number(process.argv[5])];
  const dir = mkdtempSync(join(tmpdir(), 'mg-bench-layout-'));
  const db = new Database(join(dir, 't.db'));
  db.pragma(`page_size = ${v.page ?? 4096}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  if (v.ckpt !== undefined) db.pragma(`wal_autocheckpoint = ${v.ckpt}`);
  db.exec(
    (v.timeRowid
      ? 'CREATE TABLE readings (id INTEGER PRIMARY KEY, resource_id TEXT NOT NULL, sampled_at_ms INTEGER NOT NULL, energy_import_wh REAL, power_w REAL, metrics_json TEXT NOT NULL, clock_suspect INTEGER NOT NULL DEFAULT 0);'
      : 'CREATE TABLE readings (resource_id TEXT NOT NULL, sampled_at_ms INTEGER NOT NULL, energy_import_wh REAL, power_w REAL, metrics_json TEXT NOT NULL, clock_suspect INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (resource_id, sampled_at_ms)) WITHOUT ROWID;') +
      `CREATE INDEX readings_clock_suspect ON readings (resource_id, sampled_at_ms) WHERE clock_suspect = 1;
       CREATE TABLE outbox (id INTEGER PRIMARY KEY ${v.plainIds ? '' : 'AUTOINCREMENT'}, message_id TEXT NOT NULL, topic TEXT NOT NULL, payload TEXT NOT NULL, bytes INTEGER NOT NULL,
         qos INTEGER NOT NULL DEFAULT 1, retain INTEGER NOT NULL DEFAULT 0, stamped_at_ms INTEGER NOT NULL, created_at_ms INTEGER NOT NULL);`,
  );
  const names = ['voltage_l1', 'voltage_l2', 'voltage_l3', 'current_l1', 'current_l2', 'current_l3', 'power_l1', 'power_l2', 'power_l3', 'total_active_power', 'active_energy_import'];
  const units = ['V', 'V', 'V', 'A', 'A', 'A', 'W', 'W', 'W', 'W', 'Wh'];
  const resources = Array.from({ length: meters }, (_, i) => `0b7e3f4c-1d2a-4e5f-8a9b-${String(i).padStart(12, '0')}`);
  const insertReading = v.timeRowid
    ? db.prepare('INSERT OR IGNORE INTO readings (id, resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json) VALUES (?, ?, ?, ?, ?, ?)')
    : db.prepare('INSERT OR IGNORE INTO readings (resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json) VALUES (?, ?, ?, ?, ?)');
  const insertOutbox = db.prepare('INSERT INTO outbox (message_id, topic, payload, bytes, stamped_at_ms, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)');
  const deleteRange = db.prepare('DELETE FROM outbox WHERE id BETWEEN ? AND ?');
  const t0 = Date.now() - 1e9;
  let slot = 0;
  let acked: [number, number] | null = null;
  const tick = () => {
    const at = t0 + slot++ * 10_000;
    let first = 0;
    let last = 0;
    db.pragma('synchronous = FULL');
    db.transaction(() => {
      if (v.piggy && acked) deleteRange.run(...acked);
      resources.forEach((r, k) => {
        const metrics = names.map((name, j) => ({ name, value: Number((230 + slot * 0.37 + k + j * 11.3).toFixed(3)), unit: units[j] }));
        const stored = v.compact ? JSON.stringify([1, ...metrics.map((m) => m.value)]) : JSON.stringify(metrics);
        const row = [r, at + k, metrics[10].value, metrics[9].value, stored] as const;
        if (v.timeRowid) insertReading.run((at + k) * 1024 + k, ...row);
        else insertReading.run(...row);
        const message = { message_type: 'measurement', resource_id: r, organization_id: '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11', data: { sampled_at: new Date(at + k).toISOString(), metrics: v.ref ? [] : metrics } };
        const payload = JSON.stringify(message);
        last = Number(insertOutbox.run(randomUUID(), `svc/resources/${r}/measurements`, payload, payload.length + 50, at + k, Date.now()).lastInsertRowid);
        first ||= last;
      });
    })();
    db.pragma('synchronous = NORMAL');
    if (v.piggy) acked = [first, last];
    else db.transaction(() => deleteRange.run(first, last))();
  };
  const writeBytes = () => Number(/^write_bytes: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
  for (let i = 0; i < 20; i++) tick();
  const before = writeBytes();
  for (let i = 0; i < ticks; i++) tick();
  const after = writeBytes();
  db.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(JSON.stringify({ perReading: (after - before) / (ticks * meters) }));
  process.exit(0);
}

const TICKS = Number(process.argv[2] ?? 400);
const METERS = (process.argv[3] ?? '1,10').split(',').map(Number);
const self = fileURLToPath(import.meta.url);
const variants: Array<[string, Variant]> = [
  ['as before (4 KiB pages, whole payload, AUTOINCREMENT)', {}],
  ['+ deletes in the next tick', { piggy: true }],
  ['+ outbox rows by reference, plain ids', { piggy: true, ref: true, plainIds: true }],
  ['+ compact readings', { piggy: true, ref: true, plainIds: true, compact: true }],
  ['1 KiB pages, compact readings, plain ids', { page: 1024, compact: true, plainIds: true }],
  ['  + outbox by reference (as shipped)', { page: 1024, compact: true, plainIds: true, ref: true }],
  ['  + deletes in the next tick', { page: 1024, compact: true, plainIds: true, ref: true, piggy: true }],
  ['  + wal_autocheckpoint 10000', { page: 1024, compact: true, plainIds: true, ref: true, piggy: true, ckpt: 10000 }],
  ['  + readings in time order (rowid)', { page: 1024, compact: true, plainIds: true, ref: true, piggy: true, timeRowid: true }],
  ['512 B pages, all of the above', { page: 512, compact: true, plainIds: true, ref: true, piggy: true, timeRowid: true }],
];
console.log(`${TICKS} ticks, SDM630-sized readings, one FULL commit per tick, deliveries deleted; bytes written per reading (write_bytes), on ${tmpdir()}`);
console.log(`${'variant'.padEnd(56)} ${METERS.map((m) => `${m} meter(s)`.padStart(12)).join(' ')}`);
for (const [name, v] of variants) {
  const cells = METERS.map((m) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', self, 'child', JSON.stringify(v), String(m), String(TICKS)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    return (JSON.parse(r.stdout.trim().split('\n').pop()!) as { perReading: number }).perReading.toFixed(0).padStart(12);
  });
  console.log(`${name.padEnd(56)} ${cells.join(' ')}`);
}
