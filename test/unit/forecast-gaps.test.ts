// The forecaster and its evaluation around a real missing day: the local day 2025-11-07
// is not in nl-2025-quarterhour-local-utc.csv (see ../shared/data/README.md).
import { describe, expect, it } from 'vitest';
import { dayComplete, fillUnknownDays, toDayMatrix, trailingMeans, valueAt } from '../../src/forecast/day-matrix.js';
import { evaluateRolling, formatEvaluationTable } from '../../src/forecast/evaluate.js';
import { forecastLear } from '../../src/forecast/lear.js';
import { dayFromIso, localMidnightMs } from '../../src/forecast/local-days.js';
import { mae, scoreByHorizon, type ScoredPoint } from '../../src/forecast/metrics.js';
import { ConformalForecaster } from '../../src/forecast/rolling.js';
import { unforecastDays } from '../../src/forecast/service.js';
import { nlHourlyDays } from '../helpers/real-prices.js';
import { describeWithSharedData } from '../helpers/shared-data.js';

describeWithSharedData('forecasts around the missing day 2025-11-07 (real NL 2025 prices)', () => {
  const { nl, points, first, last, prices } = nlHourlyDays('prices/nl-2025-quarterhour-local-utc.csv', '2025-01-01', '2025-12-31');
  const gap = dayFromIso('2025-11-07');
  const options = { horizonDays: 7, trainingWindowDays: 56, transform: 'asinh' as const, calibrationDays: 14, coverage: 0.8, scaling: 'recent-variation' as const, exogenousLeadDays: 1 };

  it('the day is missing, its neighbours are complete', () => {
    expect(dayComplete(prices, gap)).toBe(false);
    expect(dayComplete(prices, gap - 1)).toBe(true);
    expect(dayComplete(prices, gap + 1)).toBe(true);
  });

  it('fillUnknownDays: the nearest known day (the earlier on a tie), never a later day than allowed, long runs left alone', () => {
    const both = fillUnknownDays(prices, gap + 1);
    expect(both.filled).toEqual([gap]);
    for (let s = 0; s < 24; s++) expect(valueAt(both.matrix, gap, s)).toBe(valueAt(prices, gap - 1, s));
    // As the origin (nothing after it known): only the day before can stand in.
    const asOrigin = fillUnknownDays(prices, gap);
    expect(asOrigin.filled).toEqual([gap]);
    for (let s = 0; s < 24; s++) expect(valueAt(asOrigin.matrix, gap, s)).toBe(valueAt(prices, gap - 1, s));
    // A whole missing month before the data starts is missing history, not a missing day.
    const early = toDayMatrix(nl.timeZone, points, first - 30, last, 24);
    expect(fillUnknownDays(early, gap, 7).filled).toEqual([gap]);
    // The original is untouched.
    expect(Number.isNaN(valueAt(prices, gap, 0))).toBe(true);
  });

  it('trailing means: over the known days of the span, imputed days left out, NaN only with less than half known', () => {
    const mean7 = trailingMeans(prices, 7);
    const mean28 = trailingMeans(prices, 28);
    for (const s of [0, 8, 19]) {
      // The span of gap + 3 holds the missing day: the mean of the six known ones.
      const known = [-3, -2, -1, 1, 2, 3].map((k) => valueAt(prices, gap + k, s));
      expect(valueAt(mean7, gap + 3, s)).toBeCloseTo(known.reduce((a, v) => a + v, 0) / 6, 9);
      // A complete span: the plain mean of its seven days.
      const week = [1, 2, 3, 4, 5, 6, 7].map((k) => valueAt(prices, gap + k, s));
      expect(valueAt(mean7, gap + 7, s)).toBeCloseTo(week.reduce((a, v) => a + v, 0) / 7, 9);
      expect(Number.isFinite(valueAt(mean28, gap + 27, s))).toBe(true);
    }
    // A day filled from its neighbour counts as unknown when named: the same six days.
    const { matrix, filled } = fillUnknownDays(prices, gap + 3);
    expect(valueAt(trailingMeans(matrix, 7, new Set(filled)), gap + 3, 5)).toBeCloseTo(valueAt(mean7, gap + 3, 5), 9);
    // Before the data start: fewer than half the days of the span known reads NaN.
    const early7 = trailingMeans(toDayMatrix(nl.timeZone, points, first - 10, first + 10, 24), 7);
    expect(Number.isNaN(valueAt(early7, first + 2, 0))).toBe(true);
    const four = [0, 1, 2, 3].map((k) => valueAt(prices, first + k, 0));
    expect(valueAt(early7, first + 3, 0)).toBeCloseTo(four.reduce((a, v) => a + v, 0) / 4, 9);
  });

  it('nothing non-finite enters the calibration set: origins before the data start forecast NaN, later bounds stay numbers', () => {
    // Origins five days before the first price: no known day, so those forecasts are NaN,
    // and their errors on the first days of 2025 are NaN too. Before, they were sorted into
    // the calibration set (a NaN does not sort) and every bound of D+7 went NaN.
    const early = toDayMatrix(nl.timeZone, points.filter((p) => p.startMs < localMidnightMs(nl.timeZone, first + 30)), first - 40, first + 30, 24);
    const forecaster = new ConformalForecaster({ prices: early }, options);
    let checked = 0;
    for (let o = first - 5; o <= first + 20; o++) {
      for (const d of forecaster.advance(o)) {
        if (o < first) continue;
        for (let s = 0; s < 24; s++) {
          expect(Number.isFinite(d.forecast[s]), `origin ${o - first}, D+${d.horizon}`).toBe(true);
          expect(Number.isFinite(d.lower[s]) && Number.isFinite(d.upper[s]), `bounds, origin ${o - first}, D+${d.horizon}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBe(21 * 7 * 24);
  });

  it('a missing origin day: seven finite days from the model (before: D+7 NaN, every day naive)', () => {
    const out = forecastLear({ prices, lastKnownDay: gap }, options);
    expect(out.map((d) => d.method)).toEqual(Array(7).fill('lear'));
    for (const d of out) for (const v of d.values) expect(Number.isFinite(v)).toBe(true);
  });

  it('a missing lag day: the model, not the naive, for every day after it (the 28-day mean needs every day)', () => {
    for (const origin of [gap + 1, gap + 14, gap + 27]) {
      const out = forecastLear({ prices, lastKnownDay: origin }, options);
      expect(out.map((d) => d.method), `origin ${origin - gap} days after the gap`).toEqual(Array(7).fill('lear'));
    }
  });

  it('the stand-in day uses nothing after the origin: later prices do not change the forecast', () => {
    const truncated = toDayMatrix(nl.timeZone, points.filter((p) => p.startMs < localMidnightMs(nl.timeZone, gap + 1)), first, last, 24);
    const a = forecastLear({ prices, lastKnownDay: gap }, options);
    const b = forecastLear({ prices: truncated, lastKnownDay: gap }, options);
    for (let h = 0; h < 7; h++) expect(Array.from(a[h].values)).toEqual(Array.from(b[h].values));
  });

  it('a rolling evaluation across the gap: every score a number, nothing excluded, the table says so', () => {
    const ev = evaluateRolling({ timeZone: nl.timeZone, prices: points, fromDay: gap - 2, toDay: gap + 9, slots: 24, options, probabilistic: true });
    expect(ev.rows.map((r) => r.horizon)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const r of ev.rows) {
      for (const v of [r.mae, r.smape, r.naiveMae, r.rmae, r.rmaeWeekly, r.coverage, r.meanWidth]) expect(Number.isFinite(v)).toBe(true);
      expect(r.excluded).toBe(0);
      // 12 target days, one of them without prices.
      expect(r.n).toBe(11 * 24);
    }
    // The week-ago reference of 2025-11-14 is the missing day.
    expect(ev.rows.every((r) => r.weeklyExcluded === 24)).toBe(true);
    const table = formatEvaluationTable(ev.rows, 7);
    expect(table).toContain('excluded: 0 point(s)');
    expect(table).toContain('rMAE vs week-ago also leaves out 168 point(s)');
    expect(ev.dayAhead.every((p) => Number.isFinite(p.forecast))).toBe(true);
    // The scorecard (issue 24): every horizon scored on the same points, and its 80 % band
    // (10 / 90 % quantiles) is the shipped band, so its coverage is the table's.
    expect(ev.scorecardExcluded).toBe(0);
    expect(ev.scorecard.map((r) => r.horizon)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const r of ev.scorecard) {
      const row = ev.rows.find((x) => x.horizon === r.horizon)!;
      expect(r.n).toBe(row.n);
      expect(r.bands[1].coverage).toBeCloseTo(row.coverage, 12);
      for (const v of [r.crps, ...r.pinball, r.dmNaive.statistic]) expect(Number.isFinite(v)).toBe(true);
    }
    for (const rows of Object.values(ev.candidateScorecards)) expect(rows.every((r) => Number.isFinite(r.crps))).toBe(true);
  });

  it('evaluation refuses to average NaN: such points are left out and counted', () => {
    // Real prices of 2025-11-06 as actuals, the day before as the forecast; two forecasts lost.
    const pts: ScoredPoint[] = [];
    for (let s = 0; s < 24; s++) {
      const actual = valueAt(prices, gap - 1, s);
      const forecast = s === 3 || s === 17 ? NaN : valueAt(prices, gap - 2, s);
      pts.push({ horizon: 1, actual, forecast, naive: valueAt(prices, gap - 8, s), lower: forecast - 10, upper: forecast + 10 });
    }
    const [row] = scoreByHorizon(pts, 1);
    expect(row.n).toBe(22);
    expect(row.excluded).toBe(2);
    const kept = pts.filter((p) => Number.isFinite(p.forecast));
    expect(row.mae).toBe(mae(kept.map((p) => p.actual), kept.map((p) => p.forecast)));
    expect(() => mae(pts.map((p) => p.actual), pts.map((p) => p.forecast))).toThrow(/value 3 is NaN/);
    // No point left: no row, and the table says which horizon.
    expect(scoreByHorizon(pts.map((p) => ({ ...p, forecast: NaN })), 1)).toEqual([]);
    expect(formatEvaluationTable([], 1)).toContain('no point left to score for D+1');
  });
});

describe('days of the horizon without a forecast (what /healthz names)', () => {
  const today = dayFromIso('2025-11-10');
  it('none while the origin is today or tomorrow', () => {
    expect(unforecastDays(today, 7, today)).toEqual([]);
    expect(unforecastDays(today, 7, today + 1)).toEqual([]);
  });
  it('the days past origin + horizon when the prices stop early, and any day left out', () => {
    expect(unforecastDays(today, 7, today - 2)).toEqual([today + 6, today + 7]);
    expect(unforecastDays(today, 7, today, [today + 3])).toEqual([today + 3]);
    expect(unforecastDays(today, 7, undefined)).toEqual([1, 2, 3, 4, 5, 6, 7].map((k) => today + k));
  });
});
