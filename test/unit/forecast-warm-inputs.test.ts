// The live day switches the forecaster's inputs twice (tomorrow's series arrive: with
// series; tomorrow's prices arrive: price only again). computeMarketForecast continues from
// the kept state of the same inputs, so neither switch starts cold once a day has passed.
// Real NL prices and day-ahead load/wind/solar forecasts of 2022 (history file, imported
// with the project's CSV parser).
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { exogenousSeries } from '../../src/forecast/exogenous.js';
import { dayFromIso, localMidnightMs } from '../../src/forecast/local-days.js';
import { computeMarketForecast } from '../../src/forecast/market-forecast.js';
import type { RollingOptions } from '../../src/forecast/rolling.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { describeWithSharedData, sharedData } from '../helpers/shared-data.js';

describeWithSharedData('warm forecaster per set of inputs (real NL 2022 prices and series)', () => {
  const nl = requireMarket('NL');
  const parsed = parsePriceCsv(readFileSync(sharedData('prices/nl-2015-2023h1-entsoe-hourly.csv'), 'utf8'), nl);
  const from = Date.parse('2021-11-01T00:00Z');
  const rows = parsed.history!.filter((r) => r.startMs >= from && r.startMs < Date.parse('2022-04-01T00:00Z'));
  const allPrices = rows.map((r) => ({ startMs: r.startMs, durationS: r.durationS, value: r.pricePerMwh }));
  const series = exogenousSeries(rows);
  const options: RollingOptions = { horizonDays: 2, trainingWindowDays: 28, windows: [28, 56], members: ['same-slot', 'cross-hour'], crossHourDays: 1, ensembleWithExogenousOnly: true, transform: 'asinh', calibrationDays: 14, coverage: 0.8, scaling: 'recent-variation', exogenousLeadDays: 1 };
  const day = dayFromIso('2022-03-09');
  const at = (d: number, hours: number) => localMidnightMs(nl.timeZone, d) + hours * 3_600_000;
  const pricesThrough = (d: number) => allPrices.filter((p) => p.startMs < at(d + 1, 0));
  // Series known one day ahead (the backtest's rule): through the day after the origin.
  const seriesThrough = (d: number) => Object.fromEntries(Object.entries(series).map(([k, v]) => [k, v.filter((p) => p.startMs < at(d + 1, 0))]));
  const run = (priceDay: number, withSeries: boolean, nowMs: number, warm: Parameters<typeof computeMarketForecast>[0]['warm']) =>
    computeMarketForecast({ timeZone: nl.timeZone, prices: pricesThrough(priceDay), ...(withSeries ? { exogenous: seriesThrough(priceDay + 1) } : {}), nowMs, targetIntervalS: 3600, options, warm });

  it('each switch of inputs continues from the state of the same inputs, not from cold', async () => {
    // D 11:00 with series, D 13:00 price only (D+1 priced), D+1 10:30 with series, D+1 13:00 price only.
    const withSeries = (await run(day, true, at(day, 11), []))!;
    expect(withSeries.exogenous.used).toEqual(['Load_DA', 'Sol_DA', 'Won_DA', 'Woff_DA']);
    const priceOnly = (await run(day + 1, false, at(day, 13), [withSeries.state]))!;
    expect(priceOnly.originDay).toBe(day + 1);
    expect(priceOnly.state.forecaster).not.toBe(withSeries.state.forecaster);
    const nextSeries = (await run(day + 1, true, at(day + 1, 10.5), [withSeries.state, priceOnly.state]))!;
    expect(nextSeries.originDay).toBe(day + 1);
    expect(nextSeries.state.forecaster).toBe(withSeries.state.forecaster);
    const nextPrices = (await run(day + 2, false, at(day + 1, 13), [nextSeries.state, priceOnly.state]))!;
    expect(nextPrices.originDay).toBe(day + 2);
    expect(nextPrices.state.forecaster).toBe(priceOnly.state.forecaster);
    expect(nextPrices.periods.length).toBe(48);
    expect(nextPrices.periods.every((p) => Number.isFinite(p.forecastPerMwh) && p.lowerPerMwh <= p.upperPerMwh)).toBe(true);
  });
});
