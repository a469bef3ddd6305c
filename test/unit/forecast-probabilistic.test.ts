// The distribution measures of the forecast scorecard (issue 24) against hand-computed
// cases and textbook values (chi-square and normal tables).
import { describe, expect, it } from 'vitest';
import {
  blockBootstrapSe,
  chiSquareSurvival,
  christoffersen,
  crpsFromQuantiles,
  dieboldMariano,
  kupiec,
  normalCdf,
  normalQuantile,
  pinball,
} from '../../src/forecast/probabilistic.js';
import { quantileSorted } from '../../src/forecast/lear.js';
import { withinHourErrors } from '../../src/forecast/metrics.js';
import { antitonicFit, idrQuantiles } from '../../src/forecast/idr.js';
import { conformalQuantiles, warpLevel } from '../../src/forecast/rolling.js';
import { CRPS_LEVELS, QUANTILE_LEVELS, Scorecard } from '../../src/forecast/scorecard.js';

describe('probabilistic measures', () => {
  it('pinball loss weighs under- and over-forecasts by the level', () => {
    expect(pinball(10, 8, 0.9)).toBeCloseTo(1.8, 12);
    expect(pinball(6, 8, 0.9)).toBeCloseTo(0.2, 12);
    expect(pinball(6, 8, 0.5)).toBeCloseTo(1, 12);
  });

  it('CRPS of a point forecast is its absolute error; of N(0, 1) at 0 it is 2 phi(0) - 1/sqrt(pi)', () => {
    const point = CRPS_LEVELS.map(() => 3);
    expect(crpsFromQuantiles(7, point, CRPS_LEVELS)).toBeCloseTo(4, 10);
    const normal = CRPS_LEVELS.map(normalQuantile);
    // Closed form 0.23369; the 1..99 % grid leaves out the tails (slightly less).
    const exact = 2 / Math.sqrt(2 * Math.PI) - 1 / Math.sqrt(Math.PI);
    expect(exact).toBeCloseTo(0.23369, 5);
    const approx = crpsFromQuantiles(0, normal, CRPS_LEVELS);
    expect(Math.abs(approx - exact)).toBeLessThan(0.01);
  });

  it('normal and chi-square tails match the tables', () => {
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.1)).toBeCloseTo(-1.281552, 5);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 5);
    expect(chiSquareSurvival(3.841459, 1)).toBeCloseTo(0.05, 6);
    expect(chiSquareSurvival(6.634897, 1)).toBeCloseTo(0.01, 6);
    expect(chiSquareSurvival(5.991465, 2)).toBeCloseTo(0.05, 6);
    expect(chiSquareSurvival(0, 1)).toBe(1);
  });

  it("Kupiec: 10 misses of 100 against a 20 % miss rate", () => {
    // LR = -2 [90 ln 0.8 + 10 ln 0.2 - 90 ln 0.9 - 10 ln 0.1] = 7.3380: between the
    // chi-square(1) critical values 6.635 (1 %) and 7.879 (0.5 %).
    const t = kupiec(100, 10, 0.2);
    expect(t.lr).toBeCloseTo(7.338, 3);
    expect(t.pValue).toBeGreaterThan(0.005);
    expect(t.pValue).toBeLessThan(0.01);
    expect(kupiec(100, 20, 0.2)).toEqual({ lr: 0, pValue: 1 });
  });

  it('Christoffersen: clustered misses fail independence, a balanced sequence passes', () => {
    // 0 0 1 1 0 0 1 1 0: transitions n00 = 2, n01 = 2, n10 = 2, n11 = 2 -> p01 = p11 = 0.5, LR_ind = 0.
    const balanced = christoffersen([0, 0, 1, 1, 0, 0, 1, 1, 0], 0.5);
    expect(balanced.independence.lr).toBeCloseTo(0, 12);
    expect(balanced.independence.pValue).toBe(1);
    // Kupiec on the 8 transitions' targets (4 misses of 8 at 50 %): LR 0, so cc = 0 too.
    expect(balanced.conditional.pValue).toBe(1);
    // Ten misses in one run among 90 hits: n00 = 89, n01 = 1, n10 = 0, n11 = 9.
    const seq = [...Array<number>(45).fill(0), ...Array<number>(10).fill(1), ...Array<number>(45).fill(0)];
    const clustered = christoffersen(seq, 0.1);
    const n00 = 88;
    const n01 = 1;
    const n10 = 1;
    const n11 = 9;
    const p = (n01 + n11) / 99;
    const lr = -2 * ((n00 + n10) * Math.log(1 - p) + (n01 + n11) * Math.log(p) - n00 * Math.log(n00 / 89) - n01 * Math.log(n01 / 89) - n10 * Math.log(n10 / 10) - n11 * Math.log(n11 / 10));
    expect(clustered.independence.lr).toBeCloseTo(lr, 10);
    expect(clustered.independence.pValue).toBeLessThan(1e-6);
  });

  it('Diebold-Mariano: hand-computed statistics with and without autocovariance terms', () => {
    // mean 3, variance 2: 3 / sqrt(2 / 5) = 4.743
    expect(dieboldMariano([1, 2, 3, 4, 5]).statistic).toBeCloseTo(3 / Math.sqrt(2 / 5), 10);
    // lag 1: autocovariance 0.8, Bartlett weight 1/2: variance 2 + 0.8 = 2.8
    expect(dieboldMariano([1, 2, 3, 4, 5], 1).statistic).toBeCloseTo(3 / Math.sqrt(2.8 / 5), 10);
    const zero = dieboldMariano([1, -1, 1, -1]);
    expect(zero.statistic).toBe(0);
    expect(zero.pValue).toBeCloseTo(1, 6);
    expect(dieboldMariano([0, 0, 0]).pValue).toBe(1);
    // mean 1.96, variance 2 over 2 days: DM 1.96 -> two-sided p 0.05
    const d = [1.96 + Math.SQRT2, 1.96 - Math.SQRT2];
    expect(dieboldMariano(d).statistic).toBeCloseTo(1.96, 10);
    expect(dieboldMariano(d).pValue).toBeCloseTo(0.05, 4);
  });
});

