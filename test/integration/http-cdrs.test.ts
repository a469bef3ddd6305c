// The cdrs and sessions endpoints over real HTTP, priced against real recorded NL prices
// loaded into the gateway's SQLite file; every response is checked against openapi.json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDocumented } from '../helpers/openapi.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';
import { ClockStepStore } from '../../src/store/clock-steps.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';

const METER = '6a1f0b8e-2c3d-4e5f-8a9b-0c1d2e3f4a5b';
const MR = '/api/v1/cdrs/meter_readings';

// Real prices (nl-2025-quarterhour-local-utc.csv): 2025-09-30 21:00Z hourly 90.00 EUR/MWh; 22:00Z 102.6; 22:15Z 92.2.
// 21:30Z -> 22:30Z at 11 kW: 5.5 x 90 + 2.75 x 102.6 + 2.75 x 92.2 = 1030.7 -> 1.0307 EUR
const SWITCH_BODY = {
  power_market: { market_area_code: 'NL', sub_modality: 'DayAhead' },
  meter_readings: [
    { reading_kwh: 0, timestamp: '2025-09-30T21:30:00Z' },
    { reading_kwh: 5.5, timestamp: '2025-09-30T22:00:00Z' },
    { reading_kwh: 11, timestamp: '2025-10-01T00:30:00+02:00' },
  ],
};

