// Which band the forecaster ships (issue 24 point 2): the data file's choices follow the
// issue's rule from the figures they quote, the look-up falls back to conformal where
// nothing was measured, and on real NL prices the averaged band is the average candidate's
// quantiles at the band's levels whether the quantiles are asked for (the backtest) or not
// (the service), monotone in the level, while the conformal band and its adaptive
// correction stay what they were.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { adoptedByRule, bandMethodsFor, bandMethodTableProblems, describeBandMethods, shippedBandMethods, type BandMethodTable } from '../../src/forecast/band-methods.js';
import { toDayMatrix } from '../../src/forecast/day-matrix.js';
import { dayFromIso } from '../../src/forecast/local-days.js';
import { ConformalForecaster, type BoundedDayForecast, type RollingOptions } from '../../src/forecast/rolling.js';
import { QUANTILE_LEVELS } from '../../src/forecast/scorecard.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { describeWithSharedData, sharedData } from '../helpers/shared-data.js';

const fileDoc = (): BandMethodTable => JSON.parse(readFileSync(new URL('../../src/forecast/band-methods.json', import.meta.url), 'utf8')) as BandMethodTable;

describe('band-methods.json: the measured choices', () => {
  it('is valid and every method is the one its figures give by the rule', () => {
    expect(bandMethodTableProblems(fileDoc())).toEqual([]);
    expect(shippedBandMethods().measured.length).toBeGreaterThan(0);
  });

  it('a method its figures do not justify, or a malformed entry, is refused with a reason', () => {
    const doc = fileDoc();
    const q4 = doc.measured.find((m) => m.market === 'NL' && m.interval_s === 900)!;
    const d5 = q4.horizons.find((h) => h.horizon === 5)!;
    // Q4 D+5: the average lowers CRPS but covers 82.2 % (> 82): conformal by the rule.
    expect(adoptedByRule(doc.rule, d5)).toBe('conformal');
    const forged = { ...doc, measured: [{ ...q4, horizons: [{ ...d5, method: 'average' }] }] };
    expect(bandMethodTableProblems(forged)).toEqual(['NL 900 s D+5: method average, but its figures make it conformal']);
    expect(bandMethodTableProblems({ ...doc, measured: [{ ...q4, interval_s: 1800 }] })[0]).toMatch(/interval_s/);
    expect(bandMethodTableProblems({ ...doc, measured: [...doc.measured, q4] })).toEqual(['NL 900 s at 0.8: more than one entry']);
    // Worse CRPS is never adopted, however good the coverage.
    expect(adoptedByRule(doc.rule, { crps: { conformal: 10, average: 10.01 }, coverage_pct: { conformal: 80, average: 80 } })).toBe('conformal');
  });

  it('per market, resolution, coverage and horizon; conformal wherever nothing was measured', () => {
    const table = shippedBandMethods();
    expect(bandMethodsFor(table, 'NL', 3600, 0.8, 7)).toEqual([...Array(5).fill('average'), 'conformal', 'conformal']);
    expect(bandMethodsFor(table, 'NL', 900, 0.8, 7)).toEqual(['average', 'average', 'average', 'average', 'conformal', 'conformal', 'average']);
    expect(describeBandMethods(bandMethodsFor(table, 'NL', 900, 0.8, 7))).toBe('average D+1..D+4, D+7; conformal D+5, D+6');
    // DE-LU 2019-23 hourly: D+7's average covers 77.4 % (< 78).
    expect(bandMethodsFor(table, 'DE-LU', 3600, 0.8, 7)).toEqual([...Array(6).fill('average'), 'conformal']);
    // Not measured: DE-LU quarter-hourly (its market since 2025-10-01), a market never evaluated.
    expect(bandMethodsFor(table, 'DE-LU', 900, 0.8, 7)).toEqual(Array(7).fill('conformal'));
    expect(bandMethodsFor(table, 'BE', 3600, 0.8, 7)).toEqual(Array(7).fill('conformal'));
    // Measured at 80 % only: another configured band is conformal.
    expect(bandMethodsFor(table, 'NL', 3600, 0.9, 7)).toEqual(Array(7).fill('conformal'));
    // Horizons beyond the measured ones.
    expect(bandMethodsFor(table, 'NL', 3600, 0.8, 9).slice(7)).toEqual(['conformal', 'conformal']);
  });
});

