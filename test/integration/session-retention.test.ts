// Retention of sessions and charger data (issue 20 point 9) on a real SQLite file: raw
// charger values go once their session is final (the late-value cut-off after the stop),
// values of no transaction after a day, completed sessions and stopped transactions
// store.sessions_retention_days after they ended; what is still open or recent stays, a
// settled session keeps exactly the readings it is priced from, and nothing goes while
// the clock is not trusted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { ChargerSessions } from '../../src/ocpp/charger-sessions.js';
import { SessionRetention } from '../../src/ops/retention/session-retention.js';
import { databasePath, openDatabase } from '../../src/store/db.js';
import type { SampledValueRow } from '../../src/store/ocpp.js';
import type { AppContext } from '../../src/context.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-03-01T12:00:00Z');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const register = (atMs: number, wh: number): SampledValueRow => ({ sampledAtMs: atMs, measurand: 'Energy.Active.Import.Register', phase: '', location: '', context: 'Sample.Periodic', value: wh, unit: 'Wh' });
const current = (atMs: number): SampledValueRow => ({ sampledAtMs: atMs, measurand: 'Current.Import', phase: 'L1', location: 'Outlet', context: 'Sample.Periodic', value: 16, unit: 'A' });

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'mg-session-retention-'));
  dirs.push(dir);
  const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: dir, store: { sessions_retention_days: 30 } }, 'test', {});
  const db = openDatabase(databasePath(dir));
  const charger = new ChargerSessions(db, { marketArea: 'NL' });
  let trusted: number | null = NOW;
  const ctx = { config, db, logger: createLogger('fatal') } as unknown as AppContext;
  const retention = new SessionRetention(ctx, { trustedNow: () => trusted });
  const count = (sql: string, ...args: unknown[]) => db.prepare(sql).pluck().get(...args) as number;
  /** A transaction of `minutes` with a register value and a current value a minute, stopped at `stopMs` (stored then), or left open. */
  const session = (connectorId: number, startMs: number, minutes: number, stopped: boolean) => {
    const { transaction } = charger.startTransaction({ chargePointId: 'CP', connectorId, idTag: 'T', meterStartWh: 0, startedAtMs: startMs, reservationId: null, idTagStatus: 'Accepted' }, startMs);
    for (let m = 1; m < minutes; m++) charger.addMeterValues('CP', connectorId, transaction.transactionId, [register(startMs + m * 60_000, m * 100), current(startMs + m * 60_000)], startMs + m * 60_000);
    const stopMs = startMs + minutes * 60_000;
    if (stopped) charger.stopTransaction({ chargePointId: 'CP', transactionId: transaction.transactionId, meterStopWh: minutes * 100, stoppedAtMs: stopMs, reason: null, idTag: null }, [], stopMs);
    return transaction.transactionId;
  };
  return { db, charger, retention, count, session, untrust: () => (trusted = null), trust: () => (trusted = NOW) };
}

describe('retention of sessions and charger data', () => {
  it('drops settled raw values, old sessions and transactions; keeps open, recent and what a cdr is priced from', async () => {
    const { db, charger, retention, count, session, untrust, trust } = setup();
    const old = session(1, NOW - 40 * DAY, 60, true);
    const settled = session(2, NOW - 2 * 3_600_000, 60, true); // stopped an hour ago
    const recent = session(3, NOW - 62 * 60_000, 60, true); // stopped 2 minutes ago: late values may still change it
    const open = session(4, NOW - 40 * DAY, 30, false); // never stopped: kept whatever its age
    charger.addMeterValues('CP', 5, null, [current(NOW - 2 * DAY)], NOW - 2 * DAY);
    charger.addMeterValues('CP', 5, null, [current(NOW - 3_600_000)], NOW - 3_600_000);
    const sessions = charger.sessions;
    sessions.upsert({ cpoTransactionId: 'OPERATOR-OLD', marketArea: 'NL', status: 'completed', startMs: NOW - 41 * DAY, endMs: NOW - 40 * DAY, resourceId: null, readings: [{ timestampMs: NOW - 41 * DAY, energyKwh: 0 }, { timestampMs: NOW - 40 * DAY, energyKwh: 5 }] }, NOW - 40 * DAY);
    sessions.upsert({ cpoTransactionId: 'OPERATOR-RECENT', marketArea: 'NL', status: 'completed', startMs: NOW - 11 * DAY, endMs: NOW - 10 * DAY, resourceId: null, readings: [{ timestampMs: NOW - 11 * DAY, energyKwh: 0 }, { timestampMs: NOW - 10 * DAY, energyKwh: 5 }] }, NOW - 10 * DAY);
    const settledReadings = sessions.get(`ocpp:CP:${settled}`, true)!.readings;
    expect(settledReadings).toHaveLength(61);
    const values = (tx: number) => count('SELECT count(*) FROM ocpp_meter_values WHERE transaction_id = ?', tx);
    expect([values(old), values(settled), values(recent), values(open)]).toEqual([118, 118, 118, 58]);

    // An untrusted clock purges nothing.
    untrust();
    expect(await retention.purge()).toEqual({ settledValues: 0, looseValues: 0, sessions: 0, transactions: 0 });
    trust();
    const purged = await retention.purge();
    // Raw values of the old and the settled transaction; the old transaction, its session and the old operator session.
    expect(purged).toEqual({ settledValues: 236, looseValues: 1, sessions: 2, transactions: 1 });
    // The old transaction and its session are gone, with every row that hung on them.
    expect(count('SELECT count(*) FROM ocpp_transactions WHERE transaction_id = ?', old)).toBe(0);
    expect(count('SELECT count(*) FROM sessions WHERE cpo_transaction_id IN (?, ?)', `ocpp:CP:${old}`, 'OPERATOR-OLD')).toBe(0);
    expect(count('SELECT count(*) FROM session_readings WHERE cpo_transaction_id = ?', `ocpp:CP:${old}`)).toBe(0);
    expect(count('SELECT count(*) FROM ocpp_session_outcomes WHERE transaction_id = ?', old)).toBe(0);
    // Settled: raw values gone, the session and the readings it is priced from as they were.
    expect(values(settled)).toBe(0);
    expect(sessions.get(`ocpp:CP:${settled}`, true)!.readings).toEqual(settledReadings);
    // Within the late-value window, open, recent, and the newer loose value stay.
    expect([values(recent), values(open)]).toEqual([118, 58]);
    expect(count('SELECT count(*) FROM ocpp_meter_values WHERE transaction_id IS NULL')).toBe(1);
    expect(sessions.get('OPERATOR-RECENT')).toBeDefined();
    expect(sessions.get(`ocpp:CP:${open}`)).toBeDefined();
    // A second run finds nothing more.
    expect(await retention.purge()).toEqual({ settledValues: 0, looseValues: 0, sessions: 0, transactions: 0 });
    db.close();
  });
});
