import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildForecastResponse, type ActualPeriod } from '../../src/forecast/response.js';
import { marketByCode, requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { describeWithSharedData, sharedData } from '../helpers/shared-data.js';

import { schemaValidator } from '../../src/http/validate.js';

// The response schema is the OpenAPI document's (src/http/openapi.json), the one source.
const validate = schemaValidator('MarketPriceForecast');

describeWithSharedData(`lowest upcoming price on real NL prices (NL 2025)`, () => {
  const nl = requireMarket('NL');
  const all = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), nl).periods;
  // 2025-05-11 10:00-17:00 local (08:00-15:00Z): every hour negative, minimum -350 at 13:00.
  const from = Date.parse('2025-05-11T08:00:00Z');
  const to = Date.parse('2025-05-11T15:00:00Z');
  const negative = all.filter((p) => p.startMs >= from && p.startMs < to);
  const atInterval = (intervalS: number): ActualPeriod[] =>
    negative.flatMap((p) => {
      const out: ActualPeriod[] = [];
      for (let t = p.startMs; t < p.startMs + p.durationS * 1000; t += intervalS * 1000) out.push({ startMs: t, pricePerMwh: p.pricePerMwh });
      return out;
    });

  it('the real window is all negative', () => {
    expect(negative.length).toBeGreaterThan(0);
    expect(negative.every((p) => p.pricePerMwh < 0)).toBe(true);
  });

  it('all negative, hourly: the most negative upcoming hour', () => {
    const body = buildForecastResponse({ marketArea: 'NL', currencyCode: 'EUR', timeZone: nl.timeZone, intervalS: 3600, nowMs: Date.parse('2025-05-11T08:10:00Z'), horizonDays: 7, actual: atInterval(3600), forecast: [] });
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expect(body.lowest_upcoming_price).toEqual({ timestamp: '2025-05-11T13:00:00+02:00', price: -350 });
    expect(body.currency_symbol).toBe('€');
    expect(body.prices.every((p) => p.forecast === null && p.price_per_mwh !== null)).toBe(true);
  });

  it('ties at 900 s (the hour repeats per quarter-hour): the earliest', () => {
    const body = buildForecastResponse({ marketArea: 'NL', currencyCode: 'EUR', timeZone: nl.timeZone, intervalS: 900, nowMs: Date.parse('2025-05-11T08:10:00Z'), horizonDays: 7, actual: atInterval(900), forecast: [] });
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    expect(body.prices.filter((p) => p.price_per_mwh === -350)).toHaveLength(4);
    expect(body.lowest_upcoming_price).toEqual({ timestamp: '2025-05-11T13:00:00+02:00', price: -350 });
  });

  it('a period that has ended no longer counts; null when nothing is upcoming', () => {
    const after = buildForecastResponse({ marketArea: 'NL', currencyCode: 'EUR', timeZone: nl.timeZone, intervalS: 3600, nowMs: Date.parse('2025-05-11T12:00:00Z'), horizonDays: 7, actual: atInterval(3600), forecast: [] });
    // 13:00-14:00 local ended at 12:00Z; 14:00 local (-299.93) is the lowest left.
    expect(after.lowest_upcoming_price).toEqual({ timestamp: '2025-05-11T14:00:00+02:00', price: -299.93 });
    const none = buildForecastResponse({ marketArea: 'NL', currencyCode: 'EUR', timeZone: nl.timeZone, intervalS: 3600, nowMs: Date.parse('2025-05-11T16:00:00Z'), horizonDays: 7, actual: atInterval(3600), forecast: [] });
    expect(validate(none)).toBe(true);
    expect(none.lowest_upcoming_price).toBeNull();
    expect(marketByCode('nl')?.code).toBe('NL');
  });
});
