// A charger session's readings are appended per MeterValues (session_readings, migration
// 135) instead of re-derived from all its values on every message. On a real SQLite file:
// the appended list equals the whole rule (registerReadings over every stored value) after
// out-of-order, late, repeated, per-phase and after-stop messages; a repeat changes nothing
// (not even last_updated); and a database whose charger sessions were stored the old way
// (readings_json) is migrated to the same list, priced the same on real NL prices.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { registerReadings, ENERGY_REGISTER } from '../../src/ocpp/register-readings.js';
import { marketByCode, nativeResolutionS } from '../../src/prices/markets.js';
import { clipToWindow } from '../../src/pricing/session-window.js';
import { priceSession, type EnergyReading } from '../../src/pricing/session-cost.js';
import { databasePath, listMigrations, migrate, openDatabase, type Db } from '../../src/store/db.js';
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';
import type { SampledValueRow, TransactionRecord } from '../../src/store/ocpp.js';
import { PriceStore } from '../../src/store/prices.js';
import { SessionStore } from '../../src/store/sessions.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData } from '../helpers/shared-data.js';

const T0 = Date.parse('2025-09-30T21:30:00Z');
const min = (m: number) => T0 + m * 60_000;
const energy = (minute: number, value: number, extra: Partial<SampledValueRow> = {}): SampledValueRow => ({
  sampledAtMs: min(minute),
  measurand: ENERGY_REGISTER,
  phase: '',
  location: '',
  context: 'Sample.Periodic',
  value,
  unit: 'Wh',
  ...extra,
});
const power = (minute: number, phase: string): SampledValueRow => ({ sampledAtMs: min(minute), measurand: 'Power.Active.Import', phase, location: '', context: '', value: 3680, unit: 'W' });

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function freshDb(): { db: Db; path: string } {
  dir = mkdtempSync(join(tmpdir(), 'mg-session-readings-'));
  const path = databasePath(join(dir, 'data'));
  return { db: openDatabase(path), path };
}

/** The whole rule over everything stored for the transaction: what the old code wrote on every message. */
function wholeRule(db: Db, tx: TransactionRecord): EnergyReading[] {
  const values = db
    .prepare<[number, string], { sampled_at_ms: number; phase: string; location: string; value: number; unit: string }>(
      'SELECT sampled_at_ms, phase, location, value, unit FROM ocpp_meter_values WHERE transaction_id = ? AND measurand = ? ORDER BY sampled_at_ms',
    )
    .all(tx.transactionId, ENERGY_REGISTER)
    .map((r) => ({ sampledAtMs: r.sampled_at_ms, phase: r.phase, location: r.location, value: r.value, unit: r.unit }));
  return registerReadings(tx, values);
}

