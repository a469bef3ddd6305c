// The forecaster on a short stretch of real NL prices (imported with the project's CSV
// importer): forecasts and bounds for seven days from each of a few origins, trained only
// on what was known at each origin.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toDayMatrix, valueAt } from '../../src/forecast/day-matrix.js';
import { forecastLear } from '../../src/forecast/lear.js';
import { dayFromIso } from '../../src/forecast/local-days.js';
import { rollingForecasts } from '../../src/forecast/rolling.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { describeWithSharedData, sharedData } from '../helpers/shared-data.js';

describeWithSharedData(`forecaster on real NL 2024 prices (nl-2024-hourly-local.csv)`, () => {
  const nl = requireMarket('NL');
  const periods = parsePriceCsv(readFileSync(sharedData('prices/nl-2024-hourly-local.csv'), 'utf8'), nl).periods;
  const points = periods.map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.pricePerMwh }));
  const first = dayFromIso('2024-01-01');
  const prices = toDayMatrix(nl.timeZone, points, first, dayFromIso('2024-12-31'), 24);
  const options = { horizonDays: 7, trainingWindowDays: 56, transform: 'asinh' as const, calibrationDays: 14, coverage: 0.8, scaling: 'recent-variation' as const, exogenousLeadDays: 1 };

  it('the autumn DST day (25 hours, one 02:00 missing in the file) still fills 24 slots', () => {
    const d = dayFromIso('2024-10-27');
    for (let s = 0; s < 24; s++) expect(Number.isFinite(valueAt(prices, d, s))).toBe(true);
  });

  it('uses only data up to the origin: later prices do not change the forecast', () => {
    const origin = dayFromIso('2024-04-10');
    const a = forecastLear({ prices, lastKnownDay: origin }, options);
    const truncated = toDayMatrix(nl.timeZone, points.filter((p) => p.startMs < Date.parse('2024-04-10T22:00:00Z')), first, dayFromIso('2024-12-31'), 24);
    const b = forecastLear({ prices: truncated, lastKnownDay: origin }, options);
    expect(a.map((d) => d.method)).toEqual(Array(7).fill('lear'));
    for (let h = 0; h < 7; h++) expect(Array.from(a[h].values)).toEqual(Array.from(b[h].values));
  });

  it('cross-hour member for the day ahead (shared-design ridge): uses only data up to the origin, close to the same-slot model', () => {
    const origin = dayFromIso('2024-04-10');
    const both = { ...options, members: ['same-slot', 'cross-hour'] as const, crossHourDays: 1 };
    const a = forecastLear({ prices, lastKnownDay: origin }, both);
    const truncated = toDayMatrix(nl.timeZone, points.filter((p) => p.startMs < Date.parse('2024-04-10T22:00:00Z')), first, dayFromIso('2024-12-31'), 24);
    const b = forecastLear({ prices: truncated, lastKnownDay: origin }, both);
    const single = forecastLear({ prices, lastKnownDay: origin }, options);
    for (let h = 0; h < 7; h++) expect(Array.from(a[h].values)).toEqual(Array.from(b[h].values));
    // Days after the first come from the same-slot model alone.
    for (let h = 1; h < 7; h++) expect(Array.from(a[h].values)).toEqual(Array.from(single[h].values));
    let diff = 0;
    for (let s = 0; s < 24; s++) {
      expect(Number.isFinite(a[0].values[s])).toBe(true);
      diff += Math.abs(a[0].values[s] - single[0].values[s]);
    }
    expect(diff).toBeGreaterThan(0);
    // Loose: the two members agree on the level (mean absolute difference below 30 EUR/MWh).
    expect(diff / 24).toBeLessThan(30);
  });

  it('rolling origins: finite forecasts, ordered bounds, beats the naive on the day ahead', () => {
    const out = rollingForecasts({ prices }, dayFromIso('2024-05-01'), dayFromIso('2024-06-15'), options);
    const scored = out.filter((d) => d.originDay >= dayFromIso('2024-05-25') && d.day <= dayFromIso('2024-06-15'));
    let inside = 0;
    let n = 0;
    let err = 0;
    let naiveErr = 0;
    for (const d of scored) {
      expect(d.calibrationSize).toBeGreaterThan(0);
      for (let s = 0; s < 24; s++) {
        expect(Number.isFinite(d.forecast[s])).toBe(true);
        expect(d.lower[s]).toBeLessThanOrEqual(d.forecast[s]);
        expect(d.upper[s]).toBeGreaterThanOrEqual(d.forecast[s]);
        const actual = valueAt(prices, d.day, s);
        if (actual >= d.lower[s] && actual <= d.upper[s]) inside++;
        n++;
        if (d.horizon === 1) {
          err += Math.abs(actual - d.forecast[s]);
          naiveErr += Math.abs(actual - valueAt(prices, d.day - 7, s));
        }
      }
    }
    // Loose: a few weeks of one season; the calibrated figures are in docs/forecast-evaluation.md.
    expect(inside / n).toBeGreaterThan(0.6);
    expect(inside / n).toBeLessThan(0.95);
    expect(err).toBeLessThan(naiveErr);
  });
});
