// The forecaster's derived exogenous input and its neighbours, on the real history files:
// each zone's residual load is its load forecast minus its solar and wind forecasts, hour
// by hour; the registry names NL's coupled neighbour whose series are synced with NL's.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toDayMatrix, valueAt, type SeriesPoint } from '../../src/forecast/day-matrix.js';
import { withResidualLoad } from '../../src/forecast/exogenous.js';
import { forecastLear } from '../../src/forecast/lear.js';
import { dayFromIso } from '../../src/forecast/local-days.js';
import { exogenousFromHistory } from '../../src/prices/exogenous/csv.js';
import { requireMarket, withExogenousNeighbours } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { describeWithSharedData, sharedData } from '../helpers/shared-data.js';

const NL = requireMarket('NL');
const DE = requireMarket('DE-LU');
const DAY = dayFromIso('2020-11-19');

function matrices(file: string, area: typeof NL, prefix: string, from = DAY - 1, to = DAY + 1) {
  const { points } = exogenousFromHistory(parsePriceCsv(readFileSync(sharedData(file), 'utf8'), area).history ?? [], area.code, area.timeZone);
  const series: Record<string, SeriesPoint[]> = {};
  for (const p of points) (series[prefix + p.series] ??= []).push({ startMs: p.startMs, durationS: p.durationS, value: p.valueMw });
  return Object.fromEntries(Object.entries(series).map(([k, v]) => [k, toDayMatrix(NL.timeZone, v, from, to, 24)]));
}

describeWithSharedData('residual load of the region and of its neighbour (nl-2015-2023h1, de-lu-2018-2023h1 history files)', () => {
  const nl = matrices('prices/nl-2015-2023h1-entsoe-hourly.csv', NL, '');
  const de = matrices('prices/de-lu-2018-2023h1-entsoe-hourly.csv', DE, 'DE-LU ');
  const out = withResidualLoad({ ...nl, ...de });

  it('NL 2020-11-19 00:00: Load_DA 12322 minus its solar, onshore and offshore wind forecasts', () => {
    // The file's row `11/19/2020 0:00`: Load_DA 12322 (also the first quarter-hour of the real A65 response).
    expect(valueAt(nl.load, DAY, 0)).toBe(12322);
    const expected = 12322 - valueAt(nl.solar, DAY, 0) - valueAt(nl.wind_onshore, DAY, 0) - valueAt(nl.wind_offshore, DAY, 0);
    expect(valueAt(out.residual_load, DAY, 0)).toBe(expected);
    expect(expected).toBeLessThan(12322);
  });

  it('DE-LU (no offshore column in the file) enters through its own residual load alone, from its load, solar and onshore wind', () => {
    expect(Object.keys(out).sort()).toEqual(['load', 'solar', 'wind_onshore', 'wind_offshore', 'residual_load', 'DE-LU residual_load'].sort());
    for (let s = 0; s < 24; s++) {
      const expected = valueAt(de['DE-LU load'], DAY, s) - valueAt(de['DE-LU solar'], DAY, s) - valueAt(de['DE-LU wind_onshore'], DAY, s);
      expect(valueAt(out['DE-LU residual_load'], DAY, s)).toBe(expected);
      expect(Number.isFinite(expected)).toBe(true);
    }
  });

  it('the inputs are left as they were', () => {
    expect(out.load).toBe(nl.load);
    expect(Object.keys(withResidualLoad({ load: nl.load }))).toEqual(['load']);
    // A neighbour whose load forecast is missing is left out whole.
    expect(Object.keys(withResidualLoad({ load: nl.load, 'DE-LU solar': de['DE-LU solar'], 'DE-LU wind_onshore': de['DE-LU wind_onshore'] }))).toEqual(['load']);
  });
});

describeWithSharedData('a series with a hole on the target day (DE-LU load forecast 0 all day on 2022-02-22 in the file)', () => {
  const target = dayFromIso('2022-02-22');
  const from = target - 150;
  const file = parsePriceCsv(readFileSync(sharedData('prices/nl-2015-2023h1-entsoe-hourly.csv'), 'utf8'), NL);
  const prices = toDayMatrix(NL.timeZone, file.periods.map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.pricePerMwh })), from, target + 1, 24);
  const exogenous = { ...matrices('prices/nl-2015-2023h1-entsoe-hourly.csv', NL, '', from, target + 1), ...matrices('prices/de-lu-2018-2023h1-entsoe-hourly.csv', DE, 'DE-LU ', from, target + 1) };
  const options = { horizonDays: 1, trainingWindowDays: 112, transform: 'asinh' as const, residualLoad: true };

  it('is left out at that origin, so the day ahead is still the model, not the naive fallback', () => {
    expect(Number.isNaN(valueAt(exogenous['DE-LU load'], target, 12))).toBe(true);
    const [withHole] = forecastLear({ prices, exogenous, lastKnownDay: target - 1, exogenousKnownThrough: target }, options);
    expect(withHole.method).toBe('lear');
    expect(Array.from(withHole.values).every(Number.isFinite)).toBe(true);
    // The same as a forecast given only the series without the hole.
    const own = Object.fromEntries(Object.entries(exogenous).filter(([k]) => !k.startsWith('DE-LU')));
    const [without] = forecastLear({ prices, exogenous: own, lastKnownDay: target - 1, exogenousKnownThrough: target }, options);
    expect(Array.from(withHole.values)).toEqual(Array.from(without.values));
    // The day before, DE-LU's series are complete and used: a different forecast of its next day.
    const [dayBefore] = forecastLear({ prices, exogenous, lastKnownDay: target - 2, exogenousKnownThrough: target - 1 }, options);
    const [dayBeforeOwn] = forecastLear({ prices, exogenous: own, lastKnownDay: target - 2, exogenousKnownThrough: target - 1 }, options);
    expect(Array.from(dayBefore.values)).not.toEqual(Array.from(dayBeforeOwn.values));
  });
});

describe('exogenous neighbours (markets.json)', () => {
  it("NL's series are synced with DE-LU's; DE-LU has none of its own; each zone once", () => {
    expect(NL.exogenousNeighbours).toEqual(['DE-LU']);
    expect(DE.exogenousNeighbours).toBeUndefined();
    expect(withExogenousNeighbours(['NL'])).toEqual(['NL', 'DE-LU']);
    expect(withExogenousNeighbours(['DE-LU', 'NL', 'BE'])).toEqual(['DE-LU', 'NL', 'BE']);
    expect(() => withExogenousNeighbours(['XX'])).toThrow(/unknown market area "XX"/);
  });
});
