// Measures of a forecast as a distribution (issue 24): pinball loss, CRPS from quantiles,
// interval coverage tests (Kupiec 1995, Christoffersen 1998) and the Diebold-Mariano test
// (1995; the epftoolbox's daily form, Lago et al. 2021). Pure: numbers in, numbers out.

/** Pinball (quantile) loss of one quantile forecast `q` at level `tau` for the outcome `y`. */
export function pinball(y: number, q: number, tau: number): number {
  return y >= q ? tau * (y - q) : (1 - tau) * (q - y);
}

/**
 * CRPS approximated from quantiles on a uniform grid of levels (e.g. 1..99 %): twice the
 * mean pinball loss over the grid (Gneiting & Raftery 2007; the form EPF papers report).
 */
export function crpsFromQuantiles(y: number, quantiles: ArrayLike<number>, levels: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < levels.length; i++) sum += pinball(y, quantiles[i], levels[i]);
  return (2 * sum) / levels.length;
}

/** Complementary error function (Numerical Recipes' erfcc, relative error < 1.2e-7). */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** Standard normal distribution function. */
export function normalCdf(x: number): number {
  return 0.5 * erfc(-x / Math.SQRT2);
}

/** Inverse standard normal distribution function (Acklam's rational approximation, |error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  if (p <= 0) return -Infinity;
  if (p >= 1) return Infinity;
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/** P(X > x) for X chi-square with 1 or 2 degrees of freedom (the coverage tests' null laws). */
export function chiSquareSurvival(x: number, df: 1 | 2): number {
  if (!(x > 0)) return 1;
  return df === 1 ? erfc(Math.sqrt(x / 2)) : Math.exp(-x / 2);
}

/** n * ln(p), with 0 * ln(0) = 0 (a likelihood term of a count that did not occur). */
function xlogp(n: number, p: number): number {
  return n === 0 ? 0 : n * Math.log(p);
}

export interface CoverageTest {
  /** Likelihood-ratio statistic. */
  readonly lr: number;
  readonly pValue: number;
}

/**
 * Kupiec's unconditional coverage test: are `misses` out of `n` consistent with the
 * nominal miss rate? LR ~ chi-square(1) under the null.
 */
export function kupiec(n: number, misses: number, nominalMiss: number): CoverageTest {
  if (n === 0) return { lr: NaN, pValue: NaN };
  const observed = misses / n;
  const lr = -2 * (xlogp(n - misses, 1 - nominalMiss) + xlogp(misses, nominalMiss) - xlogp(n - misses, 1 - observed) - xlogp(misses, observed));
  return { lr: Math.max(0, lr), pValue: chiSquareSurvival(lr, 1) };
}

/**
 * Christoffersen's tests on a time-ordered sequence of misses (1 = outside the band):
 * independence (does a miss make the next one likelier? first-order Markov alternative,
 * chi-square(1)) and conditional coverage (Kupiec's LR plus the independence LR,
 * chi-square(2)).
 */
export function christoffersen(misses: ArrayLike<number>, nominalMiss: number): { independence: CoverageTest; conditional: CoverageTest } {
  let n00 = 0;
  let n01 = 0;
  let n10 = 0;
  let n11 = 0;
  for (let i = 1; i < misses.length; i++) {
    const prev = misses[i - 1];
    const cur = misses[i];
    if (prev === 0) cur === 0 ? n00++ : n01++;
    else cur === 0 ? n10++ : n11++;
  }
  const n = n00 + n01 + n10 + n11;
  if (n === 0) return { independence: { lr: NaN, pValue: NaN }, conditional: { lr: NaN, pValue: NaN } };
  const p01 = n01 / Math.max(1, n00 + n01);
  const p11 = n11 / Math.max(1, n10 + n11);
  const p = (n01 + n11) / n;
  const restricted = xlogp(n00 + n10, 1 - p) + xlogp(n01 + n11, p);
  const markov = xlogp(n00, 1 - p01) + xlogp(n01, p01) + xlogp(n10, 1 - p11) + xlogp(n11, p11);
  const lrInd = Math.max(0, -2 * (restricted - markov));
  // Kupiec on the same transitions (the first observation only conditions).
  const uc = kupiec(n, n01 + n11, nominalMiss);
  const lrCc = uc.lr + lrInd;
  return { independence: { lr: lrInd, pValue: chiSquareSurvival(lrInd, 1) }, conditional: { lr: lrCc, pValue: chiSquareSurvival(lrCc, 2) } };
}

export interface DieboldMariano {
  /** Mean loss differential over its standard error: negative = the first forecast has the smaller loss. */
  readonly statistic: number;
  /** Two-sided p-value (asymptotically normal statistic). */
  readonly pValue: number;
  readonly n: number;
}

/**
 * Diebold-Mariano test on a series of loss differentials d_t = L(first)_t - L(second)_t
 * (in the epftoolbox form, one per day: the day's mean loss of each). The variance is a
 * Newey-West (Bartlett) estimate with `lag` autocovariances: an h-day-ahead forecast's
 * errors overlap h - 1 days, so lag = h - 1.
 */
export function dieboldMariano(diffs: ArrayLike<number>, lag = 0): DieboldMariano {
  const n = diffs.length;
  if (n < 2) return { statistic: NaN, pValue: NaN, n };
  let mean = 0;
  for (let i = 0; i < n; i++) mean += diffs[i];
  mean /= n;
  const autocov = (k: number): number => {
    let s = 0;
    for (let i = k; i < n; i++) s += (diffs[i] - mean) * (diffs[i - k] - mean);
    return s / n;
  };
  let variance = autocov(0);
  for (let k = 1; k <= Math.min(lag, n - 1); k++) variance += 2 * (1 - k / (lag + 1)) * autocov(k);
  if (!(variance > 0)) return { statistic: mean === 0 ? 0 : Math.sign(mean) * Infinity, pValue: mean === 0 ? 1 : 0, n };
  const statistic = mean / Math.sqrt(variance / n);
  return { statistic, pValue: 2 * (1 - normalCdf(Math.abs(statistic))), n };
}

/**
 * Standard error of a ratio of sums (e.g. rMAE = sum |e| / sum |naive error|, or a mean
 * CRPS = sum CRPS / n) over days, by the moving-block bootstrap (Kuensch 1989): `reps`
 * resamples of whole blocks of `blockDays` consecutive days, so the day-to-day dependence
 * of forecast errors stays inside a block. Seeded: the same data give the same figure.
 */
export function blockBootstrapSe(num: ArrayLike<number>, den: ArrayLike<number>, blockDays = 7, reps = 500, seed = 1): number {
  const n = num.length;
  if (n < 2) return NaN;
  const block = Math.min(blockDays, n);
  const starts = n - block + 1;
  let state = seed >>> 0;
  // mulberry32: a small deterministic generator, enough for resampling indices.
  const random = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const stats: number[] = [];
  for (let r = 0; r < reps; r++) {
    let a = 0;
    let b = 0;
    for (let taken = 0; taken < n; ) {
      const start = Math.floor(random() * starts);
      for (let i = start; i < start + block && taken < n; i++, taken++) {
        a += num[i];
        b += den[i];
      }
    }
    stats.push(a / b);
  }
  const mean = stats.reduce((x, v) => x + v, 0) / reps;
  return Math.sqrt(stats.reduce((x, v) => x + (v - mean) ** 2, 0) / (reps - 1));
}
