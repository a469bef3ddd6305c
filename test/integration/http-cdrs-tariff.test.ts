// The operator's tariff (config tariffs) over real HTTP against real NL 2025 prices in the
// gateway's SQLite file: the cdr's contract fields stay exactly the contract's (excl_vat now
// all-in), `include=cost_components` adds incl_vat, total_energy and the split, a market
// without a tariff is priced as before, and a charging plan is made on the all-in price.
// Expected amounts are worked out by hand below from the recorded prices, not by the code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PriceStore } from '../../src/store/prices.js';
import { expectDocumented } from '../helpers/openapi.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';

const MR = '/api/v1/cdrs/meter_readings';
const CDR = '/api/v1/cdrs/{cpo_transaction_id}';
const PLAN = '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan';
const at = (iso: string) => Date.parse(iso);

// Real prices (nl-2025-quarterhour-local-utc.csv): 2025-09-30 21:00Z hourly 90.00 EUR/MWh; 22:00Z 102.6; 22:15Z 92.2.
// 21:30Z -> 22:30Z at 11 kW = 23:30 -> 00:30 local (CEST), the night of the switch to 15-minute periods.
const POWER_MARKET = { market_area_code: 'NL', sub_modality: 'DayAhead' };
const READINGS = [
  { reading_kwh: 0, timestamp: '2025-09-30T21:30:00Z' },
  { reading_kwh: 5.5, timestamp: '2025-09-30T22:00:00Z' },
  { reading_kwh: 11, timestamp: '2025-10-01T00:30:00+02:00' },
];
// Grid fee 0.06 EUR/kWh, 0.03 from 00:00 to 07:00 local ("night"); margin 0.02 EUR/kWh; 0.35 per session; 21 % VAT.
const TARIFF = { valid_from: '2025-01-01', supplier_margin_per_kwh: 0.02, grid_fee: { per_kwh: 0.06, zones: [{ name: 'night', per_kwh: 0.03, from: '00:00', to: '07:00' }] }, session_fee: 0.35, vat_rate: 0.21 };
// From 2025-10-01 (local midnight, 2025-09-30T22:00Z) a session fee of 5: a session that starts before stays under TARIFF.
const NEXT_TARIFF = { ...TARIFF, valid_from: '2025-10-01', session_fee: 5 };
// By hand:
//   day_ahead       5.5 x 90.00 + 2.75 x 102.6 + 2.75 x 92.2 = 1030.7 EUR/MWh·kWh / 1000 = 1.0307
//   supplier_margin 11 kWh x 0.02                                                        = 0.22
//   grid_fee        5.5 kWh before local midnight x 0.06 = 0.33, 5.5 after x 0.03 = 0.165  = 0.495
//   session_fee                                                                          = 0.35
//   excl_vat 2.0957; vat 2.0957 x 0.21 = 0.440097 -> 0.4401; incl_vat 2.5358
const COMPONENTS = {
  tariff: 'NL',
  day_ahead: 1.0307,
  supplier_margin: 0.22,
  grid_fee: 0.495,
  session_fee: 0.35,
  vat: 0.4401,
  vat_rate: 0.21,
  grid_fee_zones: [
    { zone: 'base', per_kwh: 0.06, energy_kwh: 5.5, cost: 0.33 },
    { zone: 'night', per_kwh: 0.03, energy_kwh: 5.5, cost: 0.165 },
  ],
};

