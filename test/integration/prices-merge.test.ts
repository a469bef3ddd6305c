// How new prices meet stored ones, in a real SQLite file behind the real HTTP API: a
// coarser source never replaces finer prices (only fills holes, or replaces with
// --replace and says what it replaced), corrections from the same or a better source do
// and move the sessions' last_updated, and a document in another currency is refused.
// Prices are real: NL quarter-hours of nl-2025-quarterhour-local-utc.csv served as an
// ENTSO-E document by the local platform stand-in, the recorded DE-LU A44 document and the
// DE-LU history file.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PricePeriod } from '../../src/domain.js';
import { createLogger } from '../../src/log.js';
import { importPriceFile } from '../../src/prices/import.js';
import { requireMarket } from '../../src/prices/markets.js';
import { CsvImportError, parsePriceCsv } from '../../src/prices/sources/csv.js';
import { EntsoeSource } from '../../src/prices/sources/entsoe.js';
import { EntsoeDocumentError, parseA44 } from '../../src/prices/sources/entsoe-xml.js';
import { addLocalDays, localDayStartMs } from '../../src/prices/timezone.js';
import { openDatabase } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { mergePrices } from '../../src/prices/price-merge.js';
import { a03Points, buildA44 } from '../helpers/a44.js';
import { FakePlatform } from '../helpers/entsoe-server.js';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const NL = requireMarket('NL');
const DE = requireMarket('DE-LU');
const TOKEN = 'merge-token-5e1b';
const iso = (ms: number) => new Date(ms).toISOString();
const isoMin = (ms: number) => iso(ms).replace(':00.000Z', 'Z');
const day = (date: string) => {
  const from = localDayStartMs(NL.timeZone, date);
  return { from, to: addLocalDays(NL.timeZone, from, 1) };
};

/** Hourly means of quarter-hour periods, as an hourly source publishes them. */
function hourlyMeans(quarters: readonly PricePeriod[]): PricePeriod[] {
  const out: PricePeriod[] = [];
  for (let i = 0; i + 4 <= quarters.length; i += 4) {
    const four = quarters.slice(i, i + 4);
    expect(four[3].startMs - four[0].startMs).toBe(2_700_000);
    const mean = Math.round((four.reduce((s, p) => s + p.pricePerMwh, 0) / 4) * 100) / 100;
    out.push({ marketArea: 'NL', startMs: four[0].startMs, durationS: 3600, pricePerMwh: mean });
  }
  return out;
}

function genericCsv(file: string, periods: readonly PricePeriod[], currency?: string): string {
  const head = currency ? 'start,price_per_mwh,duration_s,currency' : 'start,price_per_mwh,duration_s';
  writeFileSync(file, [head, ...periods.map((p) => `${iso(p.startMs)},${p.pricePerMwh},${p.durationS}${currency ? `,${currency}` : ''}`)].join('\n') + '\n');
  return file;
}

