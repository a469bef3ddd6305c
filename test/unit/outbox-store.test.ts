import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { durableTransaction, openDatabase } from '../../src/store/db.js';
import { Outbox } from '../../src/store/outbox.js';
import { ReadingsStore } from '../../src/store/readings.js';

const msg = (i: number, payload = `{"n":${i}}`) => ({ topic: 't/x', payload, qos: 1 as const, retain: false, stampedAtMs: 1000 + i });

describe('outbox (real SQLite)', () => {
  it('defers acknowledged deletes to the next commit: counted out at once, never paged again, deleted with that commit or not at all', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-outbox-defer-'));
    try {
      const path = join(dir, 'metergate.db');
      const db = openDatabase(path);
      const outbox = new Outbox(db, { maxRows: 1000, maxBytes: 1e9 });
      const rows = Array.from({ length: 5 }, (_, i) => outbox.enqueue(msg(i), 0).id).map((id) => outbox.page(id - 1, 1)[0]);
      outbox.deferAcked(rows.slice(0, 3).map((r) => ({ id: r.id, bytes: r.bytes })));
      expect(outbox.depth).toBe(2);
      expect(outbox.stats().bytes).toBe(rows[3].bytes + rows[4].bytes);
      expect(outbox.page(0, 10).map((r) => r.id)).toEqual([rows[3].id, rows[4].id]);
      expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(5); // still stored: no commit of their own

      // A commit that rolls back keeps them waiting (Outbox.restore, as the recorder does).
      const mark = outbox.mark();
      expect(() =>
        durableTransaction(db, () => {
          expect(outbox.deleteDeferred()).toBe(3);
          throw new Error('disk full');
        }),
      ).toThrow('disk full');
      outbox.restore(mark);
      expect(outbox.deferredCount).toBe(3);
      expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(5);

      // Another process opening the file now (after a kill -9) finds them: sent again, never lost.
      const reopened = new Outbox(openDatabase(path), { maxRows: 1000, maxBytes: 1e9 });
      expect(reopened.depth).toBe(5);

      // The next commit takes them along.
      durableTransaction(db, () => outbox.deleteDeferred());
      expect(outbox.deferredCount).toBe(0);
      expect(db.prepare('SELECT id FROM outbox ORDER BY id').pluck().all()).toEqual([rows[3].id, rows[4].id]);
      expect(outbox.depth).toBe(2);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets the bound drop a deferred row without counting it twice', () => {
    const db = openDatabase(':memory:');
    const outbox = new Outbox(db, { maxRows: 3, maxBytes: 1e9 });
    const rows = Array.from({ length: 3 }, (_, i) => outbox.enqueue(msg(i), 0).id).map((id) => outbox.page(id - 1, 1)[0]);
    outbox.deferAcked([{ id: rows[0].id, bytes: rows[0].bytes }]);
    expect(outbox.depth).toBe(2);
    outbox.enqueue(msg(3), 0);
    outbox.enqueue(msg(4), 0); // over the bound: the oldest waiting row goes (the deferred one with it)
    expect(outbox.depth).toBe(3);
    expect(outbox.stats().droppedTotal).toBe(1);
    expect(outbox.deleteDeferred()).toBe(0); // already gone
    expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(3);
  });

  it('pages oldest first and deletes only acknowledged rows', () => {
    const db = openDatabase(':memory:');
    const outbox = new Outbox(db, { maxRows: 1000, maxBytes: 1e9 });
    const ids = Array.from({ length: 10 }, (_, i) => outbox.enqueue(msg(i), 5000).id);
    expect(outbox.depth).toBe(10);
    const page = outbox.page(0, 4);
    expect(page.map((r) => r.id)).toEqual(ids.slice(0, 4));
    expect(page[0]).toMatchObject({ topic: 't/x', payload: '{"n":0}', qos: 1, retain: false, stampedAtMs: 1000, createdAtMs: 5000 });
    expect(outbox.page(ids[3], 100, ids[5]).map((r) => r.id)).toEqual([ids[4], ids[5]]);
    expect(outbox.deleteAcked(page.map((r) => ({ id: r.id, bytes: r.bytes })))).toBe(4);
    expect(outbox.deleteAcked([{ id: page[0].id, bytes: page[0].bytes }])).toBe(0); // a second PUBACK changes nothing
    expect(outbox.depth).toBe(6);
    expect(outbox.stats().oldestCreatedAtMs).toBe(5000);
  });

  it('deletes acknowledged ids as ranges without touching a row between them that is still in flight', () => {
    const db = openDatabase(':memory:');
    const outbox = new Outbox(db, { maxRows: 1000, maxBytes: 1e9 });
    const rows = Array.from({ length: 6 }, (_, i) => outbox.enqueue(msg(i), 0).id).map((id) => outbox.page(id - 1, 1)[0]);
    const acked = [rows[0], rows[1], rows[3], rows[5], rows[4]].map((r) => ({ id: r.id, bytes: r.bytes }));
    expect(outbox.deleteAcked(acked)).toBe(5);
    expect(outbox.page(0, 10).map((r) => r.id)).toEqual([rows[2].id]);
    expect(outbox.depth).toBe(1);
    expect(outbox.stats().bytes).toBe(rows[2].bytes);
  });

  it('counts rows and bytes exactly when a run holds a row already gone or an id acknowledged twice', () => {
    const db = openDatabase(':memory:');
    const outbox = new Outbox(db, { maxRows: 1000, maxBytes: 1e9 });
    const rows = Array.from({ length: 6 }, (_, i) => outbox.enqueue(msg(i, 'y'.repeat(i)), 0).id).map((id) => outbox.page(id - 1, 1)[0]);
    const ack = (...rs: typeof rows) => outbox.deleteAcked(rs.map((r) => ({ id: r.id, bytes: r.bytes })));
    expect(ack(rows[1])).toBe(1); // acknowledged on an earlier connection
    expect(ack(rows[0], rows[1], rows[2], rows[3], rows[3])).toBe(3); // row 1 gone, row 3 twice
    expect(outbox.depth).toBe(2);
    expect(outbox.stats().bytes).toBe(rows[4].bytes + rows[5].bytes);
    expect(ack(rows[4], rows[5], rows[5])).toBe(2); // duplicate within a run, nothing gone
    expect(outbox.depth).toBe(0);
    expect(outbox.stats().bytes).toBe(0);
  });

  it('drops the oldest rows when a bound is hit, and counts them', () => {
    const db = openDatabase(':memory:');
    const outbox = new Outbox(db, { maxRows: 100, maxBytes: 1e9 });
    let dropped = 0;
    for (let i = 0; i < 100; i++) dropped += outbox.enqueue(msg(i), 0).dropped;
    expect(outbox.stats()).toMatchObject({ depth: 100, full: false }); // at the bound, nothing lost yet
    for (let i = 100; i < 150; i++) dropped += outbox.enqueue(msg(i), 0).dropped;
    expect(dropped).toBe(50);
    expect(outbox.stats().full).toBe(true); // dropping: what /healthz reports as the broker down
    expect(outbox.depth).toBe(100);
    expect(outbox.page(0, 1)[0].payload).toBe('{"n":50}');
    expect(outbox.stats().droppedTotal).toBe(50);
    const oldest = outbox.page(0, 1)[0];
    outbox.deleteAcked([{ id: oldest.id, bytes: oldest.bytes }]);
    expect(outbox.stats().full).toBe(false); // a PUBACK made room

    const small = new Outbox(openDatabase(':memory:'), { maxRows: 1000, maxBytes: 10 * 103 });
    for (let i = 0; i < 20; i++) small.enqueue(msg(i, 'x'.repeat(100)), 0);
    expect(small.depth).toBe(10);
    expect(small.stats().bytes).toBe(10 * 103);
  });

  it('keeps the row/byte totals across a reopen, and ids never come back after it empties', () => {
    const db = openDatabase(':memory:');
    const outbox = new Outbox(db, { maxRows: 1000, maxBytes: 1e9 });
    const a = outbox.enqueue(msg(1), 0);
    outbox.deleteAcked([{ id: a.id, bytes: outbox.page(0, 1)[0].bytes }]);
    const b = outbox.enqueue(msg(2), 0);
    expect(b.id).toBeGreaterThan(a.id);
    const again = new Outbox(db, { maxRows: 1000, maxBytes: 1e9 });
    expect(again.depth).toBe(1);
    expect(again.stats().bytes).toBe(outbox.stats().bytes);
  });
});

describe('readings store', () => {
  it('returns cumulative energy with timestamps between two times, and purges by age', () => {
    const db = openDatabase(':memory:');
    const readings = new ReadingsStore(db);
    const R = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
    for (let i = 0; i < 10; i++) {
      readings.insert({ resourceId: R, sampledAtMs: i * 10_000, metrics: [{ name: 'active_energy_import', value: 1000 + i, unit: 'Wh' }, { name: 'total_active_power', value: 360, unit: 'W' }] });
    }
    expect(readings.insert({ resourceId: R, sampledAtMs: 0, metrics: [] })).toBe(false); // same instant twice
    const got = readings.between(R, 20_000, 50_000);
    expect(got.map((r) => [r.sampledAtMs, r.energyImportWh])).toEqual([
      [20_000, 1002],
      [30_000, 1003],
      [40_000, 1004],
      [50_000, 1005],
    ]);
    expect(got[0].powerW).toBe(360);
    expect(readings.latest(R)?.sampledAtMs).toBe(90_000);
    expect(readings.purgeBefore(50_000)).toBe(5);
    expect(readings.count()).toBe(5);
  });
});
