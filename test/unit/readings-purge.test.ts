// The retention purge in steps (ReadingsStore.purgeStep, through meter_readings' time-ordered
// key, every meter at once; test/unit/readings-by-meter.test.ts has the table from before
// migration 200) removes exactly what the single statement it replaced removed: every reading
// before the cutoff except those inside a local-meter session or within the edge gap of
// one (completed, still active, overlapping, nested, straddling the cutoff), whatever the
// step size. Both run on real SQLite files with the same rows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/store/db.js';
import { ReadingsStore } from '../../src/store/readings.js';

const RESOURCES = ['0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b', '1c8f4a5d-2e3b-4f60-9bac-1d2e3f4a5b6c', '2d9a5b6e-3f4c-4a71-8cbd-2e3f4a5b6c7d'];
const T0 = Date.parse('2025-01-01T00:00:00Z');
const STEP_MS = 10_000;
const ROWS = 2000; // per resource: 20000 s
const CUTOFF = T0 + 15_000_000;
const MARGIN = 30_000;
// [resource index, start offset s, end offset s | null]
const SESSIONS: Array<[number, number, number | null]> = [
  [0, 100, 400], // completed, well before the cutoff
  [0, 300, 900], // overlaps the first
  [0, 500, 600], // nested in the second
  [0, 14_900, 15_200], // straddles the cutoff
  [1, 0, 50], // at the very start
  [1, 10_000, null], // still active: everything after its start is kept
  [2, 19_000, 19_500], // after the cutoff: keeps nothing extra
];

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function filled(): Db {
  const dir = mkdtempSync(join(tmpdir(), 'mg-purge-'));
  dirs.push(dir);
  const db = openDatabase(join(dir, 'metergate.db'));
  const insert = db.prepare('INSERT INTO readings (resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json) VALUES (?, ?, ?, NULL, ?)');
  const session = db.prepare(
    `INSERT INTO sessions (cpo_transaction_id, cdr_id, market_area, status, start_ms, end_ms, resource_id, content_sha256, created_at_ms, updated_at_ms, last_updated_ms)
     VALUES (?, ?, 'NL', ?, ?, ?, ?, 'x', 0, 0, 0)`,
  );
  db.transaction(() => {
    RESOURCES.forEach((r, k) => {
      // Some instants missing, as when a meter did not answer.
      for (let i = 0; i < ROWS; i++) if ((i * 7 + k) % 13 !== 0) insert.run(r, T0 + i * STEP_MS + k, 1000 + i, '[]');
    });
    SESSIONS.forEach(([k, from, to], i) => session.run(`TX-${i}`, `CDR-${i}`, to === null ? 'active' : 'completed', T0 + from * 1000, to === null ? null : T0 + to * 1000, RESOURCES[k]));
  })();
  return db;
}

const remaining = (db: Db) => db.prepare('SELECT resource_id, sampled_at_ms FROM readings ORDER BY resource_id, sampled_at_ms').raw().all();

describe('retention purge in steps', () => {
  const reference = filled();
  // The statement the steps replaced (a scan of the whole table), on the view of both tables
  // (its INSTEAD OF trigger deletes; SQLite counts no changes for a view, hence the counts).
  const countAll = (db: Db) => db.prepare('SELECT count(*) FROM readings').pluck().get() as number;
  const before = countAll(reference);
  reference
    .prepare(
      `DELETE FROM readings WHERE sampled_at_ms < @cutoff AND NOT EXISTS (
         SELECT 1 FROM sessions s WHERE s.resource_id = readings.resource_id
           AND readings.sampled_at_ms >= s.start_ms - @margin AND (s.end_ms IS NULL OR readings.sampled_at_ms <= s.end_ms + @margin))`,
    )
    .run({ cutoff: CUTOFF, margin: MARGIN });
  const removedByStatement = before - countAll(reference);
  const expected = remaining(reference);

  it.each([1, 7, 500, 100_000])('removes what the single statement removed, %i rows per step', (rows) => {
    const db = filled();
    const store = new ReadingsStore(db);
    let removed = 0;
    let steps = 0;
    for (let at = store.firstPurgeCursor(); at !== null; steps++) {
      const step = store.purgeStep(at, CUTOFF, MARGIN, rows);
      expect(step.deleted).toBeLessThanOrEqual(rows);
      removed += step.deleted;
      at = step.next;
    }
    expect(removed).toBe(removedByStatement);
    expect(remaining(db)).toEqual(expected);
    expect(steps).toBeGreaterThanOrEqual(Math.ceil(removedByStatement / rows));
    db.close();
  });

  it('has something to remove and something a session keeps before the cutoff', () => {
    expect(removedByStatement).toBeGreaterThan(3000);
    expect(expected.filter((row) => (row as [string, number])[1] < CUTOFF).length).toBeGreaterThan(100);
  });

  it('purgeBefore does all steps at once', () => {
    const db = filled();
    expect(new ReadingsStore(db).purgeBefore(CUTOFF, MARGIN)).toBe(removedByStatement);
    expect(remaining(db)).toEqual(expected);
    db.close();
  });
});