describe('conformal quantiles', () => {
  it('put the band exactly on its bounds and carry the adaptive level to every level, monotone', () => {
    const scores = Array.from({ length: 200 }, (_, i) => (i - 100) / 10);
    const values = Float64Array.from([50, 60]);
    // As rolling.ts makes them: the band's score quantiles at the ACI level (8 % each side).
    const qLo = quantileSorted(scores, 0.08);
    const qHi = quantileSorted(scores, 0.92);
    const q = conformalQuantiles(QUANTILE_LEVELS, values, 2, { nominalHalf: 0.1, qLo, qHi, scores, aciHalf: 0.08 });
    const at = (tau: number, s: number) => q[QUANTILE_LEVELS.indexOf(tau) * 2 + s];
    expect(at(0.1, 0)).toBe(50 + qLo * 2);
    expect(at(0.9, 1)).toBe(60 + qHi * 2);
    expect(at(0.5, 0)).toBeCloseTo(50 + quantileSorted(scores, 0.5) * 2, 12);
    for (let i = 1; i < QUANTILE_LEVELS.length; i++) expect(q[i * 2]).toBeGreaterThanOrEqual(q[(i - 1) * 2]);
    expect(warpLevel(0.1, 0.1, 0.08)).toBeCloseTo(0.08, 12);
    expect(warpLevel(0.5, 0.1, 0.08)).toBeCloseTo(0.5, 12);
    expect(warpLevel(0.95, 0.1, 0.08)).toBeCloseTo(1 - warpLevel(0.05, 0.1, 0.08), 12);
  });

  it('from cold, a normal law through the cold-start bounds', () => {
    const q = conformalQuantiles([0.1, 0.5, 0.9, 0.975], Float64Array.from([10]), 1, { nominalHalf: 0.1, qLo: -2, qHi: 2 });
    expect(Array.from(q)).toEqual([8, 10, 12, expect.closeTo(10 + (2 * 1.959964) / 1.281552, 4)]);
  });
});

