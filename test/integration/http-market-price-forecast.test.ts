// GET /api/v1/market_price_forecast over real HTTP, on real NL prices imported with the
// project's CSV importer up to "now" (the test clock), with forecasts computed by the
// ForecastService beforehand; every response is validated against openapi.json.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForecastService, forecastMarket } from '../../src/forecast/service.js';
import { shippedBandMethods, type BandMethodTable } from '../../src/forecast/band-methods.js';
import { dayFromIso, localMidnightMs } from '../../src/forecast/local-days.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { ForecastStore } from '../../src/store/forecasts.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';
import { expectDocumented } from '../helpers/openapi.js';
import { hasSharedData, SKIP_REASON, sharedData } from '../helpers/shared-data.js';

const PATH = '/api/v1/market_price_forecast';
const NL = requireMarket('NL');

function nlPeriods() {
  return [
    ...parsePriceCsv(readFileSync(sharedData('prices/nl-2024-hourly-local.csv'), 'utf8'), NL).periods,
    ...parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), NL).periods,
  ];
}

/**
 * A gateway whose store holds the real prices known at local 10:00 of `today` (today's,
 * not tomorrow's), or those through `knownThrough` (tomorrow's after the auction); its
 * forecaster's band methods are the shipped ones unless `bandMethods` says otherwise.
 */
async function gatewayAt(today: string, extra: Record<string, unknown> = {}, knownThrough = today, bandMethods?: BandMethodTable) {
  const clock = { nowMs: localMidnightMs(NL.timeZone, dayFromIso(today)) + 10 * 3_600_000 };
  const http = await startTestHttp({
    config: {
      prices: { regions: ['NL', 'DE-LU'], source: 'none' },
      forecast: { training_window_days: 56 },
      http: { forecast_burst: 2, forecast_interval_s: 2 },
      ...extra,
    },
    ctx: { clock: { now: () => clock.nowMs } },
  });
  const known = localMidnightMs(NL.timeZone, dayFromIso(knownThrough) + 1);
  storePrices(new PriceStore(http.ctx.db), nlPeriods().filter((p) => p.startMs < known), { source: 'csv:test', fetchedAtMs: 0 });
  const service = new ForecastService({
    config: http.ctx.config,
    logger: http.ctx.logger,
    clock: http.ctx.clock,
    forecasts: new ForecastStore(http.ctx.db),
    prices: new PriceStore(http.ctx.db),
    market: forecastMarket,
    ...(bandMethods ? { bandMethods } : {}),
  });
  return { http, clock, service };
}

async function get(http: TestHttp, query: string, headers: Record<string, string> = {}) {
  const res = await rawRequest(`${http.url}${PATH}${query}`, { method: 'GET', headers });
  const text = await res.text();
  const body = text === '' ? undefined : (JSON.parse(text) as any);
  // Every answer, errors included, must match the OpenAPI document (src/http/openapi.json).
  expectDocumented('GET', PATH, res, body);
  return { res, body };
}

/** The band before issue 24: nothing measured, so conformal everywhere. */
const CONFORMAL_ONLY: BandMethodTable = { ...shippedBandMethods(), measured: [] };

/** Forecast periods (no published price) of a response, by local day (YYYY-MM-DD of period_start). */
function forecastDays(body: any): Map<string, any[]> {
  const out = new Map<string, any[]>();
  for (const p of body.prices) if (p.price_per_mwh === null) out.set(p.period_start.slice(0, 10), [...(out.get(p.period_start.slice(0, 10)) ?? []), p]);
  return out;
}

/**
 * Served by a gateway with the shipped band methods (`adopted`) and by one with the
 * conformal band everywhere, on the same prices: the same forecasts; per day, whether
 * the bounds differ (the adopted method is not conformal there) or are the same.
 */