describe('charger session readings appended per message (session_readings)', () => {
  it('equal the whole rule after out-of-order, late, per-phase, repeated and after-stop messages; a repeat changes nothing', () => {
    const { db } = freshDb();
    const store = new ChargerSessions(db, { marketArea: 'NL' });
    const sessions = new SessionStore(db);
    const { transaction } = store.startTransaction({ chargePointId: 'CP-1', connectorId: 1, idTag: 'T', meterStartWh: 1000, startedAtMs: min(0), reservationId: null, idTagStatus: 'Accepted' }, min(0));
    const id = `ocpp:CP-1:${transaction.transactionId}`;
    const check = () => {
      const tx = store.store.transaction(transaction.transactionId)!;
      expect(sessions.get(id, true)!.readings).toEqual(wholeRule(db, tx));
    };
    check();
    let now = min(1);
    const send = (values: SampledValueRow[]) => {
      now += 1000;
      expect(store.addMeterValues('CP-1', 1, transaction.transactionId, values, now)).toBe(true);
      check();
    };
    send([energy(45, 9250), power(45, 'L1'), power(45, 'L2'), power(45, 'L3')]);
    send([energy(30, 6.5, { unit: 'kWh' })]); // late, before the previous one
    send([energy(0, 999_999)]); // at the start: meterStart wins
    send([energy(15, 2000, { phase: 'L1' }), energy(15, 2100, { phase: 'L2' }), energy(15, 2200, { phase: 'L3' })]); // phases alone: summed
    send([energy(15, 6400)]); // the connector total at the same instant wins over the phases
    send([energy(20, 7000, { location: 'EV' }), power(20, 'L1')]); // not the outlet: no reading there
    // A repeat of the last message: no new row, the session untouched (last_updated does not move).
    const before = sessions.get(id)!;
    const rowsBefore = db.prepare('SELECT count(*) FROM session_readings').pluck().get();
    now += 60_000;
    store.addMeterValues('CP-1', 1, transaction.transactionId, [energy(15, 6400)], now);
    expect(db.prepare('SELECT count(*) FROM session_readings').pluck().get()).toBe(rowsBefore);
    expect(sessions.get(id)!.lastUpdatedMs).toBe(before.lastUpdatedMs);
    // A new value moves last_updated, as a new readings list did.
    send([energy(50, 10_000)]);
    expect(sessions.get(id)!.lastUpdatedMs).toBe(now);

    expect(store.stopTransaction({ chargePointId: 'CP-1', transactionId: transaction.transactionId, meterStopWh: 12_000, stoppedAtMs: min(60), reason: null, idTag: null }, [energy(60, 11_111), energy(55, 11_500)], now + 1000)).toBe('stopped');
    check();
    // A late value after the stop, and one at the stop instant (meterStop wins there).
    send([energy(58, 11_800), energy(60, 1)]);
    expect(sessions.get(id, true)!.readings).toEqual([
      { timestampMs: min(0), energyKwh: 1 },
      { timestampMs: min(15), energyKwh: 6.4 },
      { timestampMs: min(30), energyKwh: 6.5 },
      { timestampMs: min(45), energyKwh: 9.25 },
      { timestampMs: min(50), energyKwh: 10 },
      { timestampMs: min(55), energyKwh: 11.5 },
      { timestampMs: min(58), energyKwh: 11.8 },
      { timestampMs: min(60), energyKwh: 12 },
    ]);
    expect(sessions.get(id)!.readingCount).toBe(8);
    // Nothing goes to the old whole-list column.
    expect(db.prepare('SELECT readings_json FROM sessions WHERE cpo_transaction_id = ?').pluck().get(id)).toBeNull();
    db.close();
  });

  it.skipIf(!hasSharedData)('a database with charger sessions stored the old way is migrated to the same readings, priced the same on real NL prices', () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-session-readings-'));
    const path = databasePath(join(dir, 'data'));
    mkdirSync(join(dir, 'data'), { recursive: true });
    // The schema as it was before migration 135, with a charger session and an operator's PUT session as that code wrote them.
    const old = new Database(path);
    migrate(old, listMigrations().filter((m) => m.version < 135));
    old.prepare("INSERT INTO ocpp_transactions (transaction_id, charge_point_id, connector_id, id_tag, meter_start_wh, started_at_ms, id_tag_status, meter_stop_wh, stopped_at_ms, created_at_ms) VALUES (17, 'CP-OLD', 1, 'T', 1000, ?, 'Accepted', 12000, ?, 0)").run(min(0), min(60));
    const values = [energy(45, 9250), energy(30, 6.5, { unit: 'kWh' }), energy(40, 2000, { phase: 'L1' }), energy(40, 2100, { phase: 'L2' }), energy(40, 2200, { phase: 'L3' })];
    const insert = old.prepare(
      "INSERT INTO ocpp_meter_values (charge_point_id, connector_id, transaction_id, sampled_at_ms, measurand, phase, location, context, value, unit, received_at_ms) VALUES ('CP-OLD', 1, 17, @sampledAtMs, @measurand, @phase, @location, @context, @value, @unit, 0)",
    );
    for (const v of values) insert.run(v);
    const tx = { startedAtMs: min(0), meterStartWh: 1000, stoppedAtMs: min(60), meterStopWh: 12000 };
    const oldReadings = registerReadings(tx, values.map((v) => ({ sampledAtMs: v.sampledAtMs, phase: v.phase, location: v.location, value: v.value, unit: v.unit })));
    const json = (r: EnergyReading[]) => JSON.stringify(r.map((x) => [x.timestampMs, x.energyKwh]));
    const session = old.prepare(
      "INSERT INTO sessions (cpo_transaction_id, cdr_id, market_area, status, start_ms, end_ms, readings_json, content_sha256, created_at_ms, updated_at_ms, last_updated_ms) VALUES (?, ?, 'NL', 'completed', ?, ?, ?, 'x', 0, 0, 0)",
    );
    session.run('CP-OLD-17', 'cdr-1', min(0), min(60), json(oldReadings));
    const putReadings = [{ timestampMs: min(0), energyKwh: 5 }, { timestampMs: min(60), energyKwh: 8 }];
    session.run('OPERATOR-17', 'cdr-2', min(0), min(60), json(putReadings));
    old.close();

    const db = openDatabase(path);
    const sessions = new SessionStore(db);
    // Migration 150 moved it to the charger sessions' own id space, with its cdr id; the old id leads there.
    expect(sessions.get('CP-OLD-17')).toBeUndefined();
    expect(sessions.movedTo('CP-OLD-17')).toBe('ocpp:CP-OLD:17');
    expect(sessions.get('ocpp:CP-OLD:17')!.cdrId).toBe('cdr-1');
    expect(sessions.get('ocpp:CP-OLD:17', true)!.readings).toEqual(oldReadings);
    expect(db.prepare("SELECT readings_json FROM sessions WHERE cpo_transaction_id = 'ocpp:CP-OLD:17'").pluck().get()).toBeNull();
    expect(db.prepare("SELECT count(*) FROM session_readings WHERE cpo_transaction_id = 'ocpp:CP-OLD:17'").pluck().get()).toBe(oldReadings.length);
    // The operator's session keeps its list where it was.
    expect(sessions.get('OPERATOR-17', true)!.readings).toEqual(putReadings);
    expect(db.prepare("SELECT count(*) FROM session_readings WHERE cpo_transaction_id = 'OPERATOR-17'").pluck().get()).toBe(0);

    // Priced the same (the CDR's rule: cut to the window, priced on the stored periods).
    expect(loadNl2025Prices(db)).toBeGreaterThan(10_000);
    const nl = marketByCode('NL')!;
    const price = (r: readonly EnergyReading[]) => {
      const clipped = clipToWindow(r, min(0), min(60));
      const result = priceSession(clipped, new PriceStore(db).native('NL', clipped[0].timestampMs, clipped[clipped.length - 1].timestampMs), (at) => nativeResolutionS(nl, at));
      if (!result.ok) throw new Error('prices missing');
      return result.totalCostExclVat;
    };
    expect(price(sessions.get('ocpp:CP-OLD:17', true)!.readings!)).toBe(price(oldReadings));
    // A late value after the migration: the transaction stopped long ago, past the cut-off
    // (sessions.late_meter_values_s): kept as sent, the session and its cdr stay as they are.
    const store = new ChargerSessions(db, { marketArea: 'NL' });
    const before = sessions.get('ocpp:CP-OLD:17', true)!;
    store.addMeterValues('CP-OLD', 1, 17, [energy(50, 10_500)], Date.now());
    expect(sessions.get('ocpp:CP-OLD:17', true)).toEqual(before);
    db.close();
  });
});