describe('scorecard', () => {
  it('scores coverage, pinball and DM of hand-made points', () => {
    const card = new Scorecard();
    // Quantiles: level tau at forecast + (tau - 0.5) * 10 (uniform law of width 10).
    const quantiles = (f: number) => QUANTILE_LEVELS.map((tau) => f + (tau - 0.5) * 10);
    const actuals = [0, 1, 4.5, -4.5, 6, 0, 2, -1];
    actuals.forEach((actual, i) => card.add(1, { day: 100 + Math.floor(i / 2), slot: i % 2, actual, forecast: 0, naive: actual >= 0 ? -3 : 3, previous: NaN, quantiles: quantiles(0) }));
    expect(card.add(1, { day: 200, slot: 0, actual: 1, forecast: NaN, naive: 0, previous: NaN, quantiles: quantiles(0) })).toBe(false);
    const [row] = card.rows();
    expect(row.n).toBe(8);
    // 80 % band [-4, 4]: 4.5, -4.5 and 6 miss.
    expect(row.bands[1].coverage).toBeCloseTo(5 / 8, 12);
    // 50 % band [-2.5, 2.5]: 2 is in, 4.5, -4.5, 6 out.
    expect(row.bands[0].coverage).toBeCloseTo(5 / 8, 12);
    // pinball at 50 % = |y - 0| / 2
    expect(row.pinball[1]).toBeCloseTo(actuals.reduce((a, y) => a + Math.abs(y) / 2, 0) / 8, 12);
    // every day the forecast beats the naive by 3: DM -> -infinity, p 0
    expect(row.dmNaive.statistic).toBe(-Infinity);
    expect(row.dmPrevious).toBeUndefined();
  });

  it("Diebold-Mariano against a previous release's forecasts, day by day", () => {
    const card = new Scorecard();
    const quantiles = QUANTILE_LEVELS.map((tau) => tau - 0.5);
    // Four days, one point each: |e| now 1, 2, 1, 2; previous |e| 2, 2, 3, 1 -> d = -1, 0, -2, 1.
    const now = [1, 2, 1, 2];
    const prev = [2, 2, 3, 1];
    now.forEach((e, i) => card.add(2, { day: 10 + i, slot: 0, actual: e, forecast: 0, naive: 5, previous: e - prev[i], quantiles }));
    const dm = card.rows()[0].dmPrevious!;
    // mean -0.5; autocov0 = (0.25 + 0.25 + 2.25 + 2.25) / 4 = 1.25;
    // autocov1 = ((0.5)(-0.5) + (-1.5)(0.5) + (1.5)(-1.5)) / 4 = -0.8125; lag 1 (D+2), weight 1/2
    const variance = 1.25 + 2 * 0.5 * -0.8125;
    expect(dm.n).toBe(4);
    expect(dm.statistic).toBeCloseTo(-0.5 / Math.sqrt(variance / 4), 10);
  });
});

describe('isotonic distributional regression and the bootstrap noise', () => {
  it('pool-adjacent-violators: the non-increasing least-squares fit', () => {
    expect(Array.from(antitonicFit([1, 0, 1, 0, 0]))).toEqual([1, 0.5, 0.5, 0, 0]);
    expect(Array.from(antitonicFit([0, 0, 1, 1]))).toEqual([0.5, 0.5, 0.5, 0.5]);
    expect(Array.from(antitonicFit([1, 1, 0, 0]))).toEqual([1, 1, 0, 0]);
  });

  it('IDR: outcomes that are the forecast plus a fixed spread come back as that spread', () => {
    // y = x + e with e in {-1, 0, 1} equally often for every x: at a forecast x the
    // distribution is x + {-1, 0, 1} (within the thresholds' interpolation).
    const x: number[] = [];
    const y: number[] = [];
    for (let v = 0; v < 100; v++) for (const e of [-1, 0, 1]) (x.push(v), y.push(v + e));
    const q = idrQuantiles(x, y, [50], [0.1, 0.5, 0.9]);
    expect(q[0]).toBeGreaterThanOrEqual(48.5);
    expect(q[0]).toBeLessThanOrEqual(50);
    expect(q[1]).toBeCloseTo(50, 0);
    expect(q[2]).toBeGreaterThanOrEqual(50);
    expect(q[2]).toBeLessThanOrEqual(51.5);
    expect(q[0]).toBeLessThanOrEqual(q[1]);
    expect(q[1]).toBeLessThanOrEqual(q[2]);
  });

  it('block bootstrap: no spread for identical days, and the textbook SE of a mean for independent ones', () => {
    expect(blockBootstrapSe([2, 2, 2, 2], [1, 1, 1, 1])).toBe(0);
    // i.i.d. days with sd 1 (alternating +-1 around 0 has sd ~1): SE of the mean of 400 about 1/sqrt(400) = 0.05;
    // blocks of 1 day resample independently.
    const num = Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? 1 : -1));
    const se = blockBootstrapSe(num, num.map(() => 1), 1, 2000, 7);
    expect(se).toBeGreaterThan(0.045);
    expect(se).toBeLessThan(0.055);
  });
});

describe('within-hour errors of a quarter-hour forecast', () => {
  it('splits the error into the hourly level and the shape within the hour', () => {
    // One hour: actual 10, 20, 30, 40 (mean 25); forecast 15, 15, 35, 35 (mean 25).
    const w = withinHourErrors([10, 20, 30, 40, NaN, 1, 1, 1], [15, 15, 35, 35, 1, 1, 1, 1], 4);
    expect(w.hours).toBe(1);
    expect(w.hourlyAbs).toBe(0);
    // deviations actual -15 -5 5 15, forecast -10 -10 10 10: |-5| + 5 + 5 + 5 = 20
    expect(w.profileAbs).toBe(20);
    expect(w.flatProfileAbs).toBe(40);
  });
});
