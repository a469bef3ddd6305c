// Isotonic distributional regression (Henzi, Ziegel & Gneiting 2021) of the price on the
// point forecast: the predictive distribution function F(z | x) is, for each threshold z,
// the antitonic least-squares fit of 1{y <= z} on the forecast x (a higher forecast never
// makes a low price likelier), evaluated at a new forecast and inverted to quantiles. As
// a post-processor of point forecasts it is one of the three members Lipiecki, Uniejewski
// and Weron average (issue 24). Pure; thresholds on a grid of the calibration prices'
// quantiles keep it at O(thresholds x n) per horizon and origin.
import { quantileSorted } from './lear.js';

/** Non-increasing least-squares fit of `b` (ordered by increasing x) by pool-adjacent-violators. */
export function antitonicFit(b: ArrayLike<number>): Float64Array {
  return antitonicFitInto(b, pavScratch(b.length));
}

interface PavScratch {
  readonly value: Float64Array;
  readonly weight: Float64Array;
  readonly end: Int32Array;
  readonly out: Float64Array;
}

function pavScratch(n: number): PavScratch {
  return { value: new Float64Array(n), weight: new Float64Array(n), end: new Int32Array(n), out: new Float64Array(n) };
}

/** antitonicFit into reused buffers (one set per IDR fit, not one per threshold: 101 fits). */
function antitonicFitInto(b: ArrayLike<number>, scratch: PavScratch): Float64Array {
  const n = b.length;
  const { value, weight, end, out } = scratch;
  let blocks = 0;
  for (let i = 0; i < n; i++) {
    value[blocks] = b[i];
    weight[blocks] = 1;
    end[blocks] = i;
    blocks++;
    // Non-increasing: a block above its predecessor pools with it.
    while (blocks > 1 && value[blocks - 1] > value[blocks - 2]) {
      const w = weight[blocks - 2] + weight[blocks - 1];
      value[blocks - 2] = (value[blocks - 2] * weight[blocks - 2] + value[blocks - 1] * weight[blocks - 1]) / w;
      weight[blocks - 2] = w;
      end[blocks - 2] = end[blocks - 1];
      blocks--;
    }
  }
  let start = 0;
  for (let k = 0; k < blocks; k++) {
    for (let i = start; i <= end[k]; i++) out[i] = value[k];
    start = end[k] + 1;
  }
  return out;
}

/**
 * Quantiles at `levels` of the IDR predictive distribution at each forecast in `at`,
 * fitted on calibration pairs (forecast x_i, outcome y_i). Level-major output (level l,
 * point j at l * at.length + j), non-decreasing in the level. NaN without two pairs.
 */
export function idrQuantiles(x: readonly number[], y: readonly number[], at: ArrayLike<number>, levels: readonly number[], thresholdCount = 101): Float64Array {
  const m = at.length;
  const out = new Float64Array(levels.length * m).fill(NaN);
  const n = x.length;
  if (n < 2) return out;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => x[a] - x[b]);
  const xs = Float64Array.from(order, (i) => x[i]);
  const ys = Float64Array.from(order, (i) => y[i]);
  const ySorted = Float64Array.from(ys).sort();
  const thresholds = Array.from({ length: thresholdCount }, (_, k) => quantileSorted(ySorted, k / (thresholdCount - 1)));
  // Where each new forecast falls among the calibration forecasts (linear between neighbours).
  const pos = Array.from(at, (v) => {
    if (v <= xs[0]) return { i: 0, w: 0 };
    if (v >= xs[n - 1]) return { i: n - 1, w: 0 };
    let lo = 0;
    let hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (xs[mid] <= v) lo = mid;
      else hi = mid;
    }
    return { i: lo, w: xs[hi] > xs[lo] ? (v - xs[lo]) / (xs[hi] - xs[lo]) : 0 };
  });
  // cdf[k * m + j] = F(threshold k | at[j])
  const cdf = new Float64Array(thresholdCount * m);
  const indicator = new Float64Array(n);
  const scratch = pavScratch(n);
  for (let k = 0; k < thresholdCount; k++) {
    const z = thresholds[k];
    for (let i = 0; i < n; i++) indicator[i] = ys[i] <= z ? 1 : 0;
    const fit = antitonicFitInto(indicator, scratch);
    for (let j = 0; j < m; j++) {
      const { i, w } = pos[j];
      cdf[k * m + j] = w === 0 ? fit[i] : fit[i] * (1 - w) + fit[i + 1] * w;
    }
  }
  for (let j = 0; j < m; j++) {
    // Monotone in the threshold (interpolation between fits could break it by rounding).
    let prev = 0;
    for (let k = 0; k < thresholdCount; k++) {
      prev = Math.max(prev, cdf[k * m + j]);
      cdf[k * m + j] = prev;
    }
    levels.forEach((tau, l) => {
      let k = 0;
      while (k < thresholdCount - 1 && cdf[k * m + j] < tau) k++;
      let q = thresholds[k];
      if (k > 0) {
        const f0 = cdf[(k - 1) * m + j];
        const f1 = cdf[k * m + j];
        q = f1 > f0 ? thresholds[k - 1] + ((tau - f0) / (f1 - f0)) * (thresholds[k] - thresholds[k - 1]) : thresholds[k];
      }
      out[l * m + j] = q;
    });
  }
  return out;
}