function boundsDifferByDay(adopted: any, conformal: any, after: string): Map<string, boolean> {
  const a = forecastDays(adopted);
  const c = forecastDays(conformal);
  expect([...a.keys()]).toEqual([...c.keys()]);
  const out = new Map<string, boolean>();
  for (const [day, periods] of a) {
    if (day <= after) continue;
    const ref = c.get(day)!;
    expect(periods.map((p) => [p.period_start, p.forecast])).toEqual(ref.map((p) => [p.period_start, p.forecast]));
    const differ = periods.filter((p, i) => p.forecast_lower !== ref[i].forecast_lower || p.forecast_upper !== ref[i].forecast_upper).length;
    // A day's band comes from one method: all of its periods differ, or none does (a
    // period whose bound is clamped to the forecast may agree by chance).
    expect(differ === 0 || differ >= periods.length * 0.9).toBe(true);
    out.set(day, differ > 0);
  }
  return out;
}

function expectValid(body: any) {
  expect(body.prices.length).toBeGreaterThan(0);
  // Entry i starts at the first period_start + i x duration_seconds (clients index so).
  const first = Date.parse(body.prices[0].period_start);
  const off = body.prices.filter((p: any, i: number) => Date.parse(p.period_start) !== first + i * body.duration_seconds * 1000);
  expect(off.slice(0, 3)).toEqual([]);
  for (const p of body.prices) for (const v of [p.price_per_mwh, p.forecast, p.forecast_lower, p.forecast_upper]) if (v !== null) expect(Number.isFinite(v)).toBe(true);
}

async function meterReadings(http: TestHttp, token: string, marketArea: string, from: string, to: string) {
  const res = await rawRequest(`${http.url}/api/v1/cdrs/meter_readings`, {
    method: 'POST',
    headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ power_market: { market_area_code: marketArea, sub_modality: 'DayAhead' }, meter_readings: [{ reading_kwh: 0, timestamp: from }, { reading_kwh: 5, timestamp: to }] }),
  });
  return { res, body: (await res.json()) as any };
}

