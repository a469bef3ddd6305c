// A charger message's writes are one SQLite transaction (issue 30, item 7): a StartTransaction
// whose store unit is refused half-way — after its transaction row and the close of the
// connector's older open transaction were written, at the write that ends the reservation it
// names — leaves nothing behind. When the store takes writes again the unit runs once more
// from the start: one transaction (not answered as a repeat of itself), the reservation
// ended by it, the older transaction closed, and each event emitted once.
//
// The gateway is the real Daemon (in this process, so the test holds its SQLite connection)
// with a strict ocpp-rpc charger. The refusal is SQLite's own SQLITE_FULL ("database or disk
// is full"), raised on the gateway's connection by a temporary trigger on the reservation's
// end that writes into a temp table capped by max_page_count: the same error a full disk
// gives, at exactly that write.
//
// The same for an OCPP 2.0.1 station (issue 33; ocpp-ws-io): its TransactionEvent Started
// is refused at the last write of its unit, the map from the station's transaction id to
// the gateway's (ocpp201_transactions), after the transaction row and the close of the
// EVSE's older open transaction were written. Rerun whole: one transaction, mapped once,
// the older one closed, its stop emitted once, and the station answered as 2.0.1 says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Events } from '../../src/events.js';
import { CHARGER_PASSWORD, startPlanGateway, type PlanGateway, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { connectOcttCharger, type OcttCharger } from '../helpers/octt-charger.js';
import { until } from '../helpers/wait.js';

const CP = 'CP-HALF-WAY';
const CS = 'CS-HALF-WAY-201';
const at = (iso: string) => Date.parse(iso);

describe('a StartTransaction refused half-way by the store', () => {
  let gw: PlanGateway;
  let cp: SimulatedCharger;
  let station: OcttCharger;

  beforeAll(async () => {
    // storage_wait_s: the charger's call waits for the unit to be written (no CallError to send it again).
    gw = await startPlanGateway({ startMs: at('2025-11-12T12:00:00Z'), pricesFromMs: 0, pricesToMs: 0, chargers: [{ id: CP }, { id: CS, ocpp_version: '2.0.1' }], ocpp: { storage_wait_s: 60 } });
    cp = await gw.connect(CP);
    cp.client.handle('ReserveNow', async () => ({ status: 'Accepted' }));
    await cp.client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  }, 60_000);

  afterAll(async () => {
    await station?.close();
    await gw?.close();
  });

  it('is written once, whole, when the store takes writes again: one transaction, its reservation ended, each event once', async () => {
    const db = gw.daemon.ctx.db;
    const events = gw.daemon.ctx.events;
    const iso = (ms: number) => new Date(ms).toISOString();
    // A transaction the charger never stopped on connector 1 (its StopTransaction was lost).
    const older = (await cp.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-OLD', meterStart: 1_000, timestamp: iso(gw.nowMs - 3_600_000) })) as { transactionId: number };
    const reserved = await gw.api('POST', `/api/v1/chargers/${CP}/reserve-now`, { connector_id: 1, id_tag: 'TAG-ANNA', expiry_date: iso(gw.nowMs + 3_600_000) }, '/api/v1/chargers/{charge_point_id}/reserve-now');
    expect(reserved.status).toBe(200);
    const reservationId = reserved.body.request.reservationId as number;

    const started: Array<Events['charger.transaction-started']> = [];
    const stopped: Array<Events['charger.transaction-stopped']> = [];
    const offStarted = events.on('charger.transaction-started', (e) => started.push(e));
    const offStopped = events.on('charger.transaction-stopped', (e) => stopped.push(e));

    // The store refuses the write that ends the reservation: SQLITE_FULL, as from a full disk.
    db.exec('CREATE TEMP TABLE refusal_ballast (b BLOB)');
    db.pragma('temp.max_page_count = 2');
    db.exec('CREATE TEMP TRIGGER refuse_reservation_end AFTER UPDATE OF end_reason ON main.ocpp_reservations BEGIN INSERT INTO temp.refusal_ballast VALUES (zeroblob(1000000)); END');
    const failures = () => gw.daemon.ctx.metrics.getSingleMetricAsString('metergate_store_write_failures_total');

    const answer = cp.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-ANNA', meterStart: 2_000, timestamp: iso(gw.nowMs), reservationId }) as Promise<{ transactionId: number; idTagInfo: { status: string } }>;
    await until(async () => /SQLITE_FULL/.test(await failures()), 'the store refusing the reservation\'s end', 30_000);
    // The store takes writes again: the queue runs the unit again within a second.
    db.exec('DROP TRIGGER temp.refuse_reservation_end');
    const { transactionId, idTagInfo } = await answer;
    offStarted();
    offStopped();

    expect(idTagInfo.status).toBe('Accepted');
    const rows = db.prepare("SELECT transaction_id FROM ocpp_transactions WHERE charge_point_id = ? AND id_tag = 'TAG-ANNA'").all(CP) as Array<{ transaction_id: number }>;
    expect(rows).toEqual([{ transaction_id: transactionId }]);
    expect(db.prepare('SELECT end_reason, transaction_id FROM ocpp_reservations WHERE reservation_id = ?').get(reservationId)).toEqual({ end_reason: 'transaction', transaction_id: transactionId });
    expect(db.prepare('SELECT stop_inferred FROM ocpp_transactions WHERE transaction_id = ?').get(older.transactionId)).toEqual({ stop_inferred: 'new-transaction' });
    expect(started.map((e) => e.transactionId)).toEqual([transactionId]);
    expect(stopped.map((e) => e.transactionId)).toEqual([older.transactionId]);
  }, 60_000);

  it('2.0.1: a TransactionEvent Started refused at its last write is written once, whole: one transaction mapped once, the older one closed, its stop emitted once', async () => {
    const db = gw.daemon.ctx.db;
    const events = gw.daemon.ctx.events;
    const iso = (ms: number) => new Date(ms).toISOString();
    const register = (ms: number, wh: number, context: string) => [{ timestamp: iso(ms), sampledValue: [{ value: wh, context, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' } }] }];
    station = await connectOcttCharger({ endpoint: `ws://127.0.0.1:${gw.ocppPort}`, identity: CS, password: CHARGER_PASSWORD, version: '2.0.1', answers: {} });
    expect(await station.call('BootNotification', { reason: 'PowerUp', chargingStation: { vendorName: 'OCTT', model: 'ocpp-ws-io' } })).toMatchObject({ status: 'Accepted' });
    // A transaction whose Ended the station lost, open on EVSE 1.
    await station.call('TransactionEvent', { eventType: 'Started', timestamp: iso(gw.nowMs - 3_600_000), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: 'half-way-older' }, idToken: { idToken: 'TAG-OLD', type: 'ISO14443' }, evse: { id: 1, connectorId: 1 }, meterValue: register(gw.nowMs - 3_600_000, 1_000, 'Transaction.Begin') });
    const older = db.prepare("SELECT transaction_id FROM ocpp201_transactions WHERE charge_point_id = ? AND charger_transaction_id = 'half-way-older'").pluck().get(CS) as number;

    const started: Array<Events['charger.transaction-started']> = [];
    const stopped: Array<Events['charger.transaction-stopped']> = [];
    const offStarted = events.on('charger.transaction-started', (e) => started.push(e));
    const offStopped = events.on('charger.transaction-stopped', (e) => stopped.push(e));

    // The store refuses the unit's last write, the station's id mapped to the gateway's: SQLITE_FULL.
    db.exec('CREATE TEMP TABLE IF NOT EXISTS refusal_ballast (b BLOB)');
    db.pragma('temp.max_page_count = 2');
    db.exec('CREATE TEMP TRIGGER refuse_201_map AFTER INSERT ON main.ocpp201_transactions BEGIN INSERT INTO temp.refusal_ballast VALUES (zeroblob(1000000)); END');
    const failures = async () => Number(/^metergate_store_write_failures_total\{[^}]*SQLITE_FULL[^}]*\} (\d+)/m.exec(await gw.daemon.ctx.metrics.getSingleMetricAsString('metergate_store_write_failures_total'))?.[1] ?? 0);
    const failuresBefore = await failures();

    const answer = station.call<{ idTokenInfo: { status: string } }>('TransactionEvent', { eventType: 'Started', timestamp: iso(gw.nowMs), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: 'half-way-new' }, idToken: { idToken: 'TAG-ANNA', type: 'ISO14443' }, evse: { id: 1, connectorId: 1 }, meterValue: register(gw.nowMs, 2_000, 'Transaction.Begin') });
    await until(async () => (await failures()) > failuresBefore, 'the store refusing the station\'s transaction id', 30_000);
    // Nothing of the refused unit is kept meanwhile: the older transaction is still open.
    expect(db.prepare("SELECT count(*) FROM ocpp_transactions WHERE charge_point_id = ? AND id_tag = 'TAG-ANNA'").pluck().get(CS)).toBe(0);
    expect(db.prepare('SELECT stopped_at_ms FROM ocpp_transactions WHERE transaction_id = ?').pluck().get(older)).toBeNull();
    db.exec('DROP TRIGGER temp.refuse_201_map');
    expect(await answer).toEqual({ idTokenInfo: { status: 'Accepted' } });
    offStarted();
    offStopped();

    const rows = db.prepare("SELECT transaction_id, meter_start_wh FROM ocpp_transactions WHERE charge_point_id = ? AND id_tag = 'TAG-ANNA'").all(CS) as Array<{ transaction_id: number; meter_start_wh: number }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.meter_start_wh).toBe(2_000);
    expect(db.prepare("SELECT transaction_id FROM ocpp201_transactions WHERE charge_point_id = ? AND charger_transaction_id = 'half-way-new'").pluck().all(CS)).toEqual([rows[0]!.transaction_id]);
    expect(db.prepare('SELECT stop_inferred FROM ocpp_transactions WHERE transaction_id = ?').get(older)).toEqual({ stop_inferred: 'new-transaction' });
    expect(stopped.map((e) => e.transactionId)).toEqual([older]);
    // A 2.0.1 start emits at most one start (none while 2.0.1 transactions are not planned).
    expect(started.filter((e) => e.transactionId === rows[0]!.transaction_id).length).toBeLessThanOrEqual(1);
    expect(station.violations).toEqual([]);
  }, 60_000);
});
