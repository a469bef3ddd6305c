// A session's cost covers exactly its stated window (issue 16 point 3), over real HTTP,
// with real NL 2025 prices imported into the gateway's SQLite file and a local meter's
// readings written through the real readings store, with the meter offline at an edge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadingsStore } from '../../src/store/readings.js';
import { expectDocumented } from '../helpers/openapi.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';

const METER = '0b6c3a52-8d1e-4f7a-9c2b-5e4d3c2b1a09';
const PM = { market_area_code: 'NL', sub_modality: 'DayAhead' };
const CDR = '/api/v1/cdrs/{cpo_transaction_id}';
const PUT = '/api/v1/sessions/{cpo_transaction_id}';
const at = (iso: string) => Date.parse(iso);
const POWER_W = 11_000;

// Real prices, nl-2025-quarterhour-local-utc.csv (UTC column), EUR/MWh:
// 2025-10-01 00:00Z 81.9, 00:15Z 81.5, 01:15Z 79.2, 01:30Z 80.0, 01:45Z 79.5.
const PRICE = { q0000: 81.9, q0015: 81.5, q0115: 79.2, q0130: 80.0, q0145: 79.5 };
/** Cost in EUR of steady 11 kW over `seconds` at `pricePerMwh`, summed: kWh x EUR/MWh / 1000. */
const steady = (...parts: Array<[seconds: number, pricePerMwh: number]>) => parts.reduce((sum, [s, p]) => sum + ((POWER_W / 1000) * (s / 3600) * p) / 1000, 0);
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

