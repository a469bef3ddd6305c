// Held messages (outbox_held) on a real SQLite file: moved out of the sending order and
// back with their own ids, counted exactly, dropped only by the outbox bound, oldest first
// over both tables, and kept across a reopen.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { Outbox } from '../../src/store/outbox.js';
import { readHeldGroups, requestRetry } from '../../src/store/outbox-held.js';
import { PERMANENT_REFUSALS, refusalKind } from '../../src/uplink/refusals.js';

const msg = (topic: string, i: number) => ({ topic, payload: `{"n":${i}}`, qos: 1 as const, retain: false, stampedAtMs: 1000 + i });
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dbFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mg-held-'));
  dirs.push(dir);
  return join(dir, 'metergate.db');
}

describe('held messages (real SQLite)', () => {
  it('holds refused rows, probes the oldest per topic with its own id, and releases the topic in order', () => {
    const path = dbFile();
    const db = openDatabase(path);
    const outbox = new Outbox(db, { maxRows: 1000, maxBytes: 1e9 });
    for (let i = 0; i < 6; i++) outbox.enqueue(msg(i % 2 === 0 ? 'a' : 'b', i), 0);
    const rows = outbox.page(0, 10);
    const aRows = rows.filter((r) => r.topic === 'a');
    expect(outbox.hold(aRows.map((row) => ({ row, reason: 'refused', reasonCode: 0x87 })), 7000)).toBe(3);
    expect(outbox.depth).toBe(3);
    expect(outbox.heldCount).toBe(3);
    expect(outbox.page(0, 10).map((r) => r.topic)).toEqual(['b', 'b', 'b']);
    expect(outbox.heldGroups()).toEqual([{ reason: 'refused', topic: 'a', reasonCode: 0x87, count: 3, sinceMs: 7000 }]);
    expect(outbox.refusedTopics()).toEqual([{ topic: 'a', reasonCode: 0x87 }]);

    // The probe: a copy of the oldest, with its own (lowest) id; idempotent while it is out.
    const probeId = outbox.probe('a')!;
    expect(probeId).toBe(aRows[0].id);
    expect(outbox.probe('a')).toBe(probeId);
    expect(outbox.page(0, 10).map((r) => r.id)).toEqual([probeId, ...rows.filter((r) => r.topic === 'b').map((r) => r.id)]);
    expect(outbox.depth).toBe(4);

    // A restart in between: the copy is found in the outbox and held again (a no-op in outbox_held).
    db.close();
    const db2 = openDatabase(path);
    const again = new Outbox(db2, { maxRows: 1000, maxBytes: 1e9 });
    expect(again.depth).toBe(4);
    expect(again.heldCount).toBe(3);
    const copy = again.page(0, 1)[0];
    expect(again.hold([{ row: copy, reason: 'refused', reasonCode: 0x87 }], 8000)).toBe(1);
    expect(again.depth).toBe(3);
    expect(again.heldCount).toBe(3);

    // The broker takes the probe: acknowledged, then the rest of the topic goes back, oldest first.
    expect(again.probe('a')).toBe(probeId);
    expect(again.deleteAcked([{ id: probeId, bytes: copy.bytes }])).toBe(1);
    expect(again.releaseTopic('a', probeId)).toEqual({ released: 2, maxId: aRows[2].id });
    expect(again.heldCount).toBe(0);
    expect(again.page(0, 10).map((r) => r.id)).toEqual(rows.filter((r) => r.id !== probeId).map((r) => r.id));
    expect(again.depth).toBe(5);
    expect(again.stats().bytes).toBe(rows.filter((r) => r.id !== probeId).reduce((n, r) => n + r.bytes, 0));
    db2.close();
  });

  it('counts held rows in the bound and drops the oldest over both tables, counted', () => {
    const db = openDatabase(':memory:');
    const outbox = new Outbox(db, { maxRows: 5, maxBytes: 1e9 });
    for (let i = 0; i < 4; i++) outbox.enqueue(msg('a', i), 0);
    outbox.hold(outbox.page(0, 2).map((row) => ({ row, reason: 'refused', reasonCode: 0x87 })), 1);
    outbox.enqueue(msg('b', 4), 0);
    expect(outbox.depth + outbox.heldCount).toBe(5);
    const { dropped } = outbox.enqueue(msg('b', 5), 0);
    expect(dropped).toBe(1);
    expect(outbox.heldCount).toBe(1); // the oldest row was a held one
    expect(outbox.stats().droppedTotal).toBe(1);
    outbox.enqueue(msg('b', 6), 0);
    outbox.enqueue(msg('b', 7), 0);
    expect(outbox.heldCount).toBe(0);
    expect(outbox.depth).toBe(5);
    expect(outbox.page(0, 10).map((r) => r.payload)).toEqual([3, 4, 5, 6, 7].map((i) => `{"n":${i}}`));
  });

  it('releases messages quarantined for their timestamp only when asked, and passes retry requests once', () => {
    const db = openDatabase(':memory:');
    const outbox = new Outbox(db, { maxRows: 100, maxBytes: 1e9 });
    for (let i = 0; i < 3; i++) outbox.enqueue(msg('c', i), 0);
    outbox.hold(outbox.page(0, 10).map((row) => ({ row, reason: 'clock', reasonCode: null })), 5);
    expect(readHeldGroups(db)).toEqual([{ reason: 'clock', topic: 'c', reasonCode: null, count: 3, sinceMs: 5 }]);
    expect(outbox.refusedTopics()).toEqual([]);
    expect(outbox.probe('c')).toBeNull(); // not a refused topic
    expect(outbox.takeRetryRequest()).toBeNull();
    requestRetry(db, 10, false);
    requestRetry(db, 11, true);
    expect(outbox.takeRetryRequest()).toEqual({ includeClock: true });
    expect(outbox.takeRetryRequest()).toBeNull();
    expect(outbox.releaseClockHeld()).toBe(3);
    expect(outbox.depth).toBe(3);
    expect(outbox.heldCount).toBe(0);
  });

  it('classifies only 0x87, 0x90 and 0x99 as permanent', () => {
    expect([...PERMANENT_REFUSALS].sort()).toEqual([0x87, 0x90, 0x99]);
    for (const code of [0x80, 0x83, 0x91, 0x97, 0xa2]) expect(refusalKind(code)).toBe('transient');
    for (const code of [0x87, 0x90, 0x99]) expect(refusalKind(code)).toBe('permanent');
  });
});