describe.skipIf(!hasSharedData)(`tariffs on cdrs and plans over HTTP (real NL 2025 prices)${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let withTariff: TestHttp;
  let without: TestHttp;
  let nowMs = at('2026-01-10T12:00:00Z');
  const clock = { now: () => nowMs };
  const password = 'charger-secret-0123456789';

  beforeAll(async () => {
    withTariff = await startTestHttp({
      ctx: { clock },
      config: { tariffs: { NL: [TARIFF, NEXT_TARIFF] }, chargers: [{ id: 'CP-1', password, auth: 'accept_all', connectors: [{ connector_id: 1 }] }] },
    });
    without = await startTestHttp({ ctx: { clock }, config: { chargers: [{ id: 'CP-1', password, auth: 'accept_all', connectors: [{ connector_id: 1 }] }] } });
    loadNl2025Prices(withTariff.ctx.db);
    loadNl2025Prices(without.ctx.db);
  });
  afterAll(async () => {
    await withTariff?.close();
    await without?.close();
  });

  async function call(server: TestHttp, method: string, path: string, opts: { type: 'cdrs' | 'cpo'; body?: unknown }) {
    const headers: Record<string, string> = { authorization: `Token ${server.token(opts.type)}` };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await rawRequest(`${server.url}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    return { res, body: (text === '' ? undefined : JSON.parse(text)) as Record<string, any> };
  }

  it('a held session: the contract fields alone by default (excl_vat all-in), the split with include=cost_components', async () => {
    const session = { power_market: POWER_MARKET, status: 'completed', start_date_time: '2025-09-30T21:30:00Z', end_date_time: '2025-09-30T22:30:00Z', meter_readings: READINGS };
    expect((await call(withTariff, 'PUT', '/api/v1/sessions/TX-T1', { type: 'cpo', body: session })).res.status).toBe(201);

    let r = await call(withTariff, 'GET', '/api/v1/cdrs/TX-T1', { type: 'cdrs' });
    expect(r.res.status).toBe(200);
    expectDocumented('GET', CDR, r.res, r.body);
    expect(Object.keys(r.body).sort()).toEqual(['currency', 'end_date_time', 'id', 'last_updated', 'start_date_time', 'total_cost']);
    expect(r.body.total_cost).toEqual({ excl_vat: 2.0957 });

    r = await call(withTariff, 'GET', '/api/v1/cdrs/TX-T1?include=cost_components', { type: 'cdrs' });
    expect(r.res.status).toBe(200);
    expectDocumented('GET', CDR, r.res, r.body);
    expect(r.body.total_cost).toEqual({ excl_vat: 2.0957, incl_vat: 2.5358 });
    expect(r.body.total_energy).toBe(11);
    expect(r.body.cost_components).toEqual(COMPONENTS);
  });

  it('meter_readings: the same prices, the same split; an unknown include part is a 400', async () => {
    for (const method of ['GET', 'POST']) {
      let r = await call(withTariff, method, MR, { type: 'cdrs', body: { power_market: POWER_MARKET, meter_readings: READINGS } });
      expect(r.res.status).toBe(200);
      expectDocumented(method, MR, r.res, r.body);
      expect(r.body).toEqual({ currency: 'EUR', end_date_time: '2025-09-30T22:30:00Z', total_cost: { excl_vat: 2.0957 } });

      r = await call(withTariff, method, `${MR}?include=cost_components`, { type: 'cdrs', body: { power_market: POWER_MARKET, meter_readings: READINGS } });
      expectDocumented(method, MR, r.res, r.body);
      expect(r.body).toEqual({ currency: 'EUR', end_date_time: '2025-09-30T22:30:00Z', total_cost: { excl_vat: 2.0957, incl_vat: 2.5358 }, total_energy: 11, cost_components: COMPONENTS });
    }
    const bad = await call(withTariff, 'GET', `${MR}?include=cost_components,signed_everything`, { type: 'cdrs', body: { power_market: POWER_MARKET, meter_readings: READINGS } });
    expect(bad.res.status).toBe(400);
    expectDocumented('GET', MR, bad.res, bad.body);
    expect(bad.body.detail).toMatch(/unknown part "signed_everything"/);
  });

  it('a session is priced under the tariff in force at its start', async () => {
    // 22:00Z -> 22:30Z (00:00 -> 00:30 local, 1 October): 2.75 x 102.6 + 2.75 x 92.2 = 535.7 -> 0.5357; margin 5.5 x 0.02 = 0.11;
    // night grid fee 5.5 x 0.03 = 0.165; session fee 5: excl 5.8107, vat 1.220247 -> 1.2202, incl 7.0309.
    const r = await call(withTariff, 'POST', `${MR}?include=cost_components`, { type: 'cdrs', body: { power_market: POWER_MARKET, meter_readings: READINGS.slice(1) } });
    expect(r.res.status).toBe(200);
    expect(r.body.total_cost).toEqual({ excl_vat: 5.8107, incl_vat: 7.0309 });
    expect(r.body.cost_components).toMatchObject({ day_ahead: 0.5357, supplier_margin: 0.11, grid_fee: 0.165, session_fee: 5, vat: 1.2202 });
  });

  it('a market without a tariff: the day-ahead price alone, exactly as before; the split says so', async () => {
    let r = await call(without, 'POST', MR, { type: 'cdrs', body: { power_market: POWER_MARKET, meter_readings: READINGS } });
    expect(r.body).toEqual({ currency: 'EUR', end_date_time: '2025-09-30T22:30:00Z', total_cost: { excl_vat: 1.0307 } });
    r = await call(without, 'POST', `${MR}?include=cost_components`, { type: 'cdrs', body: { power_market: POWER_MARKET, meter_readings: READINGS } });
    expectDocumented('POST', MR, r.res, r.body);
    expect(r.body.total_cost).toEqual({ excl_vat: 1.0307 });
    expect(r.body.cost_components).toEqual({ tariff: null, day_ahead: 1.0307, supplier_margin: 0, grid_fee: 0, session_fee: 0, vat: null, vat_rate: null, grid_fee_zones: [] });
  });

  it('the plan is made on the all-in price: a dear grid zone over the cheap hours is charged around', async () => {
    // A second server on a tariff whose grid fee is 1 EUR/kWh from 10:00 to 15:00 local (09:00-14:00Z in November).
    const dearMidday = { valid_from: '2025-01-01', grid_fee: { per_kwh: 0.05, zones: [{ name: 'midday', per_kwh: 1, from: '10:00', to: '15:00' }] }, vat_rate: 0.21 };
    nowMs = at('2025-11-12T06:10:00Z');
    const departure = '2025-11-12T16:00:00Z';
    const server = await startTestHttp({ ctx: { clock }, config: { tariffs: { NL: [dearMidday] }, chargers: [{ id: 'CP-1', password, auth: 'accept_all', connectors: [{ connector_id: 1 }] }] } });
    try {
      loadNl2025Prices(server.ctx.db);
      const body = { departure_time: departure, energy_wh: 20_000 };
      const tariffed = await call(server, 'PUT', '/api/v1/chargers/CP-1/connectors/1/plan', { type: 'cpo', body });
      const plain = await call(without, 'PUT', '/api/v1/chargers/CP-1/connectors/1/plan', { type: 'cpo', body });
      expectDocumented('PUT', PLAN, tariffed.res, tariffed.body);
      expect(tariffed.body.meets_target).toBe(true);
      const feeAt = (ms: number) => (ms >= at('2025-11-12T09:00:00Z') && ms < at('2025-11-12T14:00:00Z') ? 1 : 0.05);
      const starts = (plan: Record<string, any>) => plan.planned.periods.map((p: { start: string }) => at(p.start));
      // The day-ahead-only plan (no tariff) charges in the midday hours; this one never does.
      expect(starts(tariffed.body).every((ms: number) => feeAt(ms) === 0.05)).toBe(true);
      // Its cost is the energy times (day-ahead price + grid fee) of each stored period.
      const prices = new PriceStore(server.ctx.db).native('NL', nowMs - 3_600_000, at(departure));
      const priceAt = (ms: number) => prices.find((x) => x.startMs <= ms && ms < x.startMs + x.durationS * 1000)!.pricePerMwh;
      const cost = tariffed.body.planned.periods.reduce((sum: number, p: { start: string; energy_wh: number }) => sum + (p.energy_wh / 1000) * (priceAt(at(p.start)) / 1000 + feeAt(at(p.start))), 0);
      expect(tariffed.body.planned.cost.expected).toBeCloseTo(cost, 3);
      expect(starts(plain.body).some((ms: number) => feeAt(ms) === 1)).toBe(true);
    } finally {
      await server.close();
    }
  });
});
