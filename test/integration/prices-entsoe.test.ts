// The ENTSO-E path against a local HTTP server standing in for the platform: the two
// real A44 recordings, documents built in the same layout from real NL prices, and the
// platform's failure modes (429, 503, a truncated body, a refused token).
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PricePeriod } from '../../src/domain.js';
import { createLogger } from '../../src/log.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { EntsoeRequestError, EntsoeSource, EntsoeUnavailableError, planRequests } from '../../src/prices/sources/entsoe.js';
import { parseA44 } from '../../src/prices/sources/entsoe-xml.js';
import { httpGet, type HttpGet } from '../../src/prices/sources/http-get.js';
import { addLocalDays, localDayStartMs } from '../../src/prices/timezone.js';
import { a03Points, buildA44, buildAcknowledgement } from '../helpers/a44.js';
import { FakePlatform, paramMs } from '../helpers/entsoe-server.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const NL = requireMarket('NL');
const DE = requireMarket('DE-LU');
const TOKEN = 'test-token-7f3a9c';
const iso = (ms: number) => new Date(ms).toISOString();

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { logger: createLogger('debug', stream), lines };
}

describe.skipIf(!hasSharedData)(`ENTSO-E A44 source${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  const recorded2021 = hasSharedData ? readFileSync(sharedData('entsoe/a44-de-lu-2021-01-01.xml'), 'utf8') : '';
  const recorded2024 = hasSharedData ? readFileSync(sharedData('entsoe/a44-de-lu-2024-10-06-60m-15m.xml'), 'utf8') : '';
  let nl2025: PricePeriod[];
  let platform: FakePlatform;
  let baseUrl: string;
  /** Documents keyed by periodStart the platform serves; anything else gets an Acknowledgement. */
  const docs = new Map<string, string>();

  const source = (logger = capture().logger, extra: Partial<ConstructorParameters<typeof EntsoeSource>[0]> = {}) =>
    new EntsoeSource({ baseUrl, securityToken: TOKEN, maxRequestsPerMinute: 300, timeoutMs: 5000, backoffBaseMs: 5, backoffMaxMs: 20, ...extra }, { logger });
  const nlDay = (date: string) => {
    const from = localDayStartMs(NL.timeZone, date);
    return { from, to: addLocalDays(NL.timeZone, from, 1) };
  };
  const nlPrices = (from: number, to: number) => nl2025.filter((p) => p.startMs >= from && p.startMs < to);

  beforeAll(async () => {
    nl2025 = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), NL).periods;
    platform = new FakePlatform((req) => {
      const body = docs.get(`${req.params.in_Domain}/${req.params.periodStart}`);
      return body ? { kind: 'xml', body } : { kind: 'xml', body: buildAcknowledgement(), status: 200 };
    });
    baseUrl = await platform.start();
    docs.set('10Y1001A1001A82H/202012312300', recorded2021);
    docs.set('10Y1001A1001A82H/202410052200', recorded2024);
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('asks for A44 with the EIC in both domains, UTC yyyyMMddHHmm and the token', async () => {
    const before = platform.requests.length;
    const r = await source().fetchDayAhead(DE, Date.UTC(2020, 11, 31, 23), Date.UTC(2021, 0, 2, 23));
    const req = platform.requests[before];
    expect(req.params).toEqual({
      documentType: 'A44',
      in_Domain: '10Y1001A1001A82H',
      out_Domain: '10Y1001A1001A82H',
      periodStart: '202012312300',
      periodEnd: '202101022300',
      securityToken: TOKEN,
    });
    expect(r.requests).toBe(1);
  });

  it('recording 2021-01-01: picks the PT60M series (sequence 1, native 60 min) and fills the left-out A03 position', async () => {
    const r = await source().fetchDayAhead(DE, Date.UTC(2020, 11, 31, 23), Date.UTC(2021, 0, 2, 23));
    expect(r.periods).toHaveLength(48);
    expect(r.periods.every((p) => p.durationS === 3600)).toBe(true);
    expect(r.periods[0]).toEqual({ marketArea: 'DE-LU', startMs: Date.UTC(2020, 11, 31, 23), durationS: 3600, pricePerMwh: 50.87 });
    // 2021-01-02: position 11 (09:00Z) is left out because it repeats position 10 (52 EUR/MWh).
    const at = (h: number) => r.periods.find((p) => p.startMs === Date.UTC(2021, 0, 2, h))!.pricePerMwh;
    expect([at(8), at(9), at(10)]).toEqual([52, 52, 52.15]);
    const parsed = parseA44(recorded2021, DE);
    expect(parsed.kind === 'prices' && parsed.series.map((s) => [s.resolutionS, s.sequence, s.points, s.chosen])).toEqual([
      [900, 2, 96, false],
      [3600, 1, 24, true],
      [900, 2, 96, false],
      [3600, 1, 23, true],
    ]);
  });

  it('recording 2024-10-06: negative prices, one left out inside the period, sequence 2 (PT15M) never merged in', async () => {
    const r = await source().fetchDayAhead(DE, Date.UTC(2024, 9, 5, 22), Date.UTC(2024, 9, 7, 22));
    expect(r.periods).toHaveLength(48);
    expect(new Set(r.periods.map((p) => p.durationS))).toEqual(new Set([3600]));
    expect(r.periods.filter((p) => p.pricePerMwh < 0).map((p) => [iso(p.startMs), p.pricePerMwh])).toEqual([
      ['2024-10-06T11:00:00.000Z', -0.01],
      ['2024-10-06T12:00:00.000Z', -0.01], // position 15, left out: repeats position 14
    ]);
  });

  it('DE-LU: a document with only sequence 2 (EXAA) gives nothing yet, never EXAA prices as SDAC', () => {
    // The real 2024 recording with its sequence-1 TimeSeries cut out.
    const first = recorded2024.indexOf('<TimeSeries>');
    const second = recorded2024.indexOf('<TimeSeries>', first + 1);
    const onlySeq2 = recorded2024.slice(0, first) + recorded2024.slice(second);
    expect(onlySeq2).not.toMatch(/position>1<\/classificationSequence/);
    const parsed = parseA44(onlySeq2, DE);
    expect(parsed.kind === 'prices' && parsed.periods).toEqual([]);
    expect(parsed.kind === 'prices' && parsed.skipped.map((x) => [iso(x.startMs), x.reason])).toEqual([
      ['2024-10-05T22:00:00.000Z', 'only classificationSequence 2; the SDAC price of DE-LU is at 1'],
      ['2024-10-06T22:00:00.000Z', 'only classificationSequence 2; the SDAC price of DE-LU is at 1'],
    ]);
  });

  it('after the switch the native series is PT15M: a real NL day of 96 quarter-hours (A03)', async () => {
    const { from, to } = nlDay('2025-10-02');
    const real = nlPrices(from, to);
    expect(real).toHaveLength(96);
    const doc = buildA44([
      { eic: NL.eic[0].value.code, curveType: 'A03', periods: [{ startMs: from, endMs: to, resolution: 'PT15M', points: a03Points(real.map((p) => p.pricePerMwh)) }] },
    ]);
    expect(a03Points(real.map((p) => p.pricePerMwh)).length).toBeLessThan(96);
    docs.set(`10YNL----------L/${'202510012200'}`, doc);
    const r = await source().fetchDayAhead(NL, from, to);
    expect(r.periods).toEqual(real);
  });

  it('a left-out position at the end of a period repeats through the period end', async () => {
    // First real NL quarter-hour day whose last quarter repeats the one before it.
    let day = localDayStartMs(NL.timeZone, '2025-10-01');
    let real: PricePeriod[] = [];
    for (; day < Date.UTC(2025, 11, 31); day = addLocalDays(NL.timeZone, day, 1)) {
      real = nlPrices(day, addLocalDays(NL.timeZone, day, 1));
      if (real.length === 96 && real[95].pricePerMwh === real[94].pricePerMwh) break;
    }
    expect(real).toHaveLength(96);
    const points = a03Points(real.map((p) => p.pricePerMwh));
    expect(points[points.length - 1].position).toBeLessThan(96);
    const parsed = parseA44(buildA44([{ eic: '10YNL----------L', curveType: 'A03', periods: [{ startMs: day, endMs: day + 96 * 900_000, resolution: 'PT15M', points }] }]), NL);
    expect(parsed.kind === 'prices' && parsed.periods).toEqual(real);
  });

  it('a 23-hour spring day (PT60M, A01, namespace 7:0 with a prefix)', () => {
    const { from, to } = nlDay('2025-03-30');
    expect(to - from).toBe(23 * 3_600_000);
    const real = nlPrices(from, to);
    expect(real).toHaveLength(23);
    const doc = buildA44(
      [{ eic: '10YNL----------L', curveType: 'A01', periods: [{ startMs: from, endMs: to, resolution: 'PT60M', points: real.map((p, i) => ({ position: i + 1, price: p.pricePerMwh })) }] }],
      { namespace: '7:0', prefix: 'ns2' },
    );
    const parsed = parseA44(doc, NL);
    expect(parsed.kind === 'prices' && parsed.periods).toEqual(real);
  });

  it('a 25-hour autumn day (PT15M, 100 positions): positions map to UTC; the hour the file lacks stays empty under A01', () => {
    const { from, to } = nlDay('2025-10-26');
    expect(to - from).toBe(25 * 3_600_000);
    const real = nlPrices(from, to);
    expect(real).toHaveLength(96); // the recording lacks 01:00-02:00Z
    const points = real.map((p) => ({ position: (p.startMs - from) / 900_000 + 1, price: p.pricePerMwh }));
    expect(points[points.length - 1].position).toBe(100);
    const parsed = parseA44(buildA44([{ eic: '10YNL----------L', curveType: 'A01', periods: [{ startMs: from, endMs: to, resolution: 'PT15M', points }] }]), NL);
    expect(parsed.kind === 'prices' && parsed.periods).toEqual(real);
    expect(parsed.kind === 'prices' && parsed.periods.some((p) => p.startMs === Date.UTC(2025, 9, 26, 1))).toBe(false);
  });

  it('an Acknowledgement ("no matching data") is nothing yet, not an error', async () => {
    const r = await source().fetchDayAhead(NL, Date.UTC(2030, 0, 1), Date.UTC(2030, 0, 2));
    expect(r).toEqual({ periods: [], requests: 1, noDataChunks: 1 });
    expect(parseA44(buildAcknowledgement(), NL)).toMatchObject({ kind: 'no-data', reason: expect.stringMatching(/^999: No matching data/) });
    expect(() => parseA44(buildAcknowledgement('Invalid query attributes or parameters'), NL)).toThrow(/platform refused the request: 999: Invalid query/);
  });

  it('chunks requests to at most one local year and splits where DE-AT-LU became DE-LU', () => {
    const plan = planRequests(DE, localDayStartMs(DE.timeZone, '2018-01-01'), localDayStartMs(DE.timeZone, '2020-03-01'));
    expect(plan.map((p) => [iso(p.fromMs), iso(p.toMs), p.eic])).toEqual([
      ['2017-12-31T23:00:00.000Z', '2018-09-30T22:00:00.000Z', '10Y1001A1001A63L'],
      ['2018-09-30T22:00:00.000Z', '2018-12-31T23:00:00.000Z', '10Y1001A1001A82H'],
      ['2018-12-31T23:00:00.000Z', '2019-12-31T23:00:00.000Z', '10Y1001A1001A82H'],
      ['2019-12-31T23:00:00.000Z', '2020-02-29T23:00:00.000Z', '10Y1001A1001A82H'],
    ]);
    expect(plan.every((p) => p.toMs - p.fromMs <= 366 * 86_400_000)).toBe(true);
  });

  it('retries HTTP 429 and 503 and a truncated body, then succeeds; never logs the token', async () => {
    const { logger, lines } = capture();
    platform.queue.push({ kind: 'status', status: 429, retryAfterS: 0 }, { kind: 'status', status: 503 }, { kind: 'truncated', body: recorded2021 });
    const before = platform.requests.length;
    const r = await source(logger).fetchDayAhead(DE, Date.UTC(2020, 11, 31, 23), Date.UTC(2021, 0, 2, 23));
    expect(platform.requests.length - before).toBe(4);
    expect(r.periods).toHaveLength(48);
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.msg.includes('retrying'));
    expect(warnings.map((w) => w.problem)).toEqual(['HTTP 429', 'HTTP 503', expect.stringMatching(/TypeError: terminated|truncated/)]);
    expect(lines.join('')).not.toContain(TOKEN);
  });

  it('gives up after the configured attempts on a platform that keeps failing; a refused token is not retried', async () => {
    platform.queue.push(...Array.from({ length: 3 }, () => ({ kind: 'status' as const, status: 503 })));
    await expect(source(undefined, { maxAttempts: 3 }).fetchDayAhead(NL, Date.UTC(2030, 0, 1), Date.UTC(2030, 0, 2))).rejects.toThrow(EntsoeUnavailableError);
    platform.queue.push({ kind: 'status', status: 401 });
    const before = platform.requests.length;
    await expect(source().fetchDayAhead(NL, Date.UTC(2030, 0, 1), Date.UTC(2030, 0, 2))).rejects.toThrow(EntsoeRequestError);
    expect(platform.requests.length - before).toBe(1);
  });

  it('never starts more requests than max_requests_per_minute in any minute, retries included; honours Retry-After', async () => {
    // A clock that moves only when the source waits (rate limit, backoff), so the schedule
    // is checked without waiting for it.
    let nowMs = 0;
    const clock = { now: () => nowMs, sleep: async (ms: number) => void (nowMs += ms) };
    const startedAt: number[] = [];
    const counting: HttpGet = (url, init) => {
      startedAt.push(nowMs);
      return httpGet(url, init);
    };
    const src = new EntsoeSource(
      { baseUrl, securityToken: TOKEN, maxRequestsPerMinute: 2, timeoutMs: 5000, backoffBaseMs: 5, backoffMaxMs: 20 },
      { logger: capture().logger, clock, get: counting },
    );
    // Three local years = three requests (Acknowledgements here), plus a 503 retried and a
    // 429 that asks for two minutes.
    platform.queue.push({ kind: 'status', status: 503 }, { kind: 'status', status: 429, retryAfterS: 120 });
    const from = localDayStartMs(NL.timeZone, '2031-01-01');
    const r = await src.fetchDayAhead(NL, from, localDayStartMs(NL.timeZone, '2034-01-01'));
    expect(r).toEqual({ periods: [], requests: 3, noDataChunks: 3 });
    expect(startedAt).toHaveLength(5);
    for (const t of startedAt) expect(startedAt.filter((x) => x >= t && x < t + 60_000).length).toBeLessThanOrEqual(2);
    expect(startedAt[2] - startedAt[1]).toBeGreaterThanOrEqual(120_000); // Retry-After: 120 after the 429
  });

  it('serves requests whose periodStart the test server parses back (helper sanity)', () => {
    expect(paramMs('202012312300')).toBe(Date.UTC(2020, 11, 31, 23));
  });
});
