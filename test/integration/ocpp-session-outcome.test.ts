// The completed session records what it came to (issue 13 point 3): a running gateway
// (Daemon with its real modules), a charger simulated by ocpp-rpc's RPCClient in strict
// mode, real NL day-ahead prices of Sunday 2025-05-11 (negative around noon). One session
// runs under the plan its charger accepted (docs/planning.md's worked example: 30 kWh
// between 06:20Z and 16:00Z), one on another connector without a plan. At StopTransaction
// the gateway commits, with the stop, the actual cost (equal to the CDR's), the cost of
// charging the same energy immediately from plug-in, and the plan; read on
// GET /api/v1/chargers/{cp}/transactions/{id} (validated against openapi.json), the status
// page and /metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { TokenStore } from '../../src/store/tokens.js';
import { startPlanGateway, type PlanGateway, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

const at = (iso: string) => Date.parse(iso);
const TX_PATH = '/api/v1/chargers/{charge_point_id}/transactions/{transaction_id}';

describe.skipIf(!hasSharedData)(`a completed charger session records its cost against charging immediately${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let cp: SimulatedCharger;
  let cdrsToken: string;
  let hourly: Map<number, number>;

  beforeAll(async () => {
    gw = await startPlanGateway({ startMs: at('2025-05-11T06:20:00Z'), pricesFromMs: at('2025-05-11T00:00:00Z'), pricesToMs: at('2025-05-12T00:00:00Z'), chargers: [{ id: 'CP-OUT', connectors: [{ connector_id: 1 }] }] });
    // Only connector 1 is configured (it has the plan): connector 2's unplanned session is compared at the default power.
    // The expected costs below are worked out from the CSV itself, not from the gateway's store.
    hourly = new Map(gw.prices.filter((p) => p.startMs >= at('2025-05-11T00:00:00Z') && p.startMs < at('2025-05-12T00:00:00Z')).map((p) => [p.startMs, p.pricePerMwh]));
    expect(hourly.size).toBe(24);
    cdrsToken = new TokenStore(gw.daemon.ctx.db).create({ name: 'test-cdrs', type: 'cdrs', nowMs: gw.nowMs }).token;
    cp = await gw.connect('CP-OUT');
    await cp.client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Double' });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  const charger = () => cp.client;

  /** The transaction endpoint with the cpo token (checked against openapi.json). */
  const transaction = (id: number | string, chargePointId = 'CP-OUT') => gw.api('GET', `/api/v1/chargers/${chargePointId}/transactions/${id}`, undefined, TX_PATH);

  /** Any other GET with a given token, its answer checked against openapi.json under `template`. */
  async function get(path: string, token: string, template: string): Promise<{ status: number; body: any }> {
    const res = await fetch(`http://127.0.0.1:${gw.httpPort}${path}`, { headers: { authorization: `Token ${token}` } });
    const body = await res.json();
    expectDocumented('GET', template, res, body);
    return { status: res.status, body };
  }

  /** EUR for kWh per UTC hour start, at the CSV's prices (EUR/MWh), rounded as a CDR is. */
  const cost = (kwhByHour: Array<[string, number]>) => Math.round(kwhByHour.reduce((sum, [hour, kwh]) => sum + (kwh * hourly.get(at(hour))!) / 1000, 0) * 10_000) / 10_000;

  const count = (sql: string, ...args: unknown[]) => gw.daemon.ctx.db.prepare(sql).pluck().get(...args) as number;

  let planned = 0;
  let unplanned = 0;

  it('both sessions start at 06:20Z; the one with a target runs under the plan its charger accepted', async () => {
    const put = await gw.api('PUT', '/api/v1/chargers/CP-OUT/connectors/1/plan', { departure_time: '2025-05-11T16:00:00Z', energy_wh: 30_000 });
    expect(put.status).toBe(201);
    expect(put.body.planned.cost.expected).toBeCloseTo(-9.7625, 4);
    const start = (connectorId: number, meterStart: number) => charger().call('StartTransaction', { connectorId, idTag: 'TAG', meterStart, timestamp: '2025-05-11T06:20:00Z' }) as Promise<{ transactionId: number }>;
    planned = (await start(1, 0)).transactionId;
    unplanned = (await start(2, 5000)).transactionId;
    await until(() => count('SELECT count(*) FROM ocpp_transaction_plans WHERE transaction_id = ?', planned) === 1, 'the TxProfile accepted for the planned transaction');
    expect(cp.profiles.map((p) => p.csChargingProfiles.chargingProfilePurpose)).toContain('TxProfile');
    // While active: the transaction, no outcome yet.
    const active = await transaction(planned);
    expect(active.status).toBe(200);
    expect(active.body).toMatchObject({ status: 'active', connector_id: 1, end_date_time: null, outcome: null, cdr: `/api/v1/cdrs/ocpp:CP-OUT:${planned}` });
  });

  it('the unplanned session: 3.6 kW from 06:20Z to 12:00Z against 11.04 kW (the default 16 A x 3 x 230 V) from plug-in', async () => {
    gw.nowMs = at('2025-05-11T12:00:30Z');
    // Register values on the hour: 2.4 kWh by 07:00, then 3.6 kWh each hour.
    const hours = ['07', '08', '09', '10', '11'];
    await charger().call('MeterValues', {
      connectorId: 2,
      transactionId: unplanned,
      meterValue: hours.map((h, i) => ({ timestamp: `2025-05-11T${h}:00:00Z`, sampledValue: [{ value: String(5000 + 2400 + i * 3600), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] })),
    });
    expect(await charger().call('StopTransaction', { transactionId: unplanned, meterStop: 5000 + 20_400, timestamp: '2025-05-11T12:00:00Z', reason: 'EVDisconnected' })).toEqual({});
    // Committed with the stop: there before anything reads it.
    expect(count('SELECT count(*) FROM ocpp_session_outcomes WHERE transaction_id = ?', unplanned)).toBe(1);

    const actual = cost([['2025-05-11T06:00:00Z', 2.4], ['2025-05-11T07:00:00Z', 3.6], ['2025-05-11T08:00:00Z', 3.6], ['2025-05-11T09:00:00Z', 3.6], ['2025-05-11T10:00:00Z', 3.6], ['2025-05-11T11:00:00Z', 3.6]]);
    // 20.4 kWh at 11.04 kW from 06:20Z: 7.36 kWh to 07:00, 11.04 kWh 07:00-08:00, the last 2.0 kWh after 08:00 (until 08:10:52.174Z).
    const immediate = cost([['2025-05-11T06:00:00Z', 7.36], ['2025-05-11T07:00:00Z', 11.04], ['2025-05-11T08:00:00Z', 2.0]]);
    const r = await transaction(unplanned);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'completed', connector_id: 2, meter_start_wh: 5000, meter_stop_wh: 25_400, end_date_time: '2025-05-11T12:00:00Z' });
    const o = r.body.outcome;
    expect(o).toMatchObject({ currency: 'EUR', energy_wh: 20_400, planned: false, plan: null, unpriced_reason: null, actual_cost: actual, immediate: { max_power_w: 11_040, power_source: 'default', end_date_time: '2025-05-11T08:10:52.174Z' } });
    expect(o.immediate_cost).toBeCloseTo(immediate, 3);
    expect(o.saving).toBeCloseTo(o.immediate_cost - o.actual_cost, 4);
    // The same cost as the CDR, which stays as the contract has it.
    const cdr = await get(`/api/v1/cdrs/ocpp:CP-OUT:${unplanned}`, cdrsToken, '/api/v1/cdrs/{cpo_transaction_id}');
    expect(cdr.body.total_cost.excl_vat).toBe(o.actual_cost);
  });

  it('the planned session charged as planned (10:00-13:00Z): its cost, charging immediately and the plan, recorded with the stop', async () => {
    gw.nowMs = at('2025-05-11T16:00:20Z');
    await charger().call('MeterValues', {
      connectorId: 1,
      transactionId: planned,
      meterValue: [
        ['10', 0],
        ['11', 11_040],
        ['12', 22_080],
        ['13', 30_000],
      ].map(([h, wh]) => ({ timestamp: `2025-05-11T${h}:00:00Z`, sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] })),
    });
    expect(await charger().call('StopTransaction', { transactionId: planned, meterStop: 30_000, timestamp: '2025-05-11T16:00:00Z', idTag: 'TAG', reason: 'EVDisconnected' })).toEqual({ idTagInfo: { status: 'Accepted' } });
    // 11.04 kWh at -319.12, 11.04 at -350.00 and 7.92 at -299.93 EUR/MWh: -9.7625 EUR (docs/planning.md).
    const actual = cost([['2025-05-11T10:00:00Z', 11.04], ['2025-05-11T11:00:00Z', 11.04], ['2025-05-11T12:00:00Z', 7.92]]);
    expect(actual).toBe(-9.7625);
    // Charging immediately: 30 kWh at 11.04 kW from 06:20Z, done at 09:03:02.609Z: -0.1349 EUR.
    const immediate = cost([['2025-05-11T06:00:00Z', 7.36], ['2025-05-11T07:00:00Z', 11.04], ['2025-05-11T08:00:00Z', 11.04], ['2025-05-11T09:00:00Z', 0.56]]);
    const r = await transaction(planned);
    const o = r.body.outcome;
    expect(o).toMatchObject({ energy_wh: 30_000, actual_cost: actual, planned: true, immediate: { max_power_w: 11_040, power_source: 'charging-target', end_date_time: '2025-05-11T09:03:02.609Z' } });
    expect(o.immediate_cost).toBeCloseTo(immediate, 3);
    expect(o.immediate_cost).toBeCloseTo(-0.1349, 3);
    expect(o.saving).toBeCloseTo(9.6276, 3);
    expect(o.plan).toMatchObject({ planned_at: '2025-05-11T06:20:00Z', energy_needed_wh: 30_000, expected_cost: -9.7625 });
    expect(o.plan.immediate_cost).toBeCloseTo(immediate, 3);
    const cdr = await get(`/api/v1/cdrs/ocpp:CP-OUT:${planned}`, cdrsToken, '/api/v1/cdrs/{cpo_transaction_id}');
    expect(cdr.body.total_cost.excl_vat).toBe(actual);
    expect(Object.keys(cdr.body).sort()).toEqual(['currency', 'end_date_time', 'id', 'last_updated', 'start_date_time', 'total_cost']);

    // A repeated StopTransaction changes nothing.
    const before = gw.daemon.ctx.db.prepare('SELECT * FROM ocpp_session_outcomes WHERE transaction_id = ?').get(planned);
    gw.nowMs += 60_000;
    await charger().call('StopTransaction', { transactionId: planned, meterStop: 30_000, timestamp: '2025-05-11T16:00:00Z' });
    expect(gw.daemon.ctx.db.prepare('SELECT * FROM ocpp_session_outcomes WHERE transaction_id = ?').get(planned)).toEqual(before);
  });

  it('shows the last session on the status page and the sums in /metrics', async () => {
    const status = (await (await fetch(`http://127.0.0.1:${gw.httpPort}/status.json`)).json()) as any;
    const cp = status.chargers.find((c: any) => c.charge_point_id === 'CP-OUT');
    expect(cp.last_session).toMatchObject({ session: `ocpp:CP-OUT:${planned}`, planned: true, energy_wh: 30_000, currency: 'EUR', actual_cost: -9.7625 });
    expect(cp.last_session.saving).toBeCloseTo(9.6276, 3);
    const unplannedOutcome = (await transaction(unplanned)).body.outcome;
    const metrics = await (await fetch(`http://127.0.0.1:${gw.httpPort}/metrics`)).text();
    const value = (re: RegExp) => Number(re.exec(metrics)?.[1]);
    expect(value(/metergate_ocpp_completed_sessions\{planned="true",currency="EUR"\} (\S+)/)).toBe(1);
    expect(value(/metergate_ocpp_completed_sessions\{planned="false",currency="EUR"\} (\S+)/)).toBe(1);
    expect(value(/metergate_ocpp_session_cost\{planned="true",currency="EUR",kind="actual"\} (\S+)/)).toBe(-9.7625);
    expect(value(/metergate_ocpp_session_savings\{planned="true",currency="EUR"\} (\S+)/)).toBeCloseTo(9.6276, 3);
    expect(value(/metergate_ocpp_session_savings\{planned="false",currency="EUR"\} (\S+)/)).toBeCloseTo(unplannedOutcome.saving, 4);
  });

  it('a session whose prices are not stored at the stop is recorded without costs, saying why, and priced on a read once they are (stored after the price update)', async () => {
    gw.nowMs = at('2025-05-12T01:00:30Z');
    const { transactionId } = (await charger().call('StartTransaction', { connectorId: 3, idTag: 'TAG', meterStart: 0, timestamp: '2025-05-12T00:00:00Z' })) as { transactionId: number };
    await charger().call('StopTransaction', { transactionId, meterStop: 7000, timestamp: '2025-05-12T01:00:00Z' });
    const before = (await transaction(transactionId)).body.outcome;
    expect(before).toMatchObject({ priced_at: null, actual_cost: null, immediate_cost: null, saving: null, energy_wh: null, planned: false });
    expect(before.unpriced_reason).toBe('no NL day-ahead price stored from 2025-05-12T00:00:00Z');
    // The prices of 2025-05-12 arrive (as a price sync stores them).
    storePrices(new PriceStore(gw.daemon.ctx.db), 
      gw.prices.filter((p) => p.startMs >= at('2025-05-12T00:00:00Z') && p.startMs < at('2025-05-13T00:00:00Z')),
      { source: 'csv:nl-2025-quarterhour-local-utc.csv', fetchedAtMs: 0 },
    );
    const price00 = gw.prices.find((p) => p.startMs === at('2025-05-12T00:00:00Z'))!.pricePerMwh;
    const after = (await transaction(transactionId)).body.outcome;
    // 7 kWh within the 00:00 hour, as the session and (at 11.04 kW, done 00:38Z) charging immediately.
    expect(after).toMatchObject({ priced_at: '2025-05-12T01:00:30Z', energy_wh: 7000, unpriced_reason: null, actual_cost: Math.round(7 * price00 * 10) / 10_000 });
    expect(after.immediate_cost).toBeCloseTo(after.actual_cost, 4);
    // A read stores nothing (GETs change nothing); the price update that a sync announces stores it.
    expect(count('SELECT priced_at_ms FROM ocpp_session_outcomes WHERE transaction_id = ?', transactionId)).toBeNull();
    gw.daemon.ctx.events.emit('prices.updated', { marketArea: 'NL', fromMs: at('2025-05-12T00:00:00Z'), toMs: at('2025-05-13T00:00:00Z'), periods: 96 });
    expect(count('SELECT priced_at_ms FROM ocpp_session_outcomes WHERE transaction_id = ?', transactionId)).toBe(at('2025-05-12T01:00:30Z'));
    expect((await transaction(transactionId)).body.outcome).toEqual(after);
  });

  it('answers problem+json: 404 for another charger or an unknown transaction, 422 for a bad id, 401/403 without a cpo token', async () => {
    const unknown = await transaction(999999);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain('no transaction 999999');
    expect((await transaction(planned, 'CP-OTHER')).status).toBe(404);
    const bad = await transaction('abc');
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].path).toBe('transaction_id');
    expect((await get(`/api/v1/chargers/CP-OUT/transactions/${planned}`, cdrsToken, TX_PATH)).status).toBe(403);
    expect((await get(`/api/v1/chargers/CP-OUT/transactions/${planned}`, 'nope', TX_PATH)).status).toBe(401);
  });
});
