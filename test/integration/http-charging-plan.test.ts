// PUT/GET /api/v1/chargers/:cp/connectors/:n/plan over real HTTP, with real NL 2025 prices
// imported into the gateway's SQLite file: the plan answered, kept across a restart (a new
// server on the same file), forecasts beyond the published prices, a need that cannot be
// met, and the problem+json answers to bad requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { ForecastStore } from '../../src/store/forecasts.js';
import { PriceStore } from '../../src/store/prices.js';
import { expectDocumented } from '../helpers/openapi.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';

const PLAN = '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan';
const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);

describe.skipIf(!hasSharedData)(`charging plans over HTTP (real NL 2025 prices)${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let http: TestHttp;
  let nowMs = at('2025-11-12T06:10:00Z');
  const clock = { now: () => nowMs };
  let cpo: string;
  // Plans are made only for configured connectors; CP-R's connector 2 allows 32 A.
  const connectors = (...ids: number[]) => ids.map((connector_id) => ({ connector_id }));
  const password = 'charger-secret-0123456789';
  const CHARGERS = {
    chargers: [
      { id: 'CP-1', password, auth: 'accept_all', connectors: connectors(1, 2) },
      { id: 'CP-R', password, auth: 'accept_all', connectors: [{ connector_id: 2, max_current_a: 32 }] },
      { id: 'CP-F', password, auth: 'accept_all', connectors: connectors(1) },
      { id: 'CP-X', password, auth: 'accept_all', connectors: connectors(1) },
    ],
  };

  beforeAll(async () => {
    http = await startTestHttp({ ctx: { clock }, config: CHARGERS });
    loadNl2025Prices(http.ctx.db);
    cpo = http.token('cpo');
  });
  afterAll(async () => {
    await http?.close();
  });

  async function call(server: TestHttp, method: string, path: string, opts: { body?: unknown; token?: string; contentType?: string } = {}) {
    const headers: Record<string, string> = {};
    if (opts.token !== '') headers.authorization = `Token ${opts.token ?? cpo}`;
    if (opts.body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
    const res = await rawRequest(`${server.url}${path}`, { method, headers, body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) });
    const text = await res.text();
    return { res, body: (text === '' ? undefined : JSON.parse(text)) as Record<string, any> };
  }

  it('answers the cheapest plan for a target, in the cheapest real quarter-hours, and stores it', async () => {
    const departure = '2025-11-12T16:00:00Z';
    const put = await call(http, 'PUT', '/api/v1/chargers/CP-1/connectors/1/plan', { body: { departure_time: departure, energy_wh: 20_000 } });
    expectDocumented('PUT', PLAN, put.res, put.body);
    expect(put.res.status).toBe(201);
    expect(put.res.headers.get('location')).toBe('/api/v1/chargers/CP-1/connectors/1/plan');
    const plan = put.body;
    expect(plan).toMatchObject({ charge_point_id: 'CP-1', connector_id: 1, market_area_code: 'NL', currency_code: 'EUR', meets_target: true, shortfall_wh: 0, shortfall_reason: null, allowed_current_a: 16 });
    expect(plan.planned.energy_wh).toBeCloseTo(20_000, 0);
    // Check against the stored real prices directly: no uncharged quarter-hour in [now, departure) is cheaper than a charged one.
    const prices = new PriceStore(http.ctx.db).native('NL', nowMs - HOUR, at(departure));
    const charged = new Set(plan.planned.periods.map((p: { start: string }) => Math.floor(at(p.start) / 900_000)));
    const open = prices.filter((p) => p.startMs + 900_000 > nowMs && p.startMs < at(departure));
    const dearestCharged = Math.max(...open.filter((p) => charged.has(Math.floor(Math.max(p.startMs, nowMs) / 900_000))).map((p) => p.pricePerMwh));
    const cheapestLeft = Math.min(...open.filter((p) => !charged.has(Math.floor(Math.max(p.startMs, nowMs) / 900_000))).map((p) => p.pricePerMwh));
    expect(dearestCharged).toBeLessThanOrEqual(cheapestLeft);
    // The cost is the energy times the real price of each period.
    const cost = plan.planned.periods.reduce((sum: number, p: { start: string; energy_wh: number }) => sum + (p.energy_wh / 1e6) * prices.find((x) => x.startMs <= at(p.start) && at(p.start) < x.startMs + x.durationS * 1000)!.pricePerMwh, 0);
    expect(plan.planned.cost.expected).toBeCloseTo(cost, 3);
    expect(plan.planned.cost.lower).toBe(plan.planned.cost.expected);
    expect(plan.immediate.cost.expected).toBeGreaterThan(plan.planned.cost.expected);
    expect(plan.saving_expected).toBeCloseTo(plan.immediate.cost.expected - plan.planned.cost.expected, 3);
    // Charging at once starts now, inside the quarter-hour under way.
    expect(at(plan.immediate.finishes_at)).toBe(Math.round(nowMs + (20_000 / 11_040) * HOUR));

    const got = await call(http, 'GET', '/api/v1/chargers/CP-1/connectors/1/plan');
    expectDocumented('GET', PLAN, got.res, got.body);
    expect(got.res.status).toBe(200);
    expect(got.body.planned).toEqual(plan.planned);
  });

  it('keeps the target across a restart (a new server on the same SQLite file)', async () => {
    await call(http, 'PUT', '/api/v1/chargers/CP-R/connectors/2/plan', { body: { departure_time: '2025-11-12T20:00:00Z', energy_wh: 5_000, charger: { max_current_a: 32, phases: 1 } } });
    const db = openDaemonDatabase(databasePath(http.ctx.config.data_dir));
    const again = await startTestHttp({ ctx: { clock, db }, config: CHARGERS });
    try {
      const got = await call(again, 'GET', '/api/v1/chargers/CP-R/connectors/2/plan', { token: again.token('cpo') });
      expect(got.res.status).toBe(200);
      expect(got.body).toMatchObject({ energy_needed_wh: 5_000, departure_time: '2025-11-12T20:00:00Z', charger: { max_current_a: 32, phases: 1, min_current_a: 6, voltage_v: 230 }, allowed_power_w: 32 * 230 });
    } finally {
      await again.server.stop();
      db.close();
    }
  });

  it('plans beyond the published prices on the stored forecast, with its range', async () => {
    nowMs = at('2025-12-31T18:00:00Z');
    try {
      // The stored prices end 2025-12-31T23:00Z. The forecast stored for the next day is the
      // real prices of the same quarter-hours a week before, with bounds 30 % either side.
      const week = new PriceStore(http.ctx.db).native('NL', at('2025-12-24T23:00:00Z'), at('2025-12-25T23:00:00Z'));
      new ForecastStore(http.ctx.db).replace(
        { marketArea: 'NL', originDay: '2025-12-31', computedAtMs: nowMs, method: 'test-seasonal-naive', coverage: 0.9 },
        week.map((p) => ({ startMs: p.startMs + 7 * 24 * HOUR, durationS: p.durationS, forecastPerMwh: p.pricePerMwh, lowerPerMwh: p.pricePerMwh - Math.abs(p.pricePerMwh) * 0.3, upperPerMwh: p.pricePerMwh + Math.abs(p.pricePerMwh) * 0.3 })),
      );
      const put = await call(http, 'PUT', '/api/v1/chargers/CP-F/connectors/1/plan', { body: { departure_time: '2026-01-01T12:00:00Z', energy_wh: 60_000 } });
      expectDocumented('PUT', PLAN, put.res, put.body);
      expect(put.body.meets_target).toBe(true);
      const forecastPeriods = put.body.planned.periods.filter((p: { forecast: boolean }) => p.forecast);
      expect(forecastPeriods.length).toBeGreaterThan(0);
      expect(forecastPeriods.every((p: { start: string; forecast_lower: number; forecast_upper: number }) => at(p.start) >= at('2025-12-31T23:00:00Z') && p.forecast_lower <= p.forecast_upper)).toBe(true);
      expect(put.body.planned.cost.lower).toBeLessThan(put.body.planned.cost.expected);
      expect(put.body.planned.cost.upper).toBeGreaterThan(put.body.planned.cost.expected);
    } finally {
      nowMs = at('2025-11-12T06:10:00Z');
    }
  });

  it('charges as much as possible when the need cannot be met, and says so', async () => {
    const put = await call(http, 'PUT', '/api/v1/chargers/CP-1/connectors/2/plan', { body: { departure_time: '2025-11-12T08:10:00Z', energy_wh: 100_000, site: { limit_a: 25, other_load_a: 15 } } });
    expectDocumented('PUT', PLAN, put.res, put.body);
    expect(put.body).toMatchObject({ meets_target: false, shortfall_reason: 'not-enough-time', allowed_current_a: 10, allowed_power_w: 6_900 });
    expect(put.body.planned.energy_wh).toBeCloseTo(2 * 6_900, 0);
    expect(put.body.shortfall_wh).toBeCloseTo(100_000 - 2 * 6_900, 0);
  });

  it('answers bad requests with problem+json and stores nothing', async () => {
    const path = '/api/v1/chargers/CP-X/connectors/1/plan';
    const cases: Array<[number, Awaited<ReturnType<typeof call>>]> = [
      [401, await call(http, 'PUT', path, { token: '', body: { departure_time: '2025-11-12T16:00:00Z', energy_wh: 1 } })],
      [403, await call(http, 'GET', path, { token: http.token('cdrs') })],
      [422, await call(http, 'PUT', path, { body: { departure_time: '2025-11-12T16:00:00Z', energy_wh: -5, colour: 'red' } })],
      [422, await call(http, 'PUT', path, { body: { departure_time: '2025-11-12T05:00:00Z', energy_wh: 1_000 } })],
      [422, await call(http, 'PUT', path, { body: { departure_time: '2025-11-12T16:00:00Z', energy_wh: 1_000, charger: { max_current_a: 6, min_current_a: 10 } } })],
      [422, await call(http, 'PUT', '/api/v1/chargers/CP-X/connectors/0/plan', { body: { departure_time: '2025-11-12T16:00:00Z', energy_wh: 1_000 } })],
      [415, await call(http, 'PUT', path, { body: 'departure_time=x', contentType: 'text/plain' })],
      [404, await call(http, 'GET', path)],
    ];
    for (const [status, r] of cases) {
      expect(r.res.status).toBe(status);
      expect(r.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect(cases[2][1].body.errors).toEqual(expect.arrayContaining([{ path: 'energy_wh', message: expect.any(String) }, { path: 'colour', message: 'is not a known field' }]));
    expect(cases[3][1].body.errors[0].path).toBe('departure_time');
    const after = await call(http, 'GET', path);
    expect(after.res.status).toBe(404);
  });

  it('has plans only for configured connectors: 404 for any other charge point or connector, PUT and GET', async () => {
    const body = { departure_time: '2025-11-12T16:00:00Z', energy_wh: 1_000 };
    for (const path of ['/api/v1/chargers/CP-NOPE/connectors/1/plan', '/api/v1/chargers/CP-X/connectors/2/plan']) {
      const put = await call(http, 'PUT', path, { body });
      expectDocumented('PUT', PLAN, put.res, put.body);
      expect(put.res.status).toBe(404);
      expect(put.body.detail).toMatch(/not configured/);
      const got = await call(http, 'GET', path);
      expectDocumented('GET', PLAN, got.res, got.body);
      expect(got.res.status).toBe(404);
    }
  });

  it('plans at the configured limits when a request asks for more, and says so', async () => {
    const put = await call(http, 'PUT', '/api/v1/chargers/CP-X/connectors/1/plan', { body: { departure_time: '2025-11-12T16:00:00Z', energy_wh: 20_000, charger: { max_current_a: 40, min_current_a: 2, voltage_v: 240 } } });
    expectDocumented('PUT', PLAN, put.res, put.body);
    expect(put.res.status).toBe(201);
    expect(put.body.charger).toEqual({ max_current_a: 16, min_current_a: 6, phases: 3, voltage_v: 230 });
    expect(put.body.ceilings_applied).toEqual([
      { field: 'charger.max_current_a', requested: 40, applied: 16, setting: 'chargers[3].connectors[0].max_current_a' },
      { field: 'charger.min_current_a', requested: 2, applied: 6, setting: 'chargers[3].connectors[0].min_current_a' },
      { field: 'charger.voltage_v', requested: 240, applied: 230, setting: 'chargers[3].connectors[0].voltage_v' },
    ]);
    expect(put.body.allowed_current_a).toBe(16);
    expect(Math.max(...put.body.planned.periods.map((p: { current_a: number }) => p.current_a))).toBeLessThanOrEqual(16);
    // Stored at the ceilings: a GET plans with them and has nothing more to lower.
    const got = await call(http, 'GET', '/api/v1/chargers/CP-X/connectors/1/plan');
    expect(got.body).toMatchObject({ charger: { max_current_a: 16, phases: 3 }, ceilings_applied: [], allowed_current_a: 16 });
    // Less than configured is the client's to ask.
    const less = await call(http, 'PUT', '/api/v1/chargers/CP-X/connectors/1/plan', { body: { departure_time: '2025-11-12T16:00:00Z', energy_wh: 20_000, charger: { max_current_a: 10, phases: 1 } } });
    expect(less.body).toMatchObject({ charger: { max_current_a: 10, phases: 1 }, ceilings_applied: [], allowed_power_w: 2_300 });
  });
});