describe.skipIf(!hasSharedData)(`merging prices into stored ones${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let http: TestHttp;
  let store: PriceStore;
  let platform: FakePlatform;
  let source: EntsoeSource;
  let nl2025: PricePeriod[];
  let nowMs = Date.parse('2026-01-10T12:00:00Z');
  let cdrs: string;
  let cpo: string;
  const docs = new Map<string, string>();
  const recorded2021 = hasSharedData ? readFileSync(sharedData('entsoe/a44-de-lu-2021-01-01.xml'), 'utf8') : '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-prices-merge-'));
    nl2025 = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), NL).periods;
    platform = new FakePlatform((req) => {
      const body = docs.get(`${req.params.in_Domain}/${req.params.periodStart}`);
      return body ? { kind: 'xml', body } : { kind: 'status', status: 400 };
    });
    const baseUrl = await platform.start();
    source = new EntsoeSource({ baseUrl, securityToken: TOKEN, maxRequestsPerMinute: 300, timeoutMs: 10_000, backoffBaseMs: 5, backoffMaxMs: 20 }, { logger: createLogger('silent') });
    http = await startTestHttp({ ctx: { clock: { now: () => nowMs } } });
    store = new PriceStore(http.ctx.db);
    cdrs = http.token('cdrs');
    cpo = http.token('cpo');
  });
  afterAll(async () => {
    await http?.close();
    await platform?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const quarterHours = (from: number, to: number) => nl2025.filter((p) => p.startMs >= from && p.startMs < to);
  /** Serves the real NL quarter-hours of [from, to) as an A03 PT15M document for that request. */
  function serveNl(from: number, to: number, prices = quarterHours(from, to)): void {
    docs.set(`10YNL----------L/${iso(from).slice(0, 16).replace(/[-:T]/g, '')}`, buildA44([{ eic: '10YNL----------L', curveType: 'A03', periods: [{ startMs: from, endMs: to, resolution: 'PT15M', points: a03Points(prices.map((p) => p.pricePerMwh)) }] }]));
  }

  async function call(method: string, path: string, token: string, body?: unknown) {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const res = await rawRequest(`${http.url}${path}`, { method, headers: { authorization: `Token ${token}`, ...(payload ? { 'content-type': 'application/json' } : {}) }, body: payload });
    const text = await res.text();
    return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as Record<string, any> };
  }

  it('an hourly CSV over native ENTSO-E quarter-hours keeps them and only fills the day without prices; with replace it says what it replaced and the session follows', async () => {
    const d1 = day('2025-10-02');
    const d2 = day('2025-10-03');
    serveNl(d1.from, d1.to);
    const fetched = await source.fetchDayAhead(NL, d1.from, d1.to);
    expect(fetched.periods).toEqual(quarterHours(d1.from, d1.to));
    const first = mergePrices(store, fetched.periods, { source: 'entsoe', fetchedAtMs: nowMs });
    expect([first.written, first.counts.filled]).toEqual([96, 96]);

    // A session 2025-10-02 08:00Z..08:30Z of 2 kWh: one kWh in each of two quarter-hours.
    const q = quarterHours(Date.parse('2025-10-02T08:00:00Z'), Date.parse('2025-10-02T09:00:00Z'));
    expect(q.map((p) => p.pricePerMwh)).toEqual([99.8, 96, 83.2, 74]);
    const session = {
      power_market: { market_area_code: 'NL', sub_modality: 'DayAhead' },
      status: 'completed',
      start_date_time: '2025-10-02T08:00:00Z',
      end_date_time: '2025-10-02T08:30:00Z',
      meter_readings: [
        { reading_kwh: 100, timestamp: '2025-10-02T08:00:00Z' },
        { reading_kwh: 102, timestamp: '2025-10-02T08:30:00Z' },
      ],
    };
    expect((await call('PUT', '/api/v1/sessions/MERGE-1', cpo, session)).status).toBe(201);
    nowMs += 60_000;
    const priced = (await call('GET', '/api/v1/cdrs/MERGE-1', cdrs)).body;
    // 1 kWh x 99.8 + 1 kWh x 96 = 195.8 EUR/MWh x kWh -> 0.1958 EUR
    expect(priced.total_cost).toEqual({ excl_vat: 0.1958 });

    // The hourly means of both days, as an hourly source publishes them (08:00Z: 88.25).
    const hourly = hourlyMeans(quarterHours(d1.from, d2.to));
    expect(hourly).toHaveLength(48);
    expect(hourly.find((p) => p.startMs === Date.parse('2025-10-02T08:00:00Z'))!.pricePerMwh).toBe(88.25);
    const file = genericCsv(join(dir, 'nl-hourly-2025-10-02-03.csv'), hourly);

    nowMs += 60_000;
    const kept = importPriceFile(store, file, 'NL', nowMs);
    expect(kept.merge.counts).toMatchObject({ filled: 24, 'kept-finer': 24, replaced: 0, corrected: 0 });
    expect(kept.merge.runs.map((r) => [r.outcome, isoMin(r.fromMs), isoMin(r.toMs), r.incomingPeriods, r.incomingDurationS, r.storedPeriods, r.storedDurationsS, r.storedSources])).toEqual([
      ['kept-finer', '2025-10-01T22:00Z', '2025-10-02T22:00Z', 24, 3600, 96, [900], ['entsoe']],
      ['filled', '2025-10-02T22:00Z', '2025-10-03T22:00Z', 24, 3600, 0, [], []],
    ]);
    expect(store.native('NL', d1.from, d1.to)).toEqual(quarterHours(d1.from, d1.to));
    expect(store.native('NL', d2.from, d2.to)).toEqual(hourly.slice(24));
    nowMs += 60_000;
    expect((await call('GET', '/api/v1/cdrs/MERGE-1', cdrs)).body).toEqual(priced); // same cost, same last_updated

    // Asked for explicitly: the hourly prices replace the quarter-hours, and the session is repriced.
    nowMs += 60_000;
    const replacedAt = nowMs;
    const replaced = importPriceFile(store, file, 'NL', nowMs, { replace: true });
    expect(replaced.merge.counts).toMatchObject({ replaced: 24, unchanged: 24, 'kept-finer': 0 });
    const run = replaced.merge.runs.find((r) => r.outcome === 'replaced')!;
    expect([isoMin(run.fromMs), isoMin(run.toMs), run.storedPeriods, run.storedDurationsS, run.storedSources]).toEqual(['2025-10-01T22:00Z', '2025-10-02T22:00Z', 96, [900], ['entsoe']]);
    // The largest |hourly mean - quarter-hour| of the day, computed from the real prices.
    const spread = Math.max(...quarterHours(d1.from, d1.to).map((p) => Math.abs(p.pricePerMwh - hourly.find((h) => h.startMs <= p.startMs && p.startMs < h.startMs + 3_600_000)!.pricePerMwh)));
    expect(run.maxChangePerMwh).toBeCloseTo(spread, 9);
    expect(store.native('NL', d1.from, d1.to)).toEqual(hourly.slice(0, 24));
    nowMs += 60_000;
    const repriced = (await call('GET', '/api/v1/cdrs/MERGE-1', cdrs)).body;
    // 2 kWh x 88.25 = 176.5 -> 0.1765 EUR, and last_updated is the import that changed its prices (a GET changes nothing).
    expect(repriced.total_cost).toEqual({ excl_vat: 0.1765 });
    expect(Date.parse(repriced.last_updated)).toBe(replacedAt);
    expect(repriced.id).toBe(priced.id);

    // ENTSO-E (a better source) refines the hourly day 2 back to quarter-hours: finer replaces
    // coarser when it tiles every hour.
    serveNl(d2.from, d2.to);
    const refined = mergePrices(store, (await source.fetchDayAhead(NL, d2.from, d2.to)).periods, { source: 'entsoe', fetchedAtMs: nowMs });
    expect(refined.counts).toMatchObject({ refined: 96, filled: 0 });
    expect(refined.runs.map((r) => [r.outcome, r.incomingPeriods, r.storedPeriods, r.storedDurationsS])).toEqual([['refined', 96, 24, [3600]]]);
    expect(store.native('NL', d2.from, d2.to)).toEqual(quarterHours(d2.from, d2.to));
  });

  it('finer prices covering only part of a stored hour leave the hour as it is (A01 with a position left out)', async () => {
    const d = day('2025-10-04');
    const hourly = hourlyMeans(quarterHours(d.from, d.to));
    importPriceFile(store, genericCsv(join(dir, 'nl-hourly-2025-10-04.csv'), hourly), 'NL', nowMs);
    const real = quarterHours(d.from, d.to);
    // Position 42 (08:15Z; the day starts 2025-10-03T22:00Z) left out of an A01 series: that quarter has no price.
    const points = real.map((p, i) => ({ position: i + 1, price: p.pricePerMwh })).filter((p) => p.position !== 42);
    docs.set(`10YNL----------L/${iso(d.from).slice(0, 16).replace(/[-:T]/g, '')}`, buildA44([{ eic: '10YNL----------L', curveType: 'A01', periods: [{ startMs: d.from, endMs: d.to, resolution: 'PT15M', points }] }]));
    const fetched = await source.fetchDayAhead(NL, d.from, d.to);
    expect(fetched.periods).toHaveLength(95);
    const r = mergePrices(store, fetched.periods, { source: 'entsoe', fetchedAtMs: nowMs });
    expect(r.counts).toMatchObject({ refined: 92, 'kept-partial': 3 });
    expect(r.runs.filter((x) => x.outcome === 'kept-partial').map((x) => [isoMin(x.fromMs), isoMin(x.toMs), x.storedPeriods, x.storedDurationsS])).toEqual([
      ['2025-10-04T08:00Z', '2025-10-04T09:00Z', 1, [3600]],
    ]);
    const stored = store.native('NL', d.from, d.to);
    expect(stored.find((p) => p.startMs === Date.parse('2025-10-04T08:00:00Z'))).toEqual(hourly.find((p) => p.startMs === Date.parse('2025-10-04T08:00:00Z')));
    expect(stored.filter((p) => p.durationS === 900)).toHaveLength(92);
    expect(store.gapsIn('NL', d.from, d.to)).toEqual([]);
  });

  it('same resolution: ENTSO-E takes over a CSV, corrects itself, and a CSV cannot overwrite it without replace (real DE-LU recording and history file)', async () => {
    const db = openDatabase(join(dir, 'de.db'));
    const de = new PriceStore(db);
    try {
      const csv = importPriceFile(de, sharedData('prices/de-lu-2018-2023h1-entsoe-hourly.csv'), 'DE-LU', 1);
      expect(csv.merge.counts.filled).toBe(csv.written);
      const [from, to] = [Date.UTC(2020, 11, 31, 23), Date.UTC(2021, 0, 2, 23)];
      docs.set('10Y1001A1001A82H/202012312300', recorded2021);
      const doc = await source.fetchDayAhead(DE, from, to);
      expect(doc.periods).toHaveLength(48);
      // The recording and the history file agree on all 48 hours: provenance moves to entsoe, prices stay.
      const same = mergePrices(de, doc.periods, { source: 'entsoe', fetchedAtMs: 2 });
      expect(same.counts).toMatchObject({ unchanged: 48, corrected: 0 });
      expect(new Set(de.nativeWithProvenance('DE-LU', from, to).map((p) => p.source))).toEqual(new Set(['entsoe']));

      // A corrected publication: the first hour's 50.87 becomes the second hour's price.
      const second = doc.periods[1].pricePerMwh;
      expect(recorded2021).toContain('<price.amount>50.87</price.amount>');
      docs.set('10Y1001A1001A82H/202012312300', recorded2021.replace('<price.amount>50.87</price.amount>', `<price.amount>${second}</price.amount>`));
      const fix = mergePrices(de, (await source.fetchDayAhead(DE, from, to)).periods, { source: 'entsoe', fetchedAtMs: 3 });
      expect(fix.counts).toMatchObject({ corrected: 1, unchanged: 47 });
      expect(fix.runs).toEqual([expect.objectContaining({ outcome: 'corrected', fromMs: from, toMs: from + 3_600_000, storedSources: ['entsoe'], maxChangePerMwh: Math.abs(50.87 - second) })]);
      expect(de.native('DE-LU', from, from + 1)[0].pricePerMwh).toBe(second);

      // The history file again: same resolution, lower-ranked source: the corrected hour is kept.
      const again = importPriceFile(de, sharedData('prices/de-lu-2018-2023h1-entsoe-hourly.csv'), 'DE-LU', 4);
      expect(again.merge.counts['kept-better-source']).toBe(1);
      expect(again.merge.runs.filter((r) => r.outcome !== 'filled')).toEqual([expect.objectContaining({ outcome: 'kept-better-source', fromMs: from, storedSources: ['entsoe'] })]);
      expect(de.nativeWithProvenance('DE-LU', from, from + 1)[0]).toMatchObject({ pricePerMwh: second, source: 'entsoe', fetchedAtMs: 3 });
    } finally {
      db.close();
    }
  });

  it('a document or file whose currency is not the market\'s is refused, nothing stored', async () => {
    // The real recording as if it were in PLN.
    const pln = recorded2021.replaceAll('<currency_Unit.name>EUR</currency_Unit.name>', '<currency_Unit.name>PLN</currency_Unit.name>');
    expect(pln).not.toBe(recorded2021);
    expect(() => parseA44(pln, DE)).toThrow(EntsoeDocumentError);
    expect(() => parseA44(pln, DE)).toThrow("TimeSeries 1: prices in PLN, but DE-LU's day-ahead prices are in EUR (src/prices/markets.json); document refused, nothing stored");
    docs.set('10Y1001A1001A82H/202012312300', pln);
    await expect(source.fetchDayAhead(DE, Date.UTC(2020, 11, 31, 23), Date.UTC(2021, 0, 2, 23))).rejects.toThrow(/prices in PLN/);

    const d = day('2025-10-05');
    const fresh = new PriceStore(openDatabase(join(dir, 'currency.db')));
    const gbp = genericCsv(join(dir, 'gbp.csv'), quarterHours(d.from, d.to), 'GBP');
    expect(() => importPriceFile(fresh, gbp, 'NL', nowMs)).toThrow(CsvImportError);
    expect(() => importPriceFile(fresh, gbp, 'NL', nowMs)).toThrow(/^line 2: currency "GBP", but NL's day-ahead prices are in EUR/);
    expect(fresh.hasPrices('NL')).toBe(false);
    const eur = importPriceFile(fresh, genericCsv(join(dir, 'eur.csv'), quarterHours(d.from, d.to), 'eur'), 'NL', nowMs);
    expect(eur.written).toBe(96);
  });

  it('CLI: prices import lists what it kept and, with --replace, what it replaced', () => {
    const dbFile = join(dir, 'cli.db');
    const run = (...args: string[]) => execFileSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { encoding: 'utf8' });
    const db = openDatabase(dbFile);
    importPriceFile(new PriceStore(db), sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'NL', nowMs);
    db.close();
    const hourly = hourlyMeans(quarterHours(day('2025-10-02').from, day('2025-10-04').from));
    const file = genericCsv(join(dir, 'cli-hourly.csv'), hourly);
    const kept = run('prices', 'import', file, '--region', 'NL', '--db', dbFile);
    expect(kept).toContain('0 new, 0 unchanged, 0 corrected, 0 refining coarser ones, 0 replaced, 48 not stored');
    expect(kept).toMatch(/48 period\(s\) not stored: finer prices are stored there \(a coarser file only fills periods without a price; --replace replaces them\):\n {4}2025-10-01T22:00Z \.\. 2025-10-03T22:00Z: 48 x 60-min over 192 x 15-min \(csv:nl-2025-quarterhour-local-utc\.csv\), largest difference [\d.]+ EUR\/MWh/);
    expect(run('prices', 'status', '--db', dbFile)).toMatch(/resolution 15 min: 2025-09-30T22:00Z \.\. 2025-12-31T23:00Z/);

    const replaced = run('prices', 'import', file, '--region', 'NL', '--replace', '--db', dbFile);
    expect(replaced).toMatch(/48 period\(s\) replaced \(--replace\):\n {4}2025-10-01T22:00Z \.\. 2025-10-03T22:00Z: 48 x 60-min over 192 x 15-min \(csv:nl-2025-quarterhour-local-utc\.csv\)/);
    expect(run('prices', 'status', '--db', dbFile)).toMatch(/resolution 15 min: 2025-09-30T22:00Z \.\. 2025-10-01T22:00Z\n\s+resolution 60 min: 2025-10-01T22:00Z \.\. 2025-10-03T22:00Z\n\s+resolution 15 min: 2025-10-03T22:00Z/);
  }, 180_000); // four CLI processes on a loaded 2-core machine
});
