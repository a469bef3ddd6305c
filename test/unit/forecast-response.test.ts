import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { dayFromIso, localMidnightMs } from '../../src/forecast/local-days.js';
import { buildForecastResponse, NATIVE_HISTORY_MS, type MarketPriceForecastResponse, type ResponseInput } from '../../src/forecast/response.js';
import { marketByCode, requireMarket } from '../../src/prices/markets.js';
import { resample } from '../../src/prices/resample.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { describeWithSharedData, sharedData } from '../helpers/shared-data.js';

import { schemaValidator } from '../../src/http/validate.js';

// The response schema is the OpenAPI document's (src/http/openapi.json), the one source.
const validate = schemaValidator('MarketPriceForecast');

const nl = requireMarket('NL');
const DAY_MS = 86_400_000;

/** Entry i starts at the first period_start + i x duration_seconds: no hole, no overlap. */
function expectContiguous(body: MarketPriceForecastResponse) {
  const first = Date.parse(body.prices[0].period_start);
  const off = body.prices.map((p, i) => Date.parse(p.period_start) - (first + i * body.duration_seconds * 1000)).filter((d) => d !== 0);
  expect(off).toEqual([]);
}

describeWithSharedData(`market_price_forecast response on real NL 2025 prices`, () => {
  const all = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), nl).periods;
  /** The response as the route builds it: native prices known at `nowMs` up to the end of `knownThrough`. */
  const respond = (now: string, knownThrough: string, intervalS: number, extra: Partial<ResponseInput> = {}) => {
    const nowMs = Date.parse(now);
    const fromMs = localMidnightMs(nl.timeZone, dayFromIso(now.slice(0, 10)));
    const toMs = localMidnightMs(nl.timeZone, dayFromIso(knownThrough) + 1);
    const native = all.filter((p) => p.startMs >= fromMs - NATIVE_HISTORY_MS && p.startMs < toMs);
    const body = buildForecastResponse({ marketArea: 'NL', currencyCode: 'EUR', timeZone: nl.timeZone, intervalS, nowMs, horizonDays: 7, native, forecast: [], ...extra });
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expectContiguous(body);
    return { body, native, fromMs, toMs };
  };

  it('lowest upcoming price: the most negative upcoming hour (2025-05-11, the year minimum -350 at 13:00 local)', () => {
    const { body } = respond('2025-05-11T08:10:00Z', '2025-05-11', 3600);
    expect(body.prices).toHaveLength(24);
    expect(body.lowest_upcoming_price).toEqual({ timestamp: '2025-05-11T13:00:00+02:00', price: -350 });
    expect(body.currency_symbol).toBe('€');
    expect(body.prices.every((p) => p.forecast === null && p.price_per_mwh !== null)).toBe(true);
  });

  it('ties at 900 s (the hour repeats per quarter-hour): the earliest', () => {
    const { body } = respond('2025-05-11T08:10:00Z', '2025-05-11', 900);
    expect(body.prices).toHaveLength(96);
    expect(body.prices.filter((p) => p.price_per_mwh === -350)).toHaveLength(4);
    expect(body.lowest_upcoming_price).toEqual({ timestamp: '2025-05-11T13:00:00+02:00', price: -350 });
  });

  it('a period that has ended no longer counts; null when nothing is upcoming', () => {
    const after = respond('2025-05-11T12:00:00Z', '2025-05-11', 3600).body;
    // 13:00-14:00 local ended at 12:00Z; 14:00 local (-299.93) is the lowest left.
    expect(after.lowest_upcoming_price).toEqual({ timestamp: '2025-05-11T14:00:00+02:00', price: -299.93 });
    const none = respond('2025-05-11T21:59:00Z', '2025-05-11', 3600);
    expect(none.body.lowest_upcoming_price).toEqual({ timestamp: '2025-05-11T23:00:00+02:00', price: none.body.prices[23].price_per_mwh });
    const ended = buildForecastResponse({ marketArea: 'NL', currencyCode: 'EUR', timeZone: nl.timeZone, intervalS: 3600, nowMs: Date.parse('2025-05-11T22:00:00Z'), horizonDays: 7, native: none.native, forecast: [] });
    expect(ended.prices).toEqual([]);
    expect(ended.lowest_upcoming_price).toBeNull();
    expect(marketByCode('nl')?.code).toBe('NL');
  });

  it('published periods are exactly the resampled stored prices', () => {
    for (const intervalS of [900, 1800, 3600]) {
      const { body, native, fromMs, toMs } = respond('2025-10-01T08:00:00Z', '2025-10-01', intervalS);
      const expected = resample(native, { marketArea: 'NL', timeZone: nl.timeZone, fromMs, toMs, intervalS });
      expect(body.prices.map((p) => [Date.parse(p.period_start), p.price_per_mwh])).toEqual(expected.map((p) => [p.startMs, p.pricePerMwh]));
    }
  });

  it('the real hole at the 2025 autumn DST change (no price for 01:00-02:00Z) is answered, not skipped', () => {
    const holeFrom = Date.parse('2025-10-26T01:00:00Z');
    const holeTo = Date.parse('2025-10-26T02:00:00Z');
    expect(all.filter((p) => p.startMs >= holeFrom && p.startMs < holeTo)).toEqual([]);
    // The first 02:00 wall-clock hour (00:00-01:00Z) is the same slot of the day: the estimate.
    const sameWallHour = all.filter((p) => p.startMs >= holeFrom - 3_600_000 && p.startMs < holeFrom).map((p) => p.pricePerMwh);
    expect(sameWallHour).toHaveLength(4);

    const q = respond('2025-10-26T09:00:00Z', '2025-10-26', 900).body;
    expect(q.prices).toHaveLength(100);
    const hole = q.prices.filter((p) => Date.parse(p.period_start) >= holeFrom && Date.parse(p.period_start) < holeTo);
    expect(hole.map((p) => p.period_start)).toEqual(['2025-10-26T02:00:00+01:00', '2025-10-26T02:15:00+01:00', '2025-10-26T02:30:00+01:00', '2025-10-26T02:45:00+01:00']);
    expect(hole.map((p) => p.forecast)).toEqual(sameWallHour.map((v) => Math.round(v * 100) / 100));
    const widths = new Set(hole.map((p) => Math.round((p.forecast_upper! - p.forecast_lower!) * 100)));
    expect(widths.size).toBe(1);
    for (const p of hole) {
      expect(p.price_per_mwh).toBeNull();
      expect(p.forecast_lower!).toBeLessThan(p.forecast!);
      expect(p.forecast_upper!).toBeGreaterThan(p.forecast!);
    }
    expect(q.prices.filter((p) => p.price_per_mwh === null)).toHaveLength(4);

    const h = respond('2025-10-26T09:00:00Z', '2025-10-26', 3600).body;
    expect(h.prices).toHaveLength(25);
    const hour = h.prices.find((p) => p.period_start === '2025-10-26T02:00:00+01:00')!;
    expect(hour.price_per_mwh).toBeNull();
    expect(hour.forecast).toBe(Math.round((sameWallHour.reduce((a, b) => a + b, 0) / 4) * 100) / 100);
  });

  it('a quarter-hour missing inside an hour: the hour is a forecast mixing the three known prices with the estimate', () => {
    const gone = Date.parse('2025-11-10T11:15:00Z');
    const holey = all.filter((p) => p.startMs !== gone);
    const nowMs = Date.parse('2025-11-10T09:00:00Z');
    const fromMs = localMidnightMs(nl.timeZone, dayFromIso('2025-11-10'));
    const native = holey.filter((p) => p.startMs >= fromMs - NATIVE_HISTORY_MS && p.startMs < fromMs + DAY_MS);
    const at = (intervalS: number) => buildForecastResponse({ marketArea: 'NL', currencyCode: 'EUR', timeZone: nl.timeZone, intervalS, nowMs, horizonDays: 7, native, forecast: [] });
    const quarter = at(900).prices.find((p) => Date.parse(p.period_start) === gone)!;
    const hourBody = at(3600);
    expectContiguous(hourBody);
    expect(hourBody.prices).toHaveLength(24);
    const hour = hourBody.prices.find((p) => Date.parse(p.period_start) === Date.parse('2025-11-10T11:00:00Z'))!;
    const known = all.filter((p) => p.startMs >= Date.parse('2025-11-10T11:00:00Z') && p.startMs < Date.parse('2025-11-10T12:00:00Z') && p.startMs !== gone);
    expect(known).toHaveLength(3);
    const knownSum = known.reduce((a, p) => a + p.pricePerMwh, 0);
    expect(hour.price_per_mwh).toBeNull();
    expect(hour.forecast).toBeCloseTo((knownSum + quarter.forecast!) / 4, 1);
    // Only the missing quarter is uncertain: the hour's band is a quarter of its band.
    expect(hour.forecast_upper! - hour.forecast_lower!).toBeCloseTo((quarter.forecast_upper! - quarter.forecast_lower!) / 4, 1);
  });

  it('a missing day (2025-11-07, removed from the file) reads as the nearest known day, with bounds', () => {
    const day = (iso: string) => [localMidnightMs(nl.timeZone, dayFromIso(iso)), localMidnightMs(nl.timeZone, dayFromIso(iso) + 1)];
    const [gapFrom, gapTo] = day('2025-11-07');
    expect(all.filter((p) => p.startMs >= gapFrom && p.startMs < gapTo)).toEqual([]);
    // 14:00 on the missing day: today's prices are not stored, tomorrow's are.
    const { body } = respond('2025-11-07T13:00:00Z', '2025-11-08', 900);
    expect(body.prices).toHaveLength(192);
    const today = body.prices.slice(0, 96);
    const [prevFrom, prevTo] = day('2025-11-06');
    // 2025-11-06 and 2025-11-08 are equally near; the earlier one is taken.
    const previous = all.filter((p) => p.startMs >= prevFrom && p.startMs < prevTo).map((p) => Math.round(p.pricePerMwh * 100) / 100);
    expect(today.map((p) => p.forecast)).toEqual(previous);
    expect(today.every((p) => p.price_per_mwh === null && p.forecast_lower! < p.forecast! && p.forecast! < p.forecast_upper!)).toBe(true);
    expect(body.prices.slice(96).every((p) => p.price_per_mwh !== null && p.forecast === null)).toBe(true);
  });

  it('a stored forecast carries the answer to the horizon; without one it ends with the published prices', () => {
    const nowMs = Date.parse('2025-11-20T09:00:00Z');
    const fromMs = localMidnightMs(nl.timeZone, dayFromIso('2025-11-20'));
    const native = all.filter((p) => p.startMs >= fromMs - NATIVE_HISTORY_MS && p.startMs < fromMs + DAY_MS);
    // A stand-in forecast (last week's prices +-10) for the seven days after today.
    const forecast = all
      .filter((p) => p.startMs >= fromMs - 6 * DAY_MS && p.startMs < fromMs + DAY_MS)
      .map((p) => ({ startMs: p.startMs + 7 * DAY_MS, durationS: p.durationS, forecastPerMwh: p.pricePerMwh, lowerPerMwh: p.pricePerMwh - 10, upperPerMwh: p.pricePerMwh + 10 }));
    const input = { marketArea: 'NL', currencyCode: 'EUR', timeZone: nl.timeZone, nowMs, horizonDays: 7, native };
    const withForecast = buildForecastResponse({ ...input, intervalS: 3600, forecast });
    expectContiguous(withForecast);
    expect(withForecast.prices).toHaveLength(8 * 24);
    expect(withForecast.prices.slice(24).every((p) => p.price_per_mwh === null && p.forecast_lower! <= p.forecast! && p.forecast! <= p.forecast_upper!)).toBe(true);
    expect(buildForecastResponse({ ...input, intervalS: 3600, forecast: [] }).prices).toHaveLength(24);
  });
});
