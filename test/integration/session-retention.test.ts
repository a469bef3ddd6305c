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
import { MAX_SECURITY_EVENTS_PER_CHARGER, SecurityEventStore } from '../../src/store/security-events.js';
import { MAX_SIGNED_PER_TRANSACTION, type SignedValueRow } from '../../src/store/signed-values.js';
import type { AppContext } from '../../src/context.js';
import { marketByCode, nativeResolutionS } from '../../src/prices/markets.js';
import { priceSession, type EnergyReading } from '../../src/pricing/session-cost.js';
import { clipToWindow } from '../../src/pricing/session-window.js';
import { PriceStore } from '../../src/store/prices.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData } from '../helpers/shared-data.js';

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
    // Security events a station reported: one from before the retention, one recent; the store keeps at most its bound per charger.
    const events = new SecurityEventStore(db);
    events.insert({ chargePointId: 'CP', ocppVersion: '2.0.1', type: 'TamperDetectionActivated', occurredAtMs: NOW - 40 * DAY, receivedAtMs: NOW - 40 * DAY, techInfo: 'lid opened' });
    events.insert({ chargePointId: 'CP', ocppVersion: '2.0.1', type: 'StartupOfTheDevice', occurredAtMs: NOW - DAY, receivedAtMs: NOW - DAY, techInfo: null });
    const settledReadings = sessions.get(`ocpp:CP:${settled}`, true)!.readings;
    expect(settledReadings).toHaveLength(61);
    const values = (tx: number) => count('SELECT count(*) FROM ocpp_meter_values WHERE transaction_id = ?', tx);
    expect([values(old), values(settled), values(recent), values(open)]).toEqual([118, 118, 118, 58]);

    // An untrusted clock purges nothing.
    untrust();
    expect(await retention.purge()).toEqual({ thinnedReadings: 0, settledValues: 0, looseValues: 0, sessions: 0, transactions: 0, securityEvents: 0 });
    trust();
    const purged = await retention.purge();
    // Readings of the old and the settled session between quarter-hour boundaries (56 of 61 each),
    // raw values of both; the old transaction, its session and the old operator session.
    expect(purged).toEqual({ thinnedReadings: 112, settledValues: 236, looseValues: 1, sessions: 2, transactions: 1, securityEvents: 1 });
    // The old transaction and its session are gone, with every row that hung on them.
    expect(count('SELECT count(*) FROM ocpp_transactions WHERE transaction_id = ?', old)).toBe(0);
    expect(count('SELECT count(*) FROM sessions WHERE cpo_transaction_id IN (?, ?)', `ocpp:CP:${old}`, 'OPERATOR-OLD')).toBe(0);
    expect(count('SELECT count(*) FROM session_readings WHERE cpo_transaction_id = ?', `ocpp:CP:${old}`)).toBe(0);
    expect(count('SELECT count(*) FROM ocpp_session_outcomes WHERE transaction_id = ?', old)).toBe(0);
    // Settled: raw values gone; the session keeps the readings its price depends on, one at each quarter-hour.
    expect(values(settled)).toBe(0);
    const thinned = sessions.get(`ocpp:CP:${settled}`, true)!.readings!;
    expect(thinned.map((r) => new Date(r.timestampMs).toISOString().slice(11, 16))).toEqual(['10:00', '10:15', '10:30', '10:45', '11:00']);
    expect(thinned).toEqual(settledReadings!.filter((r) => thinned.some((t) => t.timestampMs === r.timestampMs)));
    // Within the late-value window, open, recent, and the newer loose value stay.
    expect([values(recent), values(open)]).toEqual([118, 58]);
    expect(count('SELECT count(*) FROM ocpp_meter_values WHERE transaction_id IS NULL')).toBe(1);
    expect(sessions.get('OPERATOR-RECENT')).toBeDefined();
    expect(sessions.get(`ocpp:CP:${open}`)).toBeDefined();
    expect(events.list('CP', 10).map((e) => e.type)).toEqual(['StartupOfTheDevice']);
    // A second run finds nothing more.
    expect(await retention.purge()).toEqual({ thinnedReadings: 0, settledValues: 0, looseValues: 0, sessions: 0, transactions: 0, securityEvents: 0 });
    db.close();
  });

  it('keeps at most MAX_SECURITY_EVENTS_PER_CHARGER security events per charger, the newest, whatever another charger reports', () => {
    const { db } = setup();
    const events = new SecurityEventStore(db);
    events.insert({ chargePointId: 'CP-QUIET', ocppVersion: '1.6', type: 'StartupOfTheDevice', occurredAtMs: NOW, receivedAtMs: NOW, techInfo: null });
    let dropped = 0;
    for (let i = 0; i < MAX_SECURITY_EVENTS_PER_CHARGER + 5; i++) dropped += events.insert({ chargePointId: 'CP', ocppVersion: '2.0.1', type: `Event${i}`, occurredAtMs: NOW + i, receivedAtMs: NOW + i, techInfo: null }).dropped;
    expect(dropped).toBe(5);
    expect(events.count('CP')).toBe(MAX_SECURITY_EVENTS_PER_CHARGER);
    expect(events.last('CP')!.type).toBe(`Event${MAX_SECURITY_EVENTS_PER_CHARGER + 4}`);
    expect(events.list('CP', 2000).at(-1)!.type).toBe('Event5');
    // Paging newest first: the next page starts below the last id seen.
    const [first, second] = [events.list('CP', 3), events.list('CP', 3, events.list('CP', 3)[2].id)];
    expect([...first, ...second].map((e) => e.type)).toEqual(events.list('CP', 6).map((e) => e.type));
    expect(events.count('CP-QUIET')).toBe(1);
    db.close();
  });

  it('keeps signed meter values as long as their transaction (not with the settled raw values), bounded per transaction; loose ones a day', async () => {
    const { db, charger, retention, count, session } = setup();
    const signed = (atMs: number, context: string): SignedValueRow => ({ sampledAtMs: atMs, context, measurand: 'Energy.Active.Import.Register', value: `OCMF|{"PG":"T${atMs}"}|{"SD":"00"}` });
    const old = session(1, NOW - 40 * DAY, 10, false);
    const settled = session(2, NOW - 2 * 3_600_000, 10, false);
    // Begin, 250 periodic ones (50 find no room), then the end, which always does.
    for (const [tx, startMs] of [[old, NOW - 40 * DAY], [settled, NOW - 2 * 3_600_000]] as const) {
      const dropped: number[] = [];
      const sessions = new ChargerSessions(db, { marketArea: 'NL', onSignedDropped: (_cp, _tx, n) => dropped.push(n) });
      sessions.addMeterValues('CP', 1, tx, [], startMs, [signed(startMs, 'Transaction.Begin'), ...Array.from({ length: 250 }, (_, i) => signed(startMs + (i + 1) * 1000, 'Sample.Periodic'))]);
      expect(dropped.reduce((a, b) => a + b, 0)).toBe(251 - MAX_SIGNED_PER_TRANSACTION);
      sessions.stopTransaction({ chargePointId: 'CP', transactionId: tx, meterStopWh: 1000, stoppedAtMs: startMs + 10 * 60_000, reason: null, idTag: null }, [], startMs + 10 * 60_000, [signed(startMs + 10 * 60_000, 'Transaction.End')]);
    }
    charger.addMeterValues('CP', 5, null, [], NOW - 2 * DAY, [signed(NOW - 2 * DAY, 'Sample.Periodic')]);
    charger.addMeterValues('CP', 5, null, [], NOW - 3_600_000, [signed(NOW - 3_600_000, 'Sample.Periodic')]);
    const kept = (tx: number) => count('SELECT count(*) FROM ocpp_signed_values WHERE transaction_id = ?', tx);
    expect([kept(old), kept(settled)]).toEqual([MAX_SIGNED_PER_TRANSACTION + 1, MAX_SIGNED_PER_TRANSACTION + 1]);
    expect(charger.signed.ofTransaction(settled).map((v) => v.context).at(-1)).toBe('Transaction.End');
    await retention.purge();
    // The old transaction went with its signed values; the settled one keeps them (billing disputes); the old loose one went.
    expect([kept(old), kept(settled)]).toEqual([0, MAX_SIGNED_PER_TRANSACTION + 1]);
    expect(count('SELECT count(*) FROM ocpp_signed_values WHERE transaction_id IS NULL')).toBe(1);
    db.close();
  });

  it.skipIf(!hasSharedData)('a settled session thinned to the readings its price needs prices the same on real NL prices', async () => {
    const { db, charger, count } = setup();
    expect(loadNl2025Prices(db)).toBeGreaterThan(10_000);
    const nl = marketByCode('NL')!;
    const price = (readings: readonly EnergyReading[], startMs: number, endMs: number) => {
      const clipped = clipToWindow(readings, startMs, endMs);
      const result = priceSession(clipped, new PriceStore(db).native('NL', startMs, endMs), (at) => nativeResolutionS(nl, at));
      if (!result.ok) throw new Error('prices missing');
      return result.totalCostExclVat;
    };
    // Sessions across the 2025-09-30 22:00Z change to quarter-hour prices, starting off the grid, sampled every 10 s at a power that changes each minute.
    const cases = [
      { startMs: Date.parse('2025-09-30T20:07:13Z'), minutes: 200 },
      { startMs: Date.parse('2025-10-01T06:59:55Z'), minutes: 47 },
      { startMs: Date.parse('2025-10-02T17:30:00Z'), minutes: 90 },
    ];
    const retention = new SessionRetention({ config: validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/nonexistent' }, 'test', {}), db, logger: createLogger('fatal') } as unknown as AppContext, { trustedNow: () => Date.parse('2025-10-03T00:00:00Z') });
    const before: Array<{ id: string; startMs: number; endMs: number; readings: number; cost: number }> = [];
    for (const [k, c] of cases.entries()) {
      const { transaction } = charger.startTransaction({ chargePointId: 'CP', connectorId: k + 1, idTag: 'T', meterStartWh: 1000, startedAtMs: c.startMs, reservationId: null, idTagStatus: 'Accepted' }, c.startMs);
      let wh = 1000;
      const endMs = c.startMs + c.minutes * 60_000;
      for (let at = c.startMs + 10_000; at < endMs; at += 10_000) {
        wh += 11 + ((Math.floor((at - c.startMs) / 60_000) * 7) % 20); // 4-11 kW, changing each minute
        charger.addMeterValues('CP', k + 1, transaction.transactionId, [register(at, wh)], at);
      }
      charger.stopTransaction({ chargePointId: 'CP', transactionId: transaction.transactionId, meterStopWh: wh + 5, stoppedAtMs: endMs, reason: null, idTag: null }, [], endMs);
      const id = `ocpp:CP:${transaction.transactionId}`;
      const readings = charger.sessions.get(id, true)!.readings!;
      before.push({ id, startMs: c.startMs, endMs, readings: readings.length, cost: price(readings, c.startMs, endMs) });
    }
    const purged = await retention.purge();
    expect(purged.thinnedReadings).toBeGreaterThan(0);
    for (const b of before) {
      const after = charger.sessions.get(b.id, true)!.readings!;
      expect(after.length).toBeLessThan(b.readings / 20);
      expect(price(after, b.startMs, b.endMs)).toBe(b.cost);
    }
    expect(count('SELECT count(*) FROM ocpp_transactions WHERE readings_thinned = 0')).toBe(0);
    db.close();
  });
});
