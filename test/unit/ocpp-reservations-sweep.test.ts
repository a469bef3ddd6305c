// The reservations' expiry sweep (ocpp/reservations.ts sweepExpired) on a real SQLite store:
// what it ends and how (end_reason 'expired', at the expiry), and that a store it cannot
// read is logged and the sweep tried again, not a rejected timer promise. Beside it, the
// other end the charger decides on its own: a 2.0.1 station's ReservationStatusUpdate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import type { ChargerOperationsPort } from '../../src/ocpp/charger-operations.js';
import { ChargerReservations } from '../../src/ocpp/reservations.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { ReservationStore } from '../../src/store/ocpp-reservations.js';
import { StoreWriteQueue } from '../../src/store/write-queue.js';

const T0 = Date.parse('2026-11-27T08:00:00Z');
// The sweep sends nothing to a charger.
const noCalls: ChargerOperationsPort = {
  call: () => Promise.reject(new Error('the sweep sent an OCPP call')),
  call201: () => Promise.reject(new Error('the sweep sent an OCPP call')),
  configured: () => true,
  charger: () => undefined,
  ocppVersion: () => '1.6',
};

describe('reservation expiry sweep (real SQLite)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function setup(): { db: Db; store: ReservationStore; reservations: ChargerReservations; clock: { nowMs: number }; logs: () => string } {
    const dir = mkdtempSync(join(tmpdir(), 'mg-res-sweep-'));
    dirs.push(dir);
    const db = openDatabase(join(dir, 'metergate.db'));
    let out = '';
    const logger = createLogger('info', new Writable({ write: (chunk: Buffer, _enc, done) => ((out += chunk.toString()), done()) }));
    const clock = { nowMs: T0 };
    const writes = new StoreWriteQueue({ db, logger, clock: { now: () => clock.nowMs }, metrics: new Registry(), maxEntries: 100, kind: 'ocpp' });
    const store = new ReservationStore(db);
    return { db, store, reservations: new ChargerReservations(noCalls, store, writes, () => clock.nowMs, logger), clock, logs: () => out };
  }

  it('ends the reservations past their expiry as expired, at their expiry, and leaves the others open', async () => {
    const { store, reservations, clock } = setup();
    const make = (chargePointId: string, expiryAtMs: number) => store.create({ chargePointId, connectorId: 1, idTag: 'TAG-A', parentIdTag: null, expiryAtMs, requestedAtMs: T0 });
    const short = make('CP-1', T0 + 3_000);
    const other = make('CP-2', T0 + 5_000);
    const long = make('CP-1', T0 + 60_000);
    clock.nowMs = T0 + 10_000;
    await reservations.sweepExpired();
    expect(store.get(short)).toMatchObject({ endReason: 'expired', endedAtMs: T0 + 3_000 });
    expect(store.get(other)).toMatchObject({ endReason: 'expired', endedAtMs: T0 + 5_000 });
    expect(store.get(long)).toMatchObject({ endReason: null, endedAtMs: null });
    expect(store.allOpen().map((r) => r.reservationId)).toEqual([long]);
  });

  it('OCPP 2.0.1 ReservationStatusUpdate: Expired ends at the expiry (or now, the station\'s clock ahead), Removed now as released-by-charger; another charger\'s or an ended one is left as it is', () => {
    const { store, reservations, clock } = setup();
    const make = (chargePointId: string, expiryAtMs: number) => store.create({ chargePointId, connectorId: 0, idTag: 'TAG-A', parentIdTag: null, expiryAtMs, requestedAtMs: T0 });
    const lapsed = make('CS-1', T0 + 3_000);
    const early = make('CS-1', T0 + 60_000);
    const removed = make('CS-1', T0 + 60_000);
    const others = make('CS-2', T0 + 60_000);
    clock.nowMs = T0 + 10_000;
    reservations.stationEnded('CS-1', lapsed, 'Expired', clock.nowMs);
    reservations.stationEnded('CS-1', early, 'Expired', clock.nowMs);
    reservations.stationEnded('CS-1', removed, 'Removed', clock.nowMs);
    reservations.stationEnded('CS-1', others, 'Removed', clock.nowMs);
    expect(store.get(lapsed)).toMatchObject({ endReason: 'expired', endedAtMs: T0 + 3_000 });
    expect(store.get(early)).toMatchObject({ endReason: 'expired', endedAtMs: T0 + 10_000 });
    expect(store.get(removed)).toMatchObject({ endReason: 'released-by-charger', endedAtMs: T0 + 10_000 });
    expect(store.get(others)).toMatchObject({ endReason: null });
    clock.nowMs = T0 + 20_000;
    reservations.stationEnded('CS-1', removed, 'Expired', clock.nowMs);
    expect(store.get(removed)).toMatchObject({ endReason: 'released-by-charger', endedAtMs: T0 + 10_000 });
  });

  it('logs a store it cannot read and resolves: the next sweep tries again', async () => {
    const { db, reservations, logs } = setup();
    db.close();
    await expect(reservations.sweepExpired()).resolves.toBeUndefined();
    expect(logs()).toContain('expired reservations not ended');
  });
});
