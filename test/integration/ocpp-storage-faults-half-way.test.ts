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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Events } from '../../src/events.js';
import { startPlanGateway, type PlanGateway, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { until } from '../helpers/wait.js';

const CP = 'CP-HALF-WAY';
const at = (iso: string) => Date.parse(iso);

describe('a StartTransaction refused half-way by the store', () => {
  let gw: PlanGateway;
  let cp: SimulatedCharger;

  beforeAll(async () => {
    // storage_wait_s: the charger's call waits for the unit to be written (no CallError to send it again).
    gw = await startPlanGateway({ startMs: at('2025-11-12T12:00:00Z'), pricesFromMs: 0, pricesToMs: 0, chargers: [{ id: CP }], ocpp: { storage_wait_s: 60 } });
    cp = await gw.connect(CP);
    cp.client.handle('ReserveNow', async () => ({ status: 'Accepted' }));
    await cp.client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  }, 60_000);

  afterAll(async () => {
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
});
