// The recursive variant (the day-ahead model fed its own forecasts) and the per-horizon
// blend of direct and recursive forecasts (issue 15), on real NL 2024 prices imported
// with the project's CSV importer.
import { describe, expect, it } from 'vitest';
import { blendDay, RECURSIVE_SHARES, ShareScores } from '../../src/forecast/blend.js';
import { forecastCrossHourModels } from '../../src/forecast/cross-hour.js';
import { toDayMatrix, valueAt, type DayMatrix } from '../../src/forecast/day-matrix.js';
import { forecastLearPaths } from '../../src/forecast/lear.js';
import { dayFromIso } from '../../src/forecast/local-days.js';
import { recursiveForecasts } from '../../src/forecast/recursive.js';
import { ConformalForecaster } from '../../src/forecast/rolling.js';
import { nlHourlyDays } from '../helpers/real-prices.js';
import { describeWithSharedData } from '../helpers/shared-data.js';

describeWithSharedData('recursive forecast and direct/recursive blend on real NL 2024 prices (nl-2024-hourly-local.csv)', () => {
  const { nl, points, first, last, prices } = nlHourlyDays('prices/nl-2024-hourly-local.csv', '2024-01-01', '2024-12-31');
  const lear = { horizonDays: 7, trainingWindowDays: 91, transform: 'asinh' as const, members: ['same-slot', 'cross-hour'] as const, crossHourDays: 1 };
  const origin = dayFromIso('2024-06-10');
  /** Prices known at the end of `day` only. */
  const through = (day: number): DayMatrix => toDayMatrix(nl.timeZone, points.filter((p) => p.startMs < Date.parse('2024-01-01T00:00:00Z') + (day - first + 1) * 86_400_000 - 2 * 3_600_000), first, last, 24);

  it('starts from the direct day-ahead forecast, forecasts D+2..D+7 from it, and reads nothing after the origin', () => {
    const a = forecastLearPaths({ prices, lastKnownDay: origin }, lear, undefined, true);
    const b = forecastLearPaths({ prices: through(origin), lastKnownDay: origin }, lear, undefined, true);
    expect(a.recursive).toHaveLength(7);
    expect(a.recursive![0]).toBe(a.direct[0].values);
    for (let h = 1; h < 7; h++) {
      const rec = a.recursive![h]!;
      expect(Array.from(rec)).toEqual(Array.from(b.recursive![h]!));
      expect(rec.every(Number.isFinite)).toBe(true);
      // A different model from the direct D+k one: the forecasts differ.
      let diff = 0;
      for (let s = 0; s < 24; s++) diff += Math.abs(rec[s] - a.direct[h].values[s]);
      expect(diff / 24).toBeGreaterThan(0.1);
    }
    // Without the flag, no recursion (and the direct forecasts are the same).
    const plain = forecastLearPaths({ prices, lastKnownDay: origin }, lear, undefined, false);
    expect(plain.recursive).toBeUndefined();
    for (let h = 0; h < 7; h++) expect(Array.from(plain.direct[h].values)).toEqual(Array.from(a.direct[h].values));
  });

  it('the day-ahead fit applied to later days is the fitted model: it reproduces D+1, and the recursion on its short window equals it on the whole history', () => {
    // On the raw prices (the fit does not care about the scale).
    const known = through(origin);
    const fitted = forecastCrossHourModels({ z: known, exo: [], lastKnownDay: origin, exogenousKnownThrough: origin, horizonDays: 1, windowDays: 91 });
    const dayAhead = fitted.forecasts[0]!;
    expect(Array.from(fitted.dayAhead!.predict(known, origin + 1)!)).toEqual(Array.from(dayAhead));
    const steps = recursiveForecasts({ z: known, lastKnownDay: origin, horizonDays: 3, models: [fitted.dayAhead!], dayAhead, toPrice: (v) => v, toModelled: (p) => p });
    const extended = { ...known, values: Float64Array.from(known.values) };
    for (let h = 1; h <= 2; h++) {
      const day = origin + h;
      extended.values.set(steps[h - 1]!, (day - extended.firstDay) * 24);
      const whole = fitted.dayAhead!.predict(extended, day + 1)!;
      for (let s = 0; s < 24; s++) expect(steps[h]![s]).toBeCloseTo(whole[s], 9);
    }
  });

  it('the share of the recursive forecast is the one whose blend had the smallest MAE; ties and too few points keep the direct forecast', () => {
    // Real prices: "direct" = the same hour a week earlier, "recursive" = the day before.
    const scores = new ShareScores();
    const triples: [number, number, number][] = [];
    for (let d = dayFromIso('2024-03-01'); d <= dayFromIso('2024-03-28'); d++)
      for (let s = 0; s < 24; s++) {
        const t: [number, number, number] = [valueAt(prices, d, s), valueAt(prices, d - 7, s), valueAt(prices, d - 1, s)];
        triples.push(t);
        scores.add(...t);
      }
    scores.add(NaN, 1, 2);
    expect(scores.size).toBe(28 * 24);
    const maes = RECURSIVE_SHARES.map((w) => triples.reduce((a, [y, dir, rec]) => a + Math.abs(y - ((1 - w) * dir + w * rec)), 0));
    const best = RECURSIVE_SHARES[maes.indexOf(Math.min(...maes))];
    expect(scores.best(14 * 24)).toBe(best);
    // Not a corner here: a blend of the two did best.
    expect(best).toBeGreaterThan(0);
    expect(best).toBeLessThan(1);
    expect(scores.best(28 * 24 + 1)).toBe(0);
    const tie = new ShareScores();
    for (const [y, dir] of triples) tie.add(y, dir, dir);
    expect(tie.best(1)).toBe(0);
    const direct = Float64Array.from([10, 20]);
    expect(Array.from(blendDay(direct, Float64Array.from([30, 40]), 0.25))).toEqual([15, 25]);
  });

  it('rolling: the blend and its bounds use only earlier origins, D+1 is the direct forecast, and every value is finite', () => {
    const options = { ...lear, calibrationDays: 21, coverage: 0.8, scaling: 'recent-variation' as const, exogenousLeadDays: 1, adaptiveRate: 0.05 };
    const from = dayFromIso('2024-05-01');
    const to = dayFromIso('2024-06-05');
    const blended = new ConformalForecaster({ prices }, { ...options, recursiveBlend: true });
    const direct = new ConformalForecaster({ prices }, options);
    let last: ReturnType<ConformalForecaster['advance']> = [];
    let lastDirect: typeof last = [];
    const shares = new Set<number>();
    for (let o = from; o <= to; o++) {
      last = blended.advance(o);
      lastDirect = direct.advance(o);
      for (const d of last) shares.add(d.recursiveShare!);
    }
    // The same forecaster on prices known through the last origin only gives the same forecasts and bounds.
    const truncated = new ConformalForecaster({ prices: through(to) }, { ...options, recursiveBlend: true });
    let again: typeof last = [];
    for (let o = from; o <= to; o++) again = truncated.advance(o);
    expect(again.map((d) => Array.from(d.forecast))).toEqual(last.map((d) => Array.from(d.forecast)));
    expect(again.map((d) => Array.from(d.upper))).toEqual(last.map((d) => Array.from(d.upper)));
    expect(Array.from(last[0].forecast)).toEqual(Array.from(lastDirect[0].forecast));
    expect(last[0].recursiveShare).toBe(0);
    for (const d of last) {
      expect(d.calibrationSize).toBeGreaterThan(0);
      for (const xs of [d.forecast, d.lower, d.upper, d.direct!, d.recursive!]) expect(xs.every(Number.isFinite)).toBe(true);
      const share = d.recursiveShare!;
      for (let s = 0; s < 24; s++) expect(d.forecast[s]).toBeCloseTo((1 - share) * d.direct![s] + share * d.recursive![s], 9);
    }
    // The choice moved over the five weeks (it is made per origin and horizon, not fixed).
    expect(shares.size).toBeGreaterThan(1);
  });
});
