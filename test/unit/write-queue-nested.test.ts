// The store write queue (store/write-queue.ts) on a real SQLite file, when a write made from
// inside the unit being run (a nested write: an event that unit emitted) is refused by the
// store and the queue is at its bound. Another connection to the same file takes the write
// lock half-way through the running unit, as another process would: the running unit has
// committed its own row, the nested write gets SQLITE_BUSY and has to wait. The running
// unit is not the one to drop (it has run: its caller must hear that it did), and the
// nested write must settle: written once the lock is released, or dropped and told so.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { StoreWriteDropped, StoreWriteQueue } from '../../src/store/write-queue.js';
import { until } from '../helpers/wait.js';

type Settled<T> = { kind: 'resolved'; value: T } | { kind: 'rejected'; err: unknown } | { kind: 'pending' };

function track<T>(p: Promise<T>): { readonly state: Settled<T> } {
  const box: { state: Settled<T> } = { state: { kind: 'pending' } };
  p.then(
    (value) => (box.state = { kind: 'resolved', value }),
    (err: unknown) => (box.state = { kind: 'rejected', err }),
  );
  return box;
}


describe('store write queue: a nested write refused at the bound (real SQLite file)', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanups.splice(0).reverse()) c();
  });

  function setup(maxEntries: number): { db: Db; other: Database.Database; writes: StoreWriteQueue; rows: () => string[]; logs: () => string } {
    const dir = mkdtempSync(join(tmpdir(), 'mg-write-queue-'));
    const path = join(dir, 'metergate.db');
    const db = openDatabase(path);
    db.exec('CREATE TABLE notes (what TEXT NOT NULL)');
    // Another process's connection to the same file.
    const other = new Database(path);
    let out = '';
    const logger = createLogger('info', new Writable({ write: (chunk: Buffer, _enc, done) => ((out += chunk.toString()), done()) }));
    const writes = new StoreWriteQueue({ db, logger, clock: { now: () => Date.now() }, metrics: new Registry(), maxEntries, kind: 'ocpp' });
    cleanups.push(() => {
      writes.stop();
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const rows = () => (db.prepare('SELECT what FROM notes ORDER BY rowid').all() as Array<{ what: string }>).map((r) => r.what);
    return { db, other, writes, rows, logs: () => out };
  }

  it('keeps the running unit (it committed: resolved, not "dropped"), and writes the nested one when the lock is released', async () => {
    const { db, other, writes, rows } = setup(1);
    const insert = db.prepare('INSERT INTO notes (what) VALUES (?)');
    let nested: { readonly state: Settled<number> } | null = null;
    const outer = track(
      writes.run('outer', () => {
        insert.run('outer');
        // Another process takes the write lock now: the nested write is refused (SQLITE_BUSY after the busy timeout).
        other.exec('BEGIN IMMEDIATE');
        nested = track(writes.run('nested', () => Number(insert.run('nested').lastInsertRowid)));
        return 'outer done';
      }),
    );
    await until(() => outer.state.kind !== 'pending', 'the outer unit to settle');
    // The outer unit ran and committed its row: its caller is told so.
    expect(rows()).toEqual(['outer']);
    expect(outer.state).toEqual({ kind: 'resolved', value: 'outer done' });
    expect(nested!.state.kind).toBe('pending');
    expect(writes.view().pendingWrites).toBe(1);
    // The other process lets go: the retry (every second) writes the nested unit.
    other.exec('COMMIT');
    await until(() => nested!.state.kind !== 'pending', 'the nested write to settle');
    expect(nested!.state).toEqual({ kind: 'resolved', value: 2 });
    expect(rows()).toEqual(['outer', 'nested']);
    expect(writes.view()).toMatchObject({ writable: true, pendingWrites: 0, pendingDroppedTotal: 0 });
  });

  it('at the bound with others waiting, drops the oldest waiting write, never the running one, and every promise settles', async () => {
    const { db, other, writes, rows } = setup(2);
    const insert = db.prepare('INSERT INTO notes (what) VALUES (?)');
    // Two writes wait behind a lock another process holds (the bound: 2).
    other.exec('BEGIN IMMEDIATE');
    const nested: Array<{ readonly state: Settled<number> }> = [];
    const first = track(
      writes.run('first', () => {
        const id = Number(insert.run('first').lastInsertRowid);
        // Written at a retry; the other process takes the lock again at once, so both nested writes are refused.
        if (nested.length === 0) {
          other.exec('BEGIN IMMEDIATE');
          for (const what of ['nested-1', 'nested-2']) nested.push(track(writes.run(what, () => Number(insert.run(what).lastInsertRowid))));
        }
        return id;
      }),
    );
    const second = track(writes.run('second', () => Number(insert.run('second').lastInsertRowid)));
    await until(() => writes.view().pendingWrites === 2, 'both writes waiting behind the lock');
    expect(first.state.kind).toBe('pending');
    other.exec('COMMIT');
    await until(() => first.state.kind !== 'pending', '"first" to be written at the retry');
    // 'first' ran and committed. Waiting then: 'second' and the two nested writes, one over
    // the bound: 'second', the oldest waiting, is dropped, not the running 'first'.
    expect(first.state).toEqual({ kind: 'resolved', value: 1 });
    expect(second.state.kind === 'rejected' && second.state.err instanceof StoreWriteDropped).toBe(true);
    expect(nested.map((n) => n.state.kind)).toEqual(['pending', 'pending']);
    other.exec('COMMIT');
    await until(() => nested.every((n) => n.state.kind !== 'pending'), 'the nested writes to settle');
    expect(nested.map((n) => n.state)).toEqual([
      { kind: 'resolved', value: 2 },
      { kind: 'resolved', value: 3 },
    ]);
    expect(rows()).toEqual(['first', 'nested-1', 'nested-2']);
    expect(writes.view()).toMatchObject({ writable: true, pendingWrites: 0, pendingDroppedTotal: 1 });
  });
});