describe.skipIf(!hasSharedData)('sessions bill exactly start..end (real NL 2025 prices, real readings store)', () => {
  let http: TestHttp;
  let wide: TestHttp;
  let nowMs = at('2026-01-10T12:00:00Z');
  const clock = { now: () => nowMs };

  /** The meter's cumulative import at `t` at steady 11 kW, as the poller stores it (Wh). */
  const energyWhAt = (t: number) => 2_000_000 + (POWER_W * (t - at('2025-10-01T00:00:00Z'))) / 3_600_000;
  function poll(store: ReadingsStore, fromIso: string, toIso: string) {
    for (let t = at(fromIso); t <= at(toIso); t += 10_000) {
      store.insert({ resourceId: METER, sampledAtMs: t, metrics: [{ name: 'total_active_power', value: POWER_W, unit: 'W' }, { name: 'active_energy_import', value: energyWhAt(t), unit: 'Wh' }] });
    }
  }

  beforeAll(async () => {
    const meters = { buses: [{ name: 'rs485', type: 'tcp', host: '127.0.0.1' }], meters: [{ resource_id: METER, bus: 'rs485', unit_id: 1, profile: 'sdm630' }] };
    http = await startTestHttp({ config: meters, ctx: { clock } });
    wide = await startTestHttp({ config: { ...meters, sessions: { max_edge_gap_ms: 600_000 } }, ctx: { clock } });
    for (const server of [http, wide]) {
      loadNl2025Prices(server.ctx.db);
      const store = new ReadingsStore(server.ctx.db);
      // Polled every 10 s; the meter was offline from 01:10:00 to 01:20:00 and stopped after 01:50:00.
      poll(store, '2025-10-01T00:00:00Z', '2025-10-01T01:10:00Z');
      poll(store, '2025-10-01T01:20:00Z', '2025-10-01T01:50:00Z');
    }
  });
  afterAll(async () => {
    await http?.close();
    await wide?.close();
  });

  async function call(server: TestHttp, method: string, path: string, body?: unknown) {
    const token = server.token(method === 'PUT' ? 'cpo' : 'cdrs');
    const headers: Record<string, string> = { authorization: `Token ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await rawRequest(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { res, body: (text === '' ? undefined : JSON.parse(text)) as Record<string, any> };
  }
  async function priceLocal(server: TestHttp, id: string, startIso: string, endIso: string) {
    const put = await call(server, 'PUT', `/api/v1/sessions/${id}`, { power_market: PM, status: 'completed', start_date_time: startIso, end_date_time: endIso, resource_id: METER });
    expect(put.res.status).toBe(201);
    const got = await call(server, 'GET', `/api/v1/cdrs/${id}`);
    expectDocumented('GET', CDR, got.res, got.body);
    return got;
  }

  it('a local meter bills the whole session: both edges interpolated from the readings just outside', async () => {
    // 00:00:05 .. 00:29:55: 895 s in each quarter. Readings strictly inside only (00:00:10 .. 00:29:50)
    // would bill 885 s in each: 0.4419 instead of 0.4469.
    const r = await priceLocal(http, 'LOCAL-WHOLE', '2025-10-01T00:00:05Z', '2025-10-01T00:29:55Z');
    expect(r.res.status).toBe(200);
    const expected = steady([895, PRICE.q0000], [895, PRICE.q0015]);
    expect(r.body.total_cost).toEqual({ excl_vat: round4(expected) });
    expect(r.body.total_cost.excl_vat).toBe(0.4469);
    expect(r.body).toMatchObject({ start_date_time: '2025-10-01T00:00:05Z', end_date_time: '2025-10-01T00:29:55Z' });
  });

  it('422 naming the edge and the gap when the meter was offline at it; never a smaller cost', async () => {
    // Start 01:15:00 in the hole: the nearest reading before it is 01:10:00, 300 s away; the default gap is 3 x 10 s.
    let r = await priceLocal(http, 'LOCAL-OFFLINE-START', '2025-10-01T01:15:00Z', '2025-10-01T01:45:00Z');
    expect(r.res.status).toBe(422);
    expect(r.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(r.body.detail).toContain('start 2025-10-01T01:15:00Z');
    expect(r.body.errors).toEqual([{ path: 'start_date_time', message: expect.stringMatching(/before the start is 300 s away.*at most 30 s/) }]);
    // End 01:15:00 in the hole: the next reading is 01:20:00.
    r = await priceLocal(http, 'LOCAL-OFFLINE-END', '2025-10-01T01:00:00Z', '2025-10-01T01:15:00Z');
    expect(r.res.status).toBe(422);
    expect(r.body.errors).toEqual([{ path: 'end_date_time', message: expect.stringMatching(/after the end is 300 s away/) }]);
    // After the meter stopped for good: no reading after the end at all, long ago.
    r = await priceLocal(http, 'LOCAL-STOPPED', '2025-10-01T01:15:00Z', '2025-10-01T01:55:00Z');
    expect(r.res.status).toBe(422);
    expect(r.body.errors.map((e: { path: string; message: string }) => [e.path, e.message.split(';')[0]])).toEqual([
      ['start_date_time', 'the nearest stored reading before the start is 300 s away'],
      ['end_date_time', 'the meter has no stored reading after the end'],
    ]);
  });

  it('a wider configured gap (sessions.max_edge_gap_ms) interpolates across the outage', async () => {
    // 01:15..01:45 at steady 11 kW: 2.75 kWh x 79.2 + 2.75 kWh x 80.0 = 437.8 -> 0.4378
    const r = await priceLocal(wide, 'LOCAL-WIDE', '2025-10-01T01:15:00Z', '2025-10-01T01:45:00Z');
    expect(r.res.status).toBe(200);
    expect(r.body.total_cost.excl_vat).toBe(round4(steady([900, PRICE.q0115], [900, PRICE.q0130])));
    expect(r.body.total_cost.excl_vat).toBe(0.4378);
  });

  it('503 with Retry-After while the reading after the end is not taken yet, then the whole session', async () => {
    const saved = nowMs;
    try {
      nowMs = at('2025-10-01T01:50:05Z');
      let r = await priceLocal(http, 'LOCAL-JUST-ENDED', '2025-10-01T01:40:00Z', '2025-10-01T01:50:02Z');
      expect(r.res.status).toBe(503);
      // The next poll may arrive until end + 30 s = 01:50:32, 27 s from now.
      expect(r.res.headers.get('retry-after')).toBe('27');
      expect(r.body.detail).toMatch(/no reading after the session's end yet/);
      // The poller stores the next reading; the price record is then the whole session.
      poll(new ReadingsStore(http.ctx.db), '2025-10-01T01:50:10Z', '2025-10-01T01:50:10Z');
      nowMs = at('2025-10-01T01:50:11Z');
      r = await call(http, 'GET', '/api/v1/cdrs/LOCAL-JUST-ENDED');
      expect(r.res.status).toBe(200);
      expect(r.body.total_cost.excl_vat).toBe(round4(steady([300, PRICE.q0130], [302, PRICE.q0145])));
    } finally {
      nowMs = saved;
    }
  });

  it('the retention purge keeps the readings an edge is interpolated from', async () => {
    const before = (await call(http, 'GET', '/api/v1/cdrs/LOCAL-WHOLE')).body;
    // Everything is past a retention cutoff in 2026; 00:00:00 and 00:30:00 lie 5 s beyond LOCAL-WHOLE's edges.
    new ReadingsStore(http.ctx.db).purgeBefore(at('2026-01-01T00:00:00Z'), 30_000);
    const after = await call(http, 'GET', '/api/v1/cdrs/LOCAL-WHOLE');
    expect(after.res.status).toBe(200);
    expect(after.body).toEqual(before);
  });

  it('readings sent with a session are billed only inside start..end (cut at the edges by the even-spread rule)', async () => {
    // 00:00 100, 00:10 102, 00:20 104.5, 00:30 106 kWh; window 00:05..00:25:
    // 2.25 kWh in the 00:00Z quarter (81.9) + 2.0 kWh in the 00:15Z quarter (81.5) = 347.275 -> 0.3473
    // (all four readings would bill 3.25 x 81.9 + 2.75 x 81.5 = 490.3 -> 0.4903)
    const readings = [
      { reading_kwh: 100, timestamp: '2025-10-01T00:00:00Z' },
      { reading_kwh: 102, timestamp: '2025-10-01T00:10:00Z' },
      { reading_kwh: 104.5, timestamp: '2025-10-01T00:20:00Z' },
      { reading_kwh: 106, timestamp: '2025-10-01T00:30:00Z' },
    ];
    const body = { power_market: PM, status: 'completed', start_date_time: '2025-10-01T00:05:00Z', end_date_time: '2025-10-01T00:25:00Z', meter_readings: readings };
    let r = await call(http, 'PUT', '/api/v1/sessions/OWN-CUT', body);
    expect(r.res.status).toBe(201);
    r = await call(http, 'GET', '/api/v1/cdrs/OWN-CUT');
    expect(r.res.status).toBe(200);
    expect(r.body).toMatchObject({ start_date_time: '2025-10-01T00:05:00Z', end_date_time: '2025-10-01T00:25:00Z', total_cost: { excl_vat: 0.3473 } });
    expect(round4((2.25 * PRICE.q0000 + 2.0 * PRICE.q0015) / 1000)).toBe(0.3473);
    // The same readings priced ad hoc (no window) bill all of them.
    r = await call(http, 'POST', '/api/v1/cdrs/meter_readings', { power_market: PM, meter_readings: readings });
    expect(r.body.total_cost).toEqual({ excl_vat: 0.4903 });

    // Readings that bill no part of the window are refused at ingest, naming them.
    r = await call(http, 'PUT', '/api/v1/sessions/OWN-OUTSIDE', { ...body, start_date_time: '2025-10-01T00:40:00Z', end_date_time: '2025-10-01T00:50:00Z' });
    expect(r.res.status).toBe(422);
    expect(r.body.errors[0].path).toBe('meter_readings');
    expect(r.body.detail).toMatch(/not billed/);
    expectDocumented('PUT', PUT, r.res, r.body);
  });
});

if (!hasSharedData) console.warn(SKIP_REASON);