describe.skipIf(!hasSharedData)(`market_price_forecast around the real missing day 2025-11-07 (${hasSharedData ? 'real NL prices' : SKIP_REASON})`, () => {
  // The file has no prices for the local day 2025-11-07. At 10:00 that day, with the
  // prices of 2025-11-08 already imported, the day is a hole inside the published prices.
  let gap: Awaited<ReturnType<typeof gatewayAt>>;
  beforeAll(async () => {
    gap = await gatewayAt('2025-11-07', {}, '2025-11-08');
  });
  afterAll(async () => {
    await gap?.http.close();
  });

  it('every period is present: the missing day carries forecasts with bounds, then published prices, then the forecast', async () => {
    const token = gap.http.token('price_forecast', 'gap');
    const before = await get(gap.http, '?region=NL-900', { authorization: `Bearer ${token}` });
    expect(before.res.status).toBe(200);
    expectValid(before.body);
    // No forecast computed yet: today (estimated) and tomorrow (published).
    expect(before.body.prices).toHaveLength(192);
    expect(before.body.prices.slice(0, 96).every((p: any) => p.price_per_mwh === null && p.forecast_lower < p.forecast && p.forecast < p.forecast_upper)).toBe(true);
    expect(before.body.prices.slice(96).every((p: any) => p.price_per_mwh !== null && p.forecast === null)).toBe(true);

    expect(await gap.service.computeRegion('NL')).toBe(true);
    expect(new ForecastStore(gap.http.ctx.db).latestRun('NL')!.originDay).toBe('2025-11-08');
    gap.clock.nowMs += 2_000;
    const after = await get(gap.http, '?region=NL-900', { authorization: `Bearer ${token}` });
    expect(after.res.status).toBe(200);
    expectValid(after.body);
    expect(after.body.prices).toHaveLength(8 * 96);
    expect(after.body.prices.slice(0, 96)).toEqual(before.body.prices.slice(0, 96));
    expect(after.body.prices.slice(192).every((p: any) => p.price_per_mwh === null && p.forecast_lower <= p.forecast && p.forecast <= p.forecast_upper)).toBe(true);
  });

  it('NL-900 bounds from the band methods measured for NL at 900 s: the IDR/conformal average at D+1..D+4 and D+7, conformal at D+5 and D+6', async () => {
    const conformalOnly = await gatewayAt('2025-11-07', {}, '2025-11-08', CONFORMAL_ONLY);
    try {
      expect(await gap.service.computeRegion('NL')).toBe(true);
      expect(await conformalOnly.service.computeRegion('NL')).toBe(true);
      expect(new ForecastStore(gap.http.ctx.db).latestRun('NL')!.method).toBe('lear-ridge+average D+1..D+4, D+7; conformal D+5, D+6');
      expect(new ForecastStore(conformalOnly.http.ctx.db).latestRun('NL')!.method).toBe('lear-ridge+conformal');
      // Read on 2025-11-08, so the answer reaches D+7 (today + 7 days).
      for (const g of [gap, conformalOnly]) g.clock.nowMs = localMidnightMs(NL.timeZone, dayFromIso('2025-11-08')) + 10 * 3_600_000;
      const adopted = await get(gap.http, '?region=NL-900', { authorization: `Bearer ${gap.http.token('price_forecast', 'band-900')}` });
      const conformal = await get(conformalOnly.http, '?region=NL-900', { authorization: `Bearer ${conformalOnly.http.token('price_forecast', 'band-900')}` });
      expect(adopted.res.status).toBe(200);
      expect(conformal.res.status).toBe(200);
      expectValid(adopted.body);
      // Origin 2025-11-08: D+1 is 2025-11-09 .. D+7 2025-11-15.
      expect(Object.fromEntries(boundsDifferByDay(adopted.body, conformal.body, '2025-11-08'))).toEqual({
        '2025-11-09': true,
        '2025-11-10': true,
        '2025-11-11': true,
        '2025-11-12': true,
        '2025-11-13': false,
        '2025-11-14': false,
        '2025-11-15': true,
      });
    } finally {
      await conformalOnly.http.close();
    }
  });

  it('prices that end before today: 503 with Retry-After naming the last stored day, the same on cdrs', async () => {
    // Two days later nothing new was imported: the store ends with 2025-11-08.
    gap.clock.nowMs = localMidnightMs(NL.timeZone, dayFromIso('2025-11-10')) + 10 * 3_600_000;
    const forecast = await get(gap.http, '?region=NL', { authorization: `Bearer ${gap.http.token('price_forecast', 'late')}` });
    expect(forecast.res.status).toBe(503);
    expect(forecast.res.headers.get('retry-after')).toBe('300');
    expect(forecast.body.detail).toMatch(/^the stored NL day-ahead prices end with 2025-11-08 \(the last stored day, Europe\/Amsterdam;/);
    // A session of yesterday: the same condition, the same answer.
    const cdrsToken = gap.http.token('cdrs');
    const cdrs = await meterReadings(gap.http, cdrsToken, 'NL', '2025-11-09T10:00:00Z', '2025-11-09T11:00:00Z');
    expect(cdrs.res.status).toBe(503);
    expect(cdrs.res.headers.get('retry-after')).toBe('300');
    expect(cdrs.body.detail).toMatch(/^the stored NL day-ahead prices end with 2025-11-08 /);
    // A session inside the missing day is a hole, not a late sync: 422 naming the period.
    const hole = await meterReadings(gap.http, cdrsToken, 'NL', '2025-11-07T10:00:00Z', '2025-11-07T11:00:00Z');
    expect(hole.res.status).toBe(422);
    expect(hole.body.detail).toContain('2025-11-07T10:00:00Z');
    // Readings that run past today cannot be priced by waiting: 422.
    const future = await meterReadings(gap.http, cdrsToken, 'NL', '2025-11-08T22:00:00Z', '2025-11-12T11:00:00Z');
    expect(future.res.status).toBe(422);
  });

  it('/healthz names the days of the horizon the forecaster could not forecast', async () => {
    // As the daemon wires it (src/daemon.ts).
    gap.http.ctx.probes.observe([gap.service]);
    const health = async () => (await (await fetch(`${gap.http.url}/healthz`)).json()) as any;
    gap.clock.nowMs = localMidnightMs(NL.timeZone, dayFromIso('2025-11-08')) + 10 * 3_600_000;
    expect(await gap.service.computeRegion('NL')).toBe(true);
    expect((await health()).components.forecast).toEqual({ status: 'ok', reason: 'every day of the horizon forecast for NL (prices only)' });
    // Two days on without new prices: the forecast from 2025-11-08 reaches 2025-11-15; the
    // horizon of 2025-11-10 runs to 2025-11-17.
    gap.clock.nowMs = localMidnightMs(NL.timeZone, dayFromIso('2025-11-10')) + 10 * 3_600_000;
    expect(await gap.service.computeRegion('NL')).toBe(true);
    const h = await health();
    expect(h.components.forecast.status).toBe('degraded');
    expect(h.components.forecast.reason).toBe('NL: could not forecast 2025-11-16, 2025-11-17 (prices stored only through 2025-11-08, and the forecast reaches 7 days past it)');
    expect(h.reasons).toContain(`forecast: ${h.components.forecast.reason}`);
    // A region without any price is not a forecasting fault: DE-LU alone reads disabled.
    const idle = new ForecastService({ config: gap.http.ctx.config, logger: gap.http.ctx.logger, clock: gap.http.ctx.clock, forecasts: new ForecastStore(gap.http.ctx.db), prices: new PriceStore(gap.http.ctx.db), market: forecastMarket });
    expect(await idle.computeRegion('DE-LU')).toBe(false);
    expect(idle.health()).toEqual({ status: 'disabled', reason: expect.stringMatching(/^DE-LU: nothing to forecast from: no DE-LU prices stored in the last \d+ days$/) });
    // Every stored forecast value is a number.
    const stored = new ForecastStore(gap.http.ctx.db).periods('NL', 0, Number.MAX_SAFE_INTEGER);
    expect(stored.length).toBe(7 * 96);
    expect(stored.every((p) => [p.forecastPerMwh, p.lowerPerMwh, p.upperPerMwh].every(Number.isFinite))).toBe(true);
  });
});

describe.skipIf(!hasSharedData)(`market_price_forecast over HTTP (${hasSharedData ? 'real NL prices' : SKIP_REASON})`, () => {
  let spring: Awaited<ReturnType<typeof gatewayAt>>;
  let autumn: Awaited<ReturnType<typeof gatewayAt>>;
  let tokenSpring: string;
  let tokenAutumn: string;

  beforeAll(async () => {
    spring = await gatewayAt('2025-03-27');
    autumn = await gatewayAt('2024-10-24');
    tokenSpring = spring.http.token('price_forecast');
    tokenAutumn = autumn.http.token('price_forecast');
  });
  afterAll(async () => {
    await spring?.http.close();
    await autumn?.http.close();
  });

  it('auth: no token or the Token scheme is 401 with a Bearer challenge; a cdrs token is 403', async () => {
    let { res, body } = await get(spring.http, '');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    ({ res } = await get(spring.http, '', { authorization: `Token ${tokenSpring}` }));
    expect(res.status).toBe(401);
    ({ res, body } = await get(spring.http, '', { authorization: `Bearer ${spring.http.token('cdrs')}` }));
    expect(res.status).toBe(403);
    expect(body.status).toBe(403);
  });

  it('before a forecast is computed: today\'s published prices only (the endpoint never trains)', async () => {
    const token = spring.http.token('price_forecast', 'before');
    const { res, body } = await get(spring.http, '', { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expectValid(body);
    expect(body.prices).toHaveLength(24);
    expect(body.prices.every((p: any) => p.price_per_mwh !== null && p.forecast === null)).toBe(true);
  });

  it('NL-900 on the spring DST week: today published, then forecasts; 2025-03-30 has 92 quarter-hours', async () => {
    expect(await spring.service.computeRegion('NL')).toBe(true);
    const { res, body } = await get(spring.http, '?region=NL-900', { authorization: `Bearer ${tokenSpring}` });
    expect(res.status).toBe(200);
    expectValid(body);
    expect(body.region).toBe('NL');
    expect(body.duration_seconds).toBe(900);
    expect(body).toMatchObject({ currency_code: 'EUR', currency_symbol: '€' });
    const byDay = new Map<string, any[]>();
    for (const p of body.prices) byDay.set(p.period_start.slice(0, 10), [...(byDay.get(p.period_start.slice(0, 10)) ?? []), p]);
    expect([...byDay.keys()]).toEqual(['2025-03-27', '2025-03-28', '2025-03-29', '2025-03-30', '2025-03-31', '2025-04-01', '2025-04-02', '2025-04-03']);
    expect(byDay.get('2025-03-30')).toHaveLength(92);
    expect(byDay.get('2025-03-27')!.every((p) => p.price_per_mwh !== null && p.forecast === null && p.forecast_lower === null)).toBe(true);
    const later = body.prices.filter((p: any) => p.period_start >= '2025-03-28');
    expect(later.every((p: any) => p.price_per_mwh === null && p.forecast_lower <= p.forecast && p.forecast <= p.forecast_upper)).toBe(true);
    expect(body.prices[0].period_start).toBe('2025-03-27T00:00:00+01:00');
    expect(byDay.get('2025-03-30')![8].period_start).toBe('2025-03-30T03:00:00+02:00');
    // Lowest upcoming: over periods not yet ended at 10:00, actual else forecast, earliest on ties.
    const now = Date.parse('2025-03-27T09:00:00Z');
    let best: { timestamp: string; price: number } | null = null;
    for (const p of body.prices) {
      const v = p.price_per_mwh ?? p.forecast;
      if (Date.parse(p.period_start) + 900_000 > now && (best === null || v < best.price)) best = { timestamp: p.period_start, price: v };
    }
    expect(body.lowest_upcoming_price).toEqual(best);
  });

  it('NL-900 over the autumn DST day 2024-10-27: 100 quarter-hours; NL-1800 50, NL 25', async () => {
    expect(await autumn.service.computeRegion('NL')).toBe(true);
    for (const [region, n] of [['NL-900', 100], ['NL-1800', 50], ['NL', 25]] as const) {
      const { res, body } = await get(autumn.http, `?region=${region}`, { authorization: `Bearer ${tokenAutumn}` });
      expect(res.status).toBe(200);
      expectValid(body);
      expect(body.prices.filter((p: any) => p.period_start.startsWith('2024-10-27'))).toHaveLength(n);
      autumn.clock.nowMs += 2_000; // stay within the throttle
    }
  });

  it('NL hourly bounds from the IDR/conformal average at D+1..D+5, conformal at D+6/D+7 (band-methods.json); the forecast itself unchanged', async () => {
    const conformalOnly = await gatewayAt('2025-03-27', {}, '2025-03-27', CONFORMAL_ONLY);
    try {
      expect(await spring.service.computeRegion('NL')).toBe(true);
      expect(await conformalOnly.service.computeRegion('NL')).toBe(true);
      expect(new ForecastStore(spring.http.ctx.db).latestRun('NL')!.method).toBe('lear-ridge+average D+1..D+5; conformal D+6, D+7');
      const adopted = await get(spring.http, '?region=NL', { authorization: `Bearer ${spring.http.token('price_forecast', 'band')}` });
      const conformal = await get(conformalOnly.http, '?region=NL', { authorization: `Bearer ${conformalOnly.http.token('price_forecast', 'band')}` });
      expect(adopted.res.status).toBe(200);
      expectValid(adopted.body);
      const differ = boundsDifferByDay(adopted.body, conformal.body, '2025-03-27');
      expect([...differ.keys()]).toEqual(['2025-03-28', '2025-03-29', '2025-03-30', '2025-03-31', '2025-04-01', '2025-04-02', '2025-04-03']);
      expect([...differ.values()]).toEqual([true, true, true, true, true, false, false]);
    } finally {
      await conformalOnly.http.close();
    }
  });

  it('unknown region or interval is 422 problem+json; a known market not configured here says so', async () => {
    const token = spring.http.token('price_forecast', 'errors');
    for (const [region, detail] of [
      ['XX', /^unknown market area "XX" \(this gateway serves NL, DE-LU\)$/],
      ['NL-60', /interval 60 s is not supported/],
      ['DE-LU-7200', /interval 7200 s is not supported/],
      ['FR', /^FR is a known market area, but this gateway is not configured for it \(prices.regions: NL, DE-LU\)/],
    ] as const) {
      const { res, body } = await get(spring.http, `?region=${region}`, { authorization: `Bearer ${token}` });
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(body.errors[0].path).toBe('region');
      expect(body.detail).toMatch(detail);
      spring.clock.nowMs += 2_000;
    }
  });

  it('a configured market without prices: 503 with the same Retry-After on market_price_forecast and cdrs', async () => {
    const forecast = await get(spring.http, '?region=DE-LU-900', { authorization: `Bearer ${spring.http.token('price_forecast', 'no-prices')}` });
    expect(forecast.res.status).toBe(503);
    const cdrs = await meterReadings(spring.http, spring.http.token('cdrs'), 'DE-LU', '2025-03-26T10:00:00Z', '2025-03-26T11:00:00Z');
    expect(cdrs.res.status).toBe(503);
    expect(forecast.res.headers.get('retry-after')).toBe('300');
    expect(cdrs.res.headers.get('retry-after')).toBe('300');
    expect(forecast.body.detail).toBe(cdrs.body.detail);
    expect(forecast.body.detail).toBe('no day-ahead prices are stored for DE-LU yet; retry once the price sync (or a CSV import) has stored some');
  });

  it('ETag and If-None-Match give 304', async () => {
    const token = spring.http.token('price_forecast', 'etag');
    const first = await get(spring.http, '?region=NL', { authorization: `Bearer ${token}` });
    const etag = first.res.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    const second = await get(spring.http, '?region=NL', { authorization: `Bearer ${token}`, 'if-none-match': etag! });
    expect(second.res.status).toBe(304);
    expect(second.body).toBeUndefined();
  });

  it('a burst, then 429 with Retry-After and problem+json, then success after Retry-After', async () => {
    const token = spring.http.token('price_forecast', 'throttle');
    const auth = { authorization: `Bearer ${token}` };
    expect((await get(spring.http, '', auth)).res.status).toBe(200);
    expect((await get(spring.http, '', auth)).res.status).toBe(200);
    const limited = await get(spring.http, '', auth);
    expect(limited.res.status).toBe(429);
    expect(limited.res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const retryAfter = Number(limited.res.headers.get('retry-after'));
    expect(retryAfter).toBe(2);
    expect(limited.body.status).toBe(429);
    // Another token is not affected.
    expect((await get(spring.http, '', { authorization: `Bearer ${spring.http.token('price_forecast', 'other')}` })).res.status).toBe(200);
    spring.clock.nowMs += retryAfter * 1000;
    const again = await get(spring.http, '', auth);
    expect(again.res.status).toBe(200);
    expectValid(again.body);
  });

  it('recomputation: unchanged prices keep the stored forecast; the next day\'s auction moves the origin by one day', async () => {
    const store = new ForecastStore(spring.http.ctx.db);
    const before = store.latestRun('NL')!;
    expect(before.originDay).toBe('2025-03-27');
    spring.clock.nowMs += 60_000;
    expect(await spring.service.computeRegion('NL')).toBe(true);
    expect(store.latestRun('NL')!.computedAtMs).toBe(before.computedAtMs);
    // 13:00: the real prices of 2025-03-28 are published.
    const from = localMidnightMs(NL.timeZone, dayFromIso('2025-03-28'));
    const to = localMidnightMs(NL.timeZone, dayFromIso('2025-03-29'));
    storePrices(new PriceStore(spring.http.ctx.db), nlPeriods().filter((p) => p.startMs >= from && p.startMs < to), { source: 'csv:test', fetchedAtMs: 1 });
    spring.clock.nowMs = localMidnightMs(NL.timeZone, dayFromIso('2025-03-27')) + 13 * 3_600_000;
    expect(await spring.service.computeRegion('NL')).toBe(true);
    const after = store.latestRun('NL')!;
    expect(after.originDay).toBe('2025-03-28');
    const token = spring.http.token('price_forecast', 'after-auction');
    const { body } = await get(spring.http, '', { authorization: `Bearer ${token}` });
    // Today's and tomorrow's 24 hours published, then forecasts.
    expect(body.prices.filter((p: any) => p.price_per_mwh !== null)).toHaveLength(48);
    expect(body.prices[48].forecast).not.toBeNull();
  });
});