describe.skipIf(!hasSharedData)('cdrs and sessions over HTTP (real NL 2025 prices)', () => {
  let http: TestHttp;
  let small: TestHttp;
  let nowMs = Date.parse('2026-01-10T12:00:00Z');
  let cdrs: string;
  let cpo: string;

  beforeAll(async () => {
    const meterConfig = {
      buses: [{ name: 'rs485', type: 'tcp', host: '127.0.0.1' }],
      meters: [{ resource_id: METER, bus: 'rs485', unit_id: 1, profile: 'sdm630' }],
    };
    http = await startTestHttp({ config: meterConfig, ctx: { clock: { now: () => nowMs } } });
    small = await startTestHttp({ config: { http: { body_limit_bytes: 4096, max_readings: 10 } } });
    cdrs = http.token('cdrs');
    cpo = http.token('cpo');
  });
  afterAll(async () => {
    await http?.close();
    await small?.close();
  });

  async function call(server: TestHttp, method: string, path: string, opts: { token?: string; scheme?: string; body?: unknown; raw?: string; type?: string } = {}) {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `${opts.scheme ?? 'Token'} ${opts.token}`;
    const payload = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    if (payload !== undefined) headers['content-type'] = opts.type ?? 'application/json';
    const res = await rawRequest(`${server.url}${path}`, { method, headers, body: payload });
    const text = await res.text();
    const body = text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
    return { res, body: body as Record<string, any> };
  }

  it('503 while no prices are stored for the market, then prices the readings', async () => {
    let { res, body } = await call(http, 'POST', MR, { token: cdrs, body: SWITCH_BODY });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('300');
    expectDocumented('POST', MR, res, body);

    expect(loadNl2025Prices(http.ctx.db, { with2024: true })).toBeGreaterThan(20_000);
    for (const method of ['GET', 'POST']) {
      ({ res, body } = await call(http, method, MR, { token: cdrs, body: SWITCH_BODY }));
      expect(res.status).toBe(200);
      expect(body).toEqual({ currency: 'EUR', end_date_time: '2025-09-30T22:30:00Z', total_cost: { excl_vat: 1.0307 } });
      expectDocumented(method, MR, res, body);
    }
  });

  it('prices negative hours negative (2025-05-11, the year minimum -350 EUR/MWh at 13:00 local)', async () => {
    // 11:00Z -350.00; 11:00Z -> 12:00Z at 7 kW = 7 kWh x -350 / 1000 = -2.45
    const { res, body } = await call(http, 'GET', MR, {
      token: cdrs,
      body: { power_market: { market_area_code: 'NL', sub_modality: 'DayAhead' }, meter_readings: [{ reading_kwh: 10, timestamp: '2025-05-11T13:00:00+02:00' }, { reading_kwh: 17, timestamp: '2025-05-11T12:00:00Z' }] },
    });
    expect(res.status).toBe(200);
    expect(body.total_cost).toEqual({ excl_vat: -2.45 });
  });

  it('422 for every invalid request, naming the failing field', async () => {
    const reading = (kwh: number, ts: string) => ({ reading_kwh: kwh, timestamp: ts });
    const pm = SWITCH_BODY.power_market;
    const cases: Array<[string, unknown, string]> = [
      ['schema: missing power_market', { meter_readings: SWITCH_BODY.meter_readings }, 'power_market'],
      ['schema: wrong type', { ...SWITCH_BODY, meter_readings: [reading(1, '2025-09-30T21:30:00Z'), { reading_kwh: '2', timestamp: '2025-09-30T21:40:00Z' }] }, 'meter_readings[1].reading_kwh'],
      ['schema: unknown field', { ...SWITCH_BODY, extra: 1 }, 'extra'],
      ['fewer than 2 readings', { power_market: pm, meter_readings: [reading(1, '2025-09-30T21:30:00Z')] }, 'meter_readings'],
      ['unsorted', { power_market: pm, meter_readings: [reading(1, '2025-09-30T21:40:00Z'), reading(2, '2025-09-30T21:30:00Z')] }, 'meter_readings[1].timestamp'],
      ['duplicate', { power_market: pm, meter_readings: [reading(1, '2025-09-30T21:40:00Z'), reading(2, '2025-09-30T21:40:00.000Z')] }, 'meter_readings[1].timestamp'],
      ['decreasing', { power_market: pm, meter_readings: [reading(2, '2025-09-30T21:30:00Z'), reading(1, '2025-09-30T21:40:00Z')] }, 'meter_readings[1].reading_kwh'],
      ['no UTC designator', { power_market: pm, meter_readings: [reading(1, '2025-09-30T21:30:00'), reading(2, '2025-09-30T21:40:00Z')] }, 'meter_readings[0].timestamp'],
      ['not a date', { power_market: pm, meter_readings: [reading(1, '2025-02-30T21:30:00Z'), reading(2, '2025-09-30T21:40:00Z')] }, 'meter_readings[0].timestamp'],
      ['unknown market', { power_market: { market_area_code: 'XX', sub_modality: 'DayAhead' }, meter_readings: SWITCH_BODY.meter_readings }, 'power_market.market_area_code'],
      ['known market, not fetched here', { power_market: { market_area_code: 'DE-LU', sub_modality: 'DayAhead' }, meter_readings: SWITCH_BODY.meter_readings }, 'power_market.market_area_code'],
      ['sub_modality', { power_market: { market_area_code: 'NL', sub_modality: 'Intraday' }, meter_readings: SWITCH_BODY.meter_readings }, 'power_market.sub_modality'],
    ];
    for (const [name, body, path] of cases) {
      const r = await call(http, 'POST', MR, { token: cdrs, body });
      expect(r.res.status, name).toBe(422);
      expect(r.res.headers.get('content-type'), name).toMatch(/^application\/problem\+json/);
      expect(r.body.errors.map((e: { path: string }) => e.path), name).toContain(path);
      expectDocumented('POST', MR, r.res, r.body);
    }
  });

  it('DST over HTTP with prices imported by the CSV importer (2024 local-time file)', async () => {
    const pm = SWITCH_BODY.power_market;
    // Spring 2024-03-31: 01:30+01:00 -> 03:30+02:00 is one hour; 5.5 x 74.57 + 5.5 x 64.98 = 767.525 -> 0.7675
    let r = await call(http, 'GET', MR, { token: cdrs, body: { power_market: pm, meter_readings: [{ reading_kwh: 0, timestamp: '2024-03-31T01:30:00+01:00' }, { reading_kwh: 11, timestamp: '2024-03-31T03:30:00+02:00' }] } });
    expect(r.body).toEqual({ currency: 'EUR', end_date_time: '2024-03-31T01:30:00Z', total_cost: { excl_vat: 0.7675 } });
    // Autumn 2024-10-27: the local-only file cannot say which 02:00 its one 02:00 row is, so
    // the importer stores neither; a session across the change names the first of them.
    r = await call(http, 'GET', MR, { token: cdrs, body: { power_market: pm, meter_readings: [{ reading_kwh: 0, timestamp: '2024-10-27T01:30:00+02:00' }, { reading_kwh: 11, timestamp: '2024-10-27T03:30:00+01:00' }] } });
    expect(r.res.status).toBe(422);
    expect(r.body.detail).toContain('2024-10-27T00:00:00Z to 2024-10-27T01:00:00Z');
  });

  it('422 naming the first missing price period (the real gap at the 2025 autumn DST change)', async () => {
    const { res, body } = await call(http, 'GET', MR, {
      token: cdrs,
      body: { power_market: SWITCH_BODY.power_market, meter_readings: [{ reading_kwh: 0, timestamp: '2025-10-26T02:30:00+02:00' }, { reading_kwh: 9, timestamp: '2025-10-26T03:30:00+01:00' }] },
    });
    expect(res.status).toBe(422);
    expect(body.detail).toContain('2025-10-26T01:00:00Z to 2025-10-26T01:15:00Z');
    const before = await call(http, 'GET', MR, {
      token: cdrs,
      body: { power_market: SWITCH_BODY.power_market, meter_readings: [{ reading_kwh: 0, timestamp: '2023-12-31T22:30:00Z' }, { reading_kwh: 9, timestamp: '2023-12-31T23:30:00Z' }] },
    });
    expect(before.res.status).toBe(422);
    expect(before.body.detail).toContain('2023-12-31T22:00:00Z to 2023-12-31T23:00:00Z');
  });

  it('400 broken JSON, 415 not JSON, 400 no body, 401/403 auth', async () => {
    let r = await call(http, 'POST', MR, { token: cdrs, raw: '{"power_market": ' });
    expect(r.res.status).toBe(400);
    expectDocumented('POST', MR, r.res, r.body);
    r = await call(http, 'POST', MR, { token: cdrs, raw: 'power_market=NL', type: 'application/x-www-form-urlencoded' });
    expect(r.res.status).toBe(415);
    expectDocumented('POST', MR, r.res, r.body);
    r = await call(http, 'GET', MR, { token: cdrs });
    expect(r.res.status).toBe(400);
    r = await call(http, 'GET', MR, { body: SWITCH_BODY });
    expect(r.res.status).toBe(401);
    expect(r.res.headers.get('www-authenticate')).toBe('Token realm="metergate"');
    expectDocumented('GET', MR, r.res, r.body);
    r = await call(http, 'GET', MR, { token: cdrs, scheme: 'Bearer', body: SWITCH_BODY });
    expect(r.res.status).toBe(401);
    r = await call(http, 'GET', MR, { token: cpo, body: SWITCH_BODY });
    expect(r.res.status).toBe(403);
    expectDocumented('GET', MR, r.res, r.body);
    r = await call(http, 'DELETE', MR, { token: cdrs });
    expect(r.res.status).toBe(405);
    expect(r.res.headers.get('allow')).toBe('GET, POST');
  });

  it('413 over the body limit and over the readings cap', async () => {
    const token = small.token('cdrs');
    const many = Array.from({ length: 11 }, (_, i) => ({ reading_kwh: i, timestamp: new Date(Date.UTC(2025, 0, 1) + i * 10_000).toISOString() }));
    let r = await call(small, 'POST', MR, { token, body: { power_market: SWITCH_BODY.power_market, meter_readings: many } });
    expect(r.res.status).toBe(413);
    expect(r.body.errors[0].path).toBe('meter_readings');
    expectDocumented('POST', MR, r.res, r.body);
    r = await call(small, 'POST', MR, { token, body: { power_market: SWITCH_BODY.power_market, meter_readings: SWITCH_BODY.meter_readings, cpo_transaction_id: 'x'.repeat(5000) } });
    expect(r.res.status).toBe(413);
    expectDocumented('POST', MR, r.res, r.body);
  });

  it('sessions: active, then completed; 404/409; stable id; last_updated moves only on change', async () => {
    const path = '/api/v1/sessions/TX-1001';
    const cdr = '/api/v1/cdrs/TX-1001';
    let r = await call(http, 'GET', cdr, { token: cdrs });
    expect(r.res.status).toBe(404);
    expectDocumented('GET', '/api/v1/cdrs/{cpo_transaction_id}', r.res, r.body);

    const active = { power_market: SWITCH_BODY.power_market, status: 'active', start_date_time: '2025-09-30T21:30:00Z', meter_readings: SWITCH_BODY.meter_readings.slice(0, 2) };
    r = await call(http, 'PUT', path, { token: cpo, body: active });
    expect(r.res.status).toBe(201);
    expect(r.res.headers.get('location')).toBe(cdr);
    expectDocumented('PUT', '/api/v1/sessions/{cpo_transaction_id}', r.res, r.body);
    const createdAt = r.body.last_updated;

    r = await call(http, 'GET', cdr, { token: cdrs });
    expect(r.res.status).toBe(409);
    expectDocumented('GET', '/api/v1/cdrs/{cpo_transaction_id}', r.res, r.body);

    nowMs += 60_000;
    const completed = { ...active, status: 'completed', end_date_time: '2025-09-30T22:30:00Z', meter_readings: SWITCH_BODY.meter_readings };
    r = await call(http, 'PUT', path, { token: cpo, body: completed });
    expect(r.res.status).toBe(200);
    expect(r.body.last_updated).not.toBe(createdAt);
    const completedAt = r.body.last_updated;

    nowMs += 60_000;
    r = await call(http, 'GET', cdr, { token: cdrs });
    expect(r.res.status).toBe(200);
    expectDocumented('GET', '/api/v1/cdrs/{cpo_transaction_id}', r.res, r.body);
    expect(Object.keys(r.body).sort()).toEqual(['currency', 'end_date_time', 'id', 'last_updated', 'start_date_time', 'total_cost']);
    expect(r.body).toMatchObject({ currency: 'EUR', start_date_time: '2025-09-30T21:30:00Z', end_date_time: '2025-09-30T22:30:00Z', last_updated: completedAt, total_cost: { excl_vat: 1.0307 } });
    const first = r.body;

    // Same PUT again: idempotent, nothing moves.
    nowMs += 60_000;
    r = await call(http, 'PUT', path, { token: cpo, body: completed });
    expect(r.res.status).toBe(200);
    expect(r.body.last_updated).toBe(completedAt);
    r = await call(http, 'GET', cdr, { token: cdrs });
    expect(r.body).toEqual(first);

    // Going back to active is refused.
    r = await call(http, 'PUT', path, { token: cpo, body: active });
    expect(r.res.status).toBe(409);
    expectDocumented('PUT', '/api/v1/sessions/{cpo_transaction_id}', r.res, r.body);

    // A corrected reading changes the session and its price: last_updated moves, id does not.
    nowMs += 60_000;
    const corrected = { ...completed, meter_readings: [...SWITCH_BODY.meter_readings.slice(0, 2), { reading_kwh: 16.5, timestamp: '2025-09-30T22:30:00Z' }] };
    r = await call(http, 'PUT', path, { token: cpo, body: corrected });
    expect(r.res.status).toBe(200);
    r = await call(http, 'GET', cdr, { token: cdrs });
    // 5.5 x 90 + 5.5 x 102.6 + 5.5 x 92.2 = 1566.4 -> 1.5664
    expect(r.body.total_cost).toEqual({ excl_vat: 1.5664 });
    expect(r.body.id).toBe(first.id);
    expect(r.body.last_updated).toBe(new Date(nowMs).toISOString().replace('.000Z', 'Z'));

    // A CPO token cannot read prices, a cdrs token cannot write sessions.
    expect((await call(http, 'GET', cdr, { token: cpo })).res.status).toBe(403);
    expect((await call(http, 'PUT', path, { token: cdrs, body: completed })).res.status).toBe(403);
  });

  it('timestamps keep the instant given, down to nanoseconds (issue 16 point 8)', async () => {
    // Same switch-hour session as above, stated with sub-millisecond digits and an offset.
    const readings = [
      { reading_kwh: 0, timestamp: '2025-09-30T21:30:00.000000001Z' },
      { reading_kwh: 5.5, timestamp: '2025-09-30T22:00:00Z' },
      { reading_kwh: 11, timestamp: '2025-10-01T00:30:37.708914+02:00' },
    ];
    let r = await call(http, 'POST', MR, { token: cdrs, body: { power_market: SWITCH_BODY.power_market, meter_readings: readings } });
    expect(r.res.status).toBe(200);
    expect(r.body.end_date_time).toBe('2025-09-30T22:30:37.708914Z');
    expectDocumented('POST', MR, r.res, r.body);

    const path = '/api/v1/sessions/TX-NANO';
    const session = {
      power_market: SWITCH_BODY.power_market, status: 'completed', meter_readings: readings,
      start_date_time: '2025-09-30T23:30:00.000000001+02:00', end_date_time: '2025-09-30T22:30:37.708914123Z',
    };
    r = await call(http, 'PUT', path, { token: cpo, body: session });
    expect(r.res.status).toBe(201);
    expect(r.body).toMatchObject({ start_date_time: '2025-09-30T21:30:00.000000001Z', end_date_time: '2025-09-30T22:30:37.708914123Z' });
    r = await call(http, 'GET', '/api/v1/cdrs/TX-NANO', { token: cdrs });
    expect(r.res.status).toBe(200);
    expect(r.body).toMatchObject({ start_date_time: '2025-09-30T21:30:00.000000001Z', end_date_time: '2025-09-30T22:30:37.708914123Z' });
    expectDocumented('GET', '/api/v1/cdrs/{cpo_transaction_id}', r.res, r.body);
    // The digits belong to the content: the same body again is unchanged, other digits are an update.
    expect((await call(http, 'PUT', path, { token: cpo, body: session })).body.last_updated).toBe(r.body.last_updated);
    // An end 1 ns after the start is after it; at the same instant it is not.
    const tiny = { ...session, meter_readings: readings.slice(0, 1), status: 'active', end_date_time: '2025-09-30T21:30:00.000000002Z' };
    expect((await call(http, 'PUT', '/api/v1/sessions/TX-NANO-2', { token: cpo, body: tiny })).res.status).toBe(201);
    const same = { ...tiny, end_date_time: '2025-09-30T21:30:00.000000001Z' };
    expect((await call(http, 'PUT', '/api/v1/sessions/TX-NANO-2', { token: cpo, body: same })).res.status).toBe(422);
  });

  it('after a session update, the PUT answer and the next GET give the same last_updated (issue 16 point 8)', async () => {
    const path = '/api/v1/sessions/TX-LAST-UPDATED';
    const cdr = '/api/v1/cdrs/TX-LAST-UPDATED';
    const body = { power_market: SWITCH_BODY.power_market, status: 'completed', start_date_time: '2025-09-30T21:30:00Z', end_date_time: '2025-09-30T22:30:00Z', meter_readings: SWITCH_BODY.meter_readings };
    expect((await call(http, 'PUT', path, { token: cpo, body })).res.status).toBe(201);
    nowMs += 7;
    expect((await call(http, 'GET', cdr, { token: cdrs })).body.total_cost).toEqual({ excl_vat: 1.0307 });
    // A corrected last reading: a new price. The clock moves a few ms between PUT and GET, as it does for real.
    nowMs += 7;
    const corrected = { ...body, meter_readings: [...SWITCH_BODY.meter_readings.slice(0, 2), { reading_kwh: 16.5, timestamp: '2025-09-30T22:30:00Z' }] };
    const put = await call(http, 'PUT', path, { token: cpo, body: corrected });
    expect(put.res.status).toBe(200);
    nowMs += 7;
    const got = await call(http, 'GET', cdr, { token: cdrs });
    expect(got.body.total_cost).toEqual({ excl_vat: 1.5664 });
    expect(got.body.last_updated).toBe(put.body.last_updated);
    nowMs += 7;
    expect((await call(http, 'GET', cdr, { token: cdrs })).body).toEqual(got.body);
  });

  it('a corrected stored price moves last_updated (once), the id stays; an unchanged price never moves it', async () => {
    const path = '/api/v1/sessions/TX-PRICE-FIX';
    const cdr = '/api/v1/cdrs/TX-PRICE-FIX';
    const body = { power_market: SWITCH_BODY.power_market, status: 'completed', start_date_time: '2025-09-30T21:30:00Z', end_date_time: '2025-09-30T22:30:00Z', meter_readings: SWITCH_BODY.meter_readings };
    expect((await call(http, 'PUT', path, { token: cpo, body })).res.status).toBe(201);
    nowMs += 60_000;
    const first = (await call(http, 'GET', cdr, { token: cdrs })).body;
    expect(first.total_cost).toEqual({ excl_vat: 1.0307 });
    nowMs += 60_000;
    expect((await call(http, 'GET', cdr, { token: cdrs })).body).toEqual(first);

    // The platform corrects the 2025-09-30 21:00Z hour. The "corrected" value is a real one too:
    // the NL price of the same local hour a year earlier (nl-2024-hourly-local.csv, 2024-09-30 23:00 = 9.84 EUR/MWh).
    const store = new PriceStore(http.ctx.db);
    const hour = Date.parse('2025-09-30T21:00:00Z');
    const [original] = store.native('NL', hour, hour + 1);
    expect(original).toMatchObject({ startMs: hour, durationS: 3600, pricePerMwh: 90 });
    const [lastYear] = store.native('NL', Date.parse('2024-09-30T21:00:00Z'), Date.parse('2024-09-30T21:00:00Z') + 1);
    expect(lastYear.pricePerMwh).toBe(9.84);
    try {
      const correctedAtMs = nowMs;
      storePrices(store, [{ ...original, pricePerMwh: lastYear.pricePerMwh }], { source: 'test-correction', fetchedAtMs: correctedAtMs });
      nowMs += 60_000;
      const corrected = (await call(http, 'GET', cdr, { token: cdrs })).body;
      // 5.5 x 9.84 + 2.75 x 102.6 + 2.75 x 92.2 = 54.12 + 282.15 + 253.55 = 589.82 -> 0.5898
      expect(corrected.total_cost).toEqual({ excl_vat: 0.5898 });
      expect(corrected.id).toBe(first.id);
      // last_updated is when the price changed (the merge moved it; a GET changes nothing).
      expect(corrected.last_updated).toBe(new Date(correctedAtMs).toISOString().replace('.000Z', 'Z'));
      nowMs += 60_000;
      expect((await call(http, 'GET', cdr, { token: cdrs })).body).toEqual(corrected);
    } finally {
      storePrices(store, [original], { source: 'csv:nl-2025-quarterhour-local-utc.csv', fetchedAtMs: 0 });
    }
  });

  it('session PUT validation', async () => {
    const base = { power_market: SWITCH_BODY.power_market, status: 'completed', start_date_time: '2025-09-30T21:30:00Z', end_date_time: '2025-09-30T22:30:00Z' };
    const cases: Array<[string, string, unknown, string]> = [
      ['no end when completed', 'TX-2', { ...base, end_date_time: undefined, meter_readings: SWITCH_BODY.meter_readings }, 'end_date_time'],
      ['end before start', 'TX-2', { ...base, end_date_time: '2025-09-30T21:00:00Z', meter_readings: SWITCH_BODY.meter_readings }, 'end_date_time'],
      ['neither readings nor meter', 'TX-2', base, 'meter_readings'],
      ['both', 'TX-2', { ...base, meter_readings: SWITCH_BODY.meter_readings, resource_id: METER }, 'resource_id'],
      ['unknown meter', 'TX-2', { ...base, resource_id: '00000000-0000-4000-8000-000000000000' }, 'resource_id'],
      ['bad status', 'TX-2', { ...base, status: 'done', resource_id: METER }, 'status'],
      ['reserved id', 'meter_readings', { ...base, resource_id: METER }, 'cpo_transaction_id'],
      ['one reading, completed', 'TX-2', { ...base, meter_readings: SWITCH_BODY.meter_readings.slice(0, 1) }, 'meter_readings'],
    ];
    for (const [name, id, body, path] of cases) {
      const r = await call(http, 'PUT', `/api/v1/sessions/${id}`, { token: cpo, body });
      expect(r.res.status, name).toBe(422);
      expect(r.body.errors.map((e: { path: string }) => e.path), name).toContain(path);
      expectDocumented('PUT', '/api/v1/sessions/{cpo_transaction_id}', r.res, r.body);
    }
  });

  it('a session PUT with six independent mistakes gets all six in one 422 (issue 31 point 3)', async () => {
    const body = {
      power_market: { market_area_code: 'XX', sub_modality: 'Intraday' }, // 1 unknown market, 2 not DayAhead
      status: 'done', // 3 not a status
      start_date_time: '2025-09-30T21:30:00', // 4 no Z or offset
      end_date_time: '2025-09-30T22:30:00Z',
      meter_id: METER, // 5 not a field
      meter_readings: [{ reading_kwh: 0, timestamp: '2025-09-30T21:30:00Z' }, { reading_kwh: -1, timestamp: '2025-09-30T22:30:00Z' }], // 6 negative kWh
    };
    const r = await call(http, 'PUT', '/api/v1/sessions/TX-six', { token: cpo, body });
    expect(r.res.status).toBe(422);
    expectDocumented('PUT', '/api/v1/sessions/{cpo_transaction_id}', r.res, r.body);
    expect(r.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(
      ['meter_id', 'meter_readings[1].reading_kwh', 'power_market.market_area_code', 'power_market.sub_modality', 'start_date_time', 'status'].sort(),
    );
    expect(r.body.detail).toMatch(/^the session has 6 problems, all listed in errors/);
    // Fixed one by one, each answer lists exactly what is left.
    const fixed = { ...body, power_market: SWITCH_BODY.power_market, status: 'completed', meter_id: undefined };
    const left = await call(http, 'PUT', '/api/v1/sessions/TX-six', { token: cpo, body: fixed });
    expect(left.res.status).toBe(422);
    expect(left.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['meter_readings[1].reading_kwh', 'start_date_time']);
    // The path id is one more independent mistake, listed with the body's.
    const withId = await call(http, 'PUT', '/api/v1/sessions/meter_readings', { token: cpo, body });
    expect(withId.body.errors).toHaveLength(7);
    expect(withId.body.errors[0]).toEqual({ path: 'cpo_transaction_id', message: 'is reserved (it names the meter_readings endpoint)' });
    expect(await call(http, 'GET', '/api/v1/cdrs/TX-six', { token: cdrs }).then((g) => g.res.status)).toBe(404);
  });

  it('the meter_readings endpoint lists the schema, market and reading mistakes of one request together', async () => {
    const r = await call(http, 'POST', MR, {
      token: cdrs,
      body: { power_market: { market_area_code: 'XX', sub_modality: 'DayAhead' }, extra: 1, meter_readings: [{ reading_kwh: 2, timestamp: '2025-09-30T21:30:00Z' }, { reading_kwh: 1, timestamp: '2025-09-30T21:40:00Z' }] },
    });
    expect(r.res.status).toBe(422);
    expectDocumented('POST', MR, r.res, r.body);
    expect(r.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['extra', 'meter_readings[1].reading_kwh', 'power_market.market_area_code']);
  });

  it('a session of a local meter is priced from the readings the daemon stored', async () => {
    // The poller stores energy_import_wh every 10 s; 2025-10-01 00:00Z..00:30Z at 11 kW
    // (2025-10-01 02:00 local 81.90, 02:15 81.50 EUR/MWh): 2.75 x 81.9 + 2.75 x 81.5 = 449.35 -> 0.4494
    const insert = http.ctx.db.prepare("INSERT INTO readings (resource_id, sampled_at_ms, energy_import_wh, power_w, metrics_json) VALUES (?, ?, ?, 11000, '[]')");
    const from = Date.parse('2025-10-01T00:00:00Z');
    for (let i = 0; i <= 180; i++) insert.run(METER, from + i * 10_000, 1_000_000 + (i * 11_000) / 360);
    insert.run(METER, from + 181 * 10_000, 2_000_000); // after the session end: not used
    const body = { power_market: SWITCH_BODY.power_market, status: 'completed', start_date_time: '2025-10-01T00:00:00Z', end_date_time: '2025-10-01T00:30:00Z', resource_id: METER.toUpperCase() };
    let r = await call(http, 'PUT', '/api/v1/sessions/LOCAL-1', { token: cpo, body });
    expect(r.res.status).toBe(201);
    expect(r.body.resource_id).toBe(METER);
    r = await call(http, 'GET', '/api/v1/cdrs/LOCAL-1', { token: cdrs });
    expect(r.res.status).toBe(200);
    expect(r.body.total_cost).toEqual({ excl_vat: 0.4494 });
    // A clock step beyond the tolerance flagged readings inside it: not priced from them (422 saying why).
    new ClockStepStore(http.ctx.db).record({ detectedAtMs: from + 600_000, stepMs: -3_600_000, suspectFromMs: from + 570_000, suspectToMs: from + 620_000 });
    r = await call(http, 'GET', '/api/v1/cdrs/LOCAL-1', { token: cdrs });
    expect(r.res.status).toBe(422);
    expect(r.body.detail).toContain(`has 6 reading(s) between 2025-10-01T00:09:30Z and 2025-10-01T00:10:20Z flagged clock_suspect`);
    // No stored readings in the window -> 422.
    r = await call(http, 'PUT', '/api/v1/sessions/LOCAL-2', { token: cpo, body: { ...body, start_date_time: '2025-11-01T00:00:00Z', end_date_time: '2025-11-01T01:00:00Z' } });
    r = await call(http, 'GET', '/api/v1/cdrs/LOCAL-2', { token: cdrs });
    expect(r.res.status).toBe(422);
  });

  it('serves the OpenAPI document', async () => {
    const r = await call(http, 'GET', '/api/v1/openapi.json');
    expect(r.res.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    expect(Object.keys(r.body.paths)).toEqual(expect.arrayContaining(['/api/v1/cdrs/meter_readings', '/api/v1/cdrs/{cpo_transaction_id}', '/api/v1/sessions/{cpo_transaction_id}', '/healthz']));
  });
});

if (!hasSharedData) console.warn(SKIP_REASON);