describeWithSharedData('the averaged band on real NL 2024 prices (nl-2024-hourly-local.csv)', () => {
  const nl = requireMarket('NL');
  const points = parsePriceCsv(readFileSync(sharedData('prices/nl-2024-hourly-local.csv'), 'utf8'), nl).periods.map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.pricePerMwh }));
  const prices = toDayMatrix(nl.timeZone, points, dayFromIso('2024-01-01'), dayFromIso('2024-12-31'), 24);
  const base: RollingOptions = { horizonDays: 3, trainingWindowDays: 56, transform: 'asinh', calibrationDays: 14, coverage: 0.8, scaling: 'recent-variation', exogenousLeadDays: 1, adaptiveRate: 0.05 };
  const methods = ['average', 'conformal', 'average'] as const;
  const first = dayFromIso('2024-05-01');
  const last = dayFromIso('2024-05-28');
  // The same origins three ways: the backtest's (every quantile and candidate), the
  // service's (the band only), and conformal everywhere (before issue 24).
  const backtest = new ConformalForecaster({ prices }, { ...base, bandMethods: methods, quantileLevels: QUANTILE_LEVELS, candidateQuantiles: true });
  const service = new ConformalForecaster({ prices }, { ...base, bandMethods: methods });
  const conformal = new ConformalForecaster({ prices }, base);
  const runs: { b: BoundedDayForecast[]; s: BoundedDayForecast[]; c: BoundedDayForecast[] }[] = [];
  for (let o = first; o <= last; o++) runs.push({ b: backtest.advance(o), s: service.advance(o), c: conformal.advance(o) });
  const lo = QUANTILE_LEVELS.findIndex((t) => Math.abs(t - 0.1) < 1e-9);
  const hi = QUANTILE_LEVELS.findIndex((t) => Math.abs(t - 0.9) < 1e-9);
  const level = (q: Float64Array, i: number) => Array.from(q.slice(i * 24, (i + 1) * 24));

  it('cold origins ship the conformal band; calibrated ones the configured method', () => {
    expect(runs[0].s.map((d) => d.bandMethod)).toEqual(['conformal', 'conformal', 'conformal']);
    expect(runs[runs.length - 1].s.map((d) => d.bandMethod)).toEqual([...methods]);
  });

  it('the service\'s band is the backtest\'s average quantiles at 10 / 90 %, and the backtest ships them', () => {
    let averaged = 0;
    for (const { b, s } of runs)
      for (let h = 0; h < 3; h++) {
        expect(s[h].bandMethod).toBe(b[h].bandMethod);
        expect(Array.from(s[h].forecast)).toEqual(Array.from(b[h].forecast));
        expect(Array.from(s[h].lower)).toEqual(Array.from(b[h].lower));
        expect(Array.from(s[h].upper)).toEqual(Array.from(b[h].upper));
        // The shipped quantiles at the band's levels are the band (the endpoint's bounds).
        expect(level(b[h].quantiles!, lo)).toEqual(Array.from(b[h].lower));
        expect(level(b[h].quantiles!, hi)).toEqual(Array.from(b[h].upper));
        const source = b[h].bandMethod === 'average' ? b[h].candidates!.average : b[h].candidates!.conformal;
        expect(Array.from(b[h].quantiles!)).toEqual(Array.from(source));
        if (b[h].bandMethod === 'average') averaged++;
      }
    expect(averaged).toBeGreaterThan(20);
  });

  it('the averaged quantiles are monotone in the level and differ from the conformal ones', () => {
    const d = runs[runs.length - 1].b[0];
    expect(d.bandMethod).toBe('average');
    for (let s = 0; s < 24; s++)
      for (let i = 1; i < QUANTILE_LEVELS.length; i++) expect(d.quantiles![i * 24 + s]).toBeGreaterThanOrEqual(d.quantiles![(i - 1) * 24 + s]);
    expect(level(d.quantiles!, lo)).not.toEqual(level(d.candidates!.conformal, lo));
    // Halfway between IDR's quantile and the conformal one at every level.
    for (let i = 0; i < d.quantiles!.length; i++) expect(d.quantiles![i]).toBeCloseTo((d.candidates!.idr[i] + d.candidates!.conformal[i]) / 2, 9);
  });

  it('origins advanced for calibration only (the service\'s before today\'s) leave the last origin\'s band as it was', () => {
    const lean = new ConformalForecaster({ prices }, { ...base, bandMethods: methods });
    let out: BoundedDayForecast[] = [];
    for (let o = first; o <= last; o++) {
      out = lean.advance(o, { calibrationOnly: o !== last });
      if (o !== last) expect(out.every((d) => d.bandMethod === 'conformal')).toBe(true);
    }
    const full = runs[runs.length - 1].s;
    expect(out.map((d) => d.bandMethod)).toEqual([...methods]);
    for (let h = 0; h < 3; h++) {
      expect(Array.from(out[h].lower)).toEqual(Array.from(full[h].lower));
      expect(Array.from(out[h].upper)).toEqual(Array.from(full[h].upper));
    }
  });

  it('the conformal band, its adaptive correction included, is unchanged by what is shipped', () => {
    for (const { b, c } of runs)
      for (let h = 0; h < 3; h++) {
        expect(level(b[h].candidates!.conformal, lo)).toEqual(Array.from(c[h].lower));
        expect(level(b[h].candidates!.conformal, hi)).toEqual(Array.from(c[h].upper));
      }
    // Horizon 2 is configured conformal: shipped as before.
    const d2 = runs[runs.length - 1];
    expect(Array.from(d2.s[1].lower)).toEqual(Array.from(d2.c[1].lower));
    expect(Array.from(d2.s[0].lower)).not.toEqual(Array.from(d2.c[0].lower));
  });
});
