// The default request limits (design.md: a body over 8 MB is 413, and 8 MB holds 100,000
// readings; at most 100,000 readings per request), on a gateway with its default http
// settings and real NL 2025 prices.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { PriceStore } from '../../src/store/prices.js';
import { expectDocumented } from '../helpers/openapi.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { describeWithSharedData } from '../helpers/shared-data.js';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';

const MR = '/api/v1/cdrs/meter_readings';
const FROM_MS = Date.UTC(2025, 5, 1); // 2025-06-01T00:00Z: hourly NL prices

/** `n` readings 10 s apart at a steady 3.6 kW (0.01 kWh per reading), as a JS client would write them. */
function readingsBody(n: number): string {
  const meter_readings = Array.from({ length: n }, (_, i) => ({ reading_kwh: i / 100, timestamp: new Date(FROM_MS + i * 10_000).toISOString() }));
  return JSON.stringify({ power_market: { market_area_code: 'NL', sub_modality: 'DayAhead' }, meter_readings });
}

describeWithSharedData('default HTTP limits (8 MB body, 100,000 readings)', () => {
  let http: TestHttp;
  let token: string;
  const defaults = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' }, 'test', {}).http;

  beforeAll(async () => {
    http = await startTestHttp(); // every http setting at its default (port aside)
    loadNl2025Prices(http.ctx.db);
    token = http.token('cdrs');
  });
  afterAll(async () => {
    await http?.close();
  });

  const post = (body: string) => rawRequest(`${http.url}${MR}`, { method: 'POST', headers: { authorization: `Token ${token}`, 'content-type': 'application/json' }, body });

  it('the defaults are 8 MB and 100,000 readings', () => {
    expect(defaults.body_limit_bytes).toBe(8 * 1024 * 1024);
    expect(defaults.max_readings).toBe(100_000);
    expect(http.ctx.config.http.body_limit_bytes).toBe(defaults.body_limit_bytes);
    expect(http.ctx.config.http.max_readings).toBe(defaults.max_readings);
  });

  it('100,000 readings fit in the default body limit and are priced', async () => {
    const body = readingsBody(100_000);
    expect(Buffer.byteLength(body)).toBeLessThan(defaults.body_limit_bytes);
    const res = await post(body);
    const json = (await res.json()) as { currency: string; end_date_time: string; total_cost: { excl_vat: number } };
    expect(res.status, JSON.stringify(json)).toBe(200);
    expectDocumented('POST', MR, res, json);
    const endMs = FROM_MS + 99_999 * 10_000;
    expect(json.end_date_time).toBe(new Date(endMs).toISOString().replace('.000Z', 'Z'));
    // Independent check: 3.6 kW steady, so each stored hourly price p counts 3.6 kWh x (hours of overlap) x p / 1000.
    const periods = new PriceStore(http.ctx.db).native('NL', FROM_MS, endMs);
    expect(periods.every((p) => p.durationS === 3600)).toBe(true);
    const expected = periods.reduce((sum, p) => {
      const overlapH = (Math.min(p.startMs + 3_600_000, endMs) - Math.max(p.startMs, FROM_MS)) / 3_600_000;
      return sum + (3.6 * overlapH * p.pricePerMwh) / 1000;
    }, 0);
    expect(json.total_cost.excl_vat).toBeCloseTo(expected, 4);
  });

  it('100,001 readings: 413 naming meter_readings', async () => {
    const body = readingsBody(100_001);
    expect(Buffer.byteLength(body)).toBeLessThan(defaults.body_limit_bytes);
    const res = await post(body);
    const json = (await res.json()) as { errors: Array<{ path: string }> };
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(json.errors.map((e) => e.path)).toEqual(['meter_readings']);
    expectDocumented('POST', MR, res, json);
  });

  it('a body one byte over 8 MB: 413 naming the body', async () => {
    const body = readingsBody(1000);
    const padded = body.slice(0, -1) + ' '.repeat(defaults.body_limit_bytes + 1 - Buffer.byteLength(body)) + '}';
    expect(Buffer.byteLength(padded)).toBe(defaults.body_limit_bytes + 1);
    const res = await post(padded);
    const json = (await res.json()) as { errors: Array<{ path: string }> };
    expect(res.status).toBe(413);
    expect(json.errors.map((e) => e.path)).toEqual(['(body)']);
    expectDocumented('POST', MR, res, json);
    // ...and exactly at the limit it is read (and priced).
    const atLimit = body.slice(0, -1) + ' '.repeat(defaults.body_limit_bytes - Buffer.byteLength(body)) + '}';
    expect((await post(atLimit)).status).toBe(200);
  });
});
