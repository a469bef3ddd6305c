// Ridge regression of many targets on one design matrix (multi-output ridge): the thin SVD
// of the standardized design is computed once, after which each target costs O(n r) per
// penalty, including its exact leave-one-out error. This is what makes cross-hour models
// affordable: every hour (or quarter-hour) of the target day is regressed on the same
// day-level features (all hours of the last known days, the exogenous forecasts), so the
// 24 or 96 slot models of a horizon share one decomposition.
import { columnMeanSd, gramMatrix } from './ridge.js';
import { scratch } from './scratch.js';

/**
 * Eigen-decomposition of a symmetric n x n matrix (row-major): Householder reduction to
 * tridiagonal form and the implicit QL algorithm (tred2/tql2 of EISPACK, as in JAMA).
 * O(n^3) with a small constant, far cheaper than Jacobi rotations for n in the hundreds.
 * `vectors[k * n + j]` is component k of eigenvector j.
 */
export function symmetricEigenQl(a: Float64Array, n: number, vectorsInto?: Float64Array): { values: Float64Array; vectors: Float64Array } {
  // Works on the transpose (w[j * n + k] is row k, column j of EISPACK's V): its column
  // sweeps then run along memory, about three times faster for n in the hundreds; the
  // operations and their order are EISPACK's, so the results are the same to the bit.
  // (The working copy is scratch: only the transposed result is returned, into `vectorsInto` if given.)
  const w = transposed(a, n, scratch('eigen.w', n * n));
  const d = new Float64Array(n);
  const e = new Float64Array(n);
  if (n === 0) return { values: d, vectors: new Float64Array(0) };
  for (let j = 0; j < n; j++) d[j] = w[j * n + (n - 1)];
  // Householder tridiagonalization.
  for (let i = n - 1; i > 0; i--) {
    let scale = 0;
    let h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(d[k]);
    if (scale === 0) {
      e[i] = d[i - 1];
      for (let j = 0; j < i; j++) {
        d[j] = w[j * n + (i - 1)];
        w[j * n + i] = 0;
        w[i * n + j] = 0;
      }
    } else {
      for (let k = 0; k < i; k++) {
        d[k] /= scale;
        h += d[k] * d[k];
      }
      let f = d[i - 1];
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      d[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      for (let j = 0; j < i; j++) {
        f = d[j];
        w[i * n + j] = f;
        g = e[j] + w[j * n + j] * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += w[j * n + k] * d[k];
          e[k] += w[j * n + k] * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j] /= h;
        f += e[j] * d[j];
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j] -= hh * d[j];
      for (let j = 0; j < i; j++) {
        f = d[j];
        g = e[j];
        for (let k = j; k <= i - 1; k++) w[j * n + k] -= f * e[k] + g * d[k];
        d[j] = w[j * n + (i - 1)];
        w[j * n + i] = 0;
      }
    }
    d[i] = h;
  }
  for (let i = 0; i < n - 1; i++) {
    w[i * n + (n - 1)] = w[i * n + i];
    w[i * n + i] = 1;
    const h = d[i + 1];
    if (h !== 0) {
      for (let k = 0; k <= i; k++) d[k] = w[(i + 1) * n + k] / h;
      for (let j = 0; j <= i; j++) {
        let g = 0;
        for (let k = 0; k <= i; k++) g += w[(i + 1) * n + k] * w[j * n + k];
        for (let k = 0; k <= i; k++) w[j * n + k] -= g * d[k];
      }
    }
    for (let k = 0; k <= i; k++) w[(i + 1) * n + k] = 0;
  }
  for (let j = 0; j < n; j++) {
    d[j] = w[j * n + (n - 1)];
    w[j * n + (n - 1)] = 0;
  }
  w[(n - 1) * n + (n - 1)] = 1;
  e[0] = 0;
  // Implicit QL on the tridiagonal matrix.
  for (let i = 1; i < n; i++) e[i - 1] = e[i];
  e[n - 1] = 0;
  let f = 0;
  let tst1 = 0;
  const eps = 2 ** -52;
  for (let l = 0; l < n; l++) {
    tst1 = Math.max(tst1, Math.abs(d[l]) + Math.abs(e[l]));
    let m = l;
    while (m < n) {
      if (Math.abs(e[m]) <= eps * tst1) break;
      m++;
    }
    if (m > l) {
      let iter = 0;
      do {
        if (++iter > 60) break;
        let g = d[l];
        let p = (d[l + 1] - g) / (2 * e[l]);
        let r = Math.sqrt(p * p + 1);
        if (p < 0) r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        const dl1 = d[l + 1];
        let h = g - d[l];
        for (let i = l + 2; i < n; i++) d[i] -= h;
        f += h;
        p = d[m];
        let c = 1;
        let c2 = c;
        let c3 = c;
        const el1 = e[l + 1];
        let s = 0;
        let s2 = 0;
        for (let i = m - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i];
          h = c * p;
          r = Math.sqrt(p * p + e[i] * e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          const ri = i * n;
          const ri1 = ri + n;
          for (let k = 0; k < n; k++) {
            h = w[ri1 + k];
            w[ri1 + k] = s * w[ri + k] + c * h;
            w[ri + k] = c * w[ri + k] - s * h;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]) / dl1;
        e[l] = s * p;
        d[l] = c * p;
      } while (Math.abs(e[l]) > eps * tst1);
    }
    d[l] += f;
    e[l] = 0;
  }
  return { values: d, vectors: transposed(w, n, vectorsInto) };
}

/** A transposed copy of the n x n matrix `a`, into `into` (n * n, zeroed) when given. */
function transposed(a: Float64Array, n: number, into?: Float64Array): Float64Array {
  const t = into ?? new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) t[j * n + i] = a[i * n + j];
  return t;
}

/**
 * A B' for A (n x p) and B (r x p), row-major: out[i * r + c] is the dot product of row i
 * of A and row c of B, its terms added in k order. Two rows of A and four of B at a time
 * (eight sums, each in its own order: the same bits as one at a time), so each value
 * loaded serves four or two products: 2.8x faster than plain dot products at p = 274.
 */
export function productWithTransposed(a: Float64Array, n: number, b: Float64Array, r: number, p: number, into?: Float64Array): Float64Array {
  const out = into ?? new Float64Array(n * r);
  let i = 0;
  for (; i + 2 <= n; i += 2) {
    const a0 = i * p;
    const a1 = a0 + p;
    const o0 = i * r;
    const o1 = o0 + r;
    let c = 0;
    for (; c + 4 <= r; c += 4) {
      const b0 = c * p;
      const b1 = b0 + p;
      const b2 = b1 + p;
      const b3 = b2 + p;
      let s00 = 0;
      let s01 = 0;
      let s02 = 0;
      let s03 = 0;
      let s10 = 0;
      let s11 = 0;
      let s12 = 0;
      let s13 = 0;
      for (let k = 0; k < p; k++) {
        const x0 = a[a0 + k];
        const x1 = a[a1 + k];
        const v0 = b[b0 + k];
        const v1 = b[b1 + k];
        const v2 = b[b2 + k];
        const v3 = b[b3 + k];
        s00 += x0 * v0;
        s01 += x0 * v1;
        s02 += x0 * v2;
        s03 += x0 * v3;
        s10 += x1 * v0;
        s11 += x1 * v1;
        s12 += x1 * v2;
        s13 += x1 * v3;
      }
      out[o0 + c] = s00;
      out[o0 + c + 1] = s01;
      out[o0 + c + 2] = s02;
      out[o0 + c + 3] = s03;
      out[o1 + c] = s10;
      out[o1 + c + 1] = s11;
      out[o1 + c + 2] = s12;
      out[o1 + c + 3] = s13;
    }
    for (; c < r; c++) {
      const bc = c * p;
      let s0 = 0;
      let s1 = 0;
      for (let k = 0; k < p; k++) {
        s0 += a[a0 + k] * b[bc + k];
        s1 += a[a1 + k] * b[bc + k];
      }
      out[o0 + c] = s0;
      out[o1 + c] = s1;
    }
  }
  for (; i < n; i++)
    for (let c = 0; c < r; c++) {
      let s0 = 0;
      for (let k = 0; k < p; k++) s0 += a[i * p + k] * b[c * p + k];
      out[i * r + c] = s0;
    }
  return out;
}

/**
 * Leave-one-out squared error of each penalty g of the grid (inv and coef: grid x r, the
 * shrunk inverse eigenvalues and coefficients): row i's fit and leverage are sums over the
 * components in order. Four penalties at a time, so each score of U is loaded once for
 * four (each sum in its own order: the same bits as one penalty at a time).
 */
function looScores(u: Float64Array, n: number, r: number, y: ArrayLike<number>, ybar: number, inv: Float64Array, coef: Float64Array, grid: number): Float64Array {
  const scores = new Float64Array(grid);
  let g = 0;
  for (; g + 4 <= grid; g += 4) {
    const q0 = g * r;
    const q1 = q0 + r;
    const q2 = q1 + r;
    const q3 = q2 + r;
    let score0 = 0;
    let score1 = 0;
    let score2 = 0;
    let score3 = 0;
    for (let i = 0; i < n; i++) {
      const row = i * r;
      let fit0 = 0;
      let fit1 = 0;
      let fit2 = 0;
      let fit3 = 0;
      let h0 = 1 / n;
      let h1 = h0;
      let h2 = h0;
      let h3 = h0;
      for (let c = 0; c < r; c++) {
        const uic = u[row + c];
        const uu = uic * uic;
        fit0 += uic * coef[q0 + c];
        fit1 += uic * coef[q1 + c];
        fit2 += uic * coef[q2 + c];
        fit3 += uic * coef[q3 + c];
        h0 += uu * inv[q0 + c];
        h1 += uu * inv[q1 + c];
        h2 += uu * inv[q2 + c];
        h3 += uu * inv[q3 + c];
      }
      const yc = y[i] - ybar;
      const e0 = (yc - fit0) / Math.max(1e-9, 1 - h0);
      const e1 = (yc - fit1) / Math.max(1e-9, 1 - h1);
      const e2 = (yc - fit2) / Math.max(1e-9, 1 - h2);
      const e3 = (yc - fit3) / Math.max(1e-9, 1 - h3);
      score0 += e0 * e0;
      score1 += e1 * e1;
      score2 += e2 * e2;
      score3 += e3 * e3;
    }
    scores[g] = score0;
    scores[g + 1] = score1;
    scores[g + 2] = score2;
    scores[g + 3] = score3;
  }
  for (; g < grid; g++) {
    const q = g * r;
    let score = 0;
    for (let i = 0; i < n; i++) {
      const row = i * r;
      let fit = 0;
      let h = 1 / n;
      for (let c = 0; c < r; c++) {
        const uic = u[row + c];
        fit += uic * coef[q + c];
        h += uic * uic * inv[q + c];
      }
      const e = (y[i] - ybar - fit) / Math.max(1e-9, 1 - h);
      score += e * e;
    }
    scores[g] = score;
  }
  return scores;
}

/** Relative penalties searched by leave-one-out (times the mean eigenvalue of the standardized Gram matrix). */
const PENALTY_GRID = Array.from({ length: 29 }, (_, k) => 10 ** (-4 + k * 0.25));

/**
 * The design of a multi-output ridge regression, decomposed once. Columns are standardized
 * (constant columns dropped); intercepts are not penalized.
 */
export class SharedRidgeDesign {
  private readonly mean: Float64Array;
  private readonly scale: Float64Array;
  /** X_s V, n x r (column j has squared norm d_j). */
  private readonly u: Float64Array;
  /** Maps a standardized new row to the r components: p x r. */
  private readonly basis: Float64Array;
  private readonly d: Float64Array;
  private readonly r: number;
  private readonly unit: number;

  /**
   * `work`: x is standardized in place (the caller's work array, overwritten), and U
   * (n x r, the largest part) goes in that work buffer (scratch.ts), so fit() is for
   * before the next design with the same name is built; project() and the fits made stay
   * valid (cross-hour.ts fits a horizon's slots, then builds the next horizon's).
   */
  constructor(
    x: Float64Array,
    readonly n: number,
    readonly p: number,
    work?: string,
  ) {
    const { mean, sd: scale } = columnMeanSd(x, n, p);
    for (let j = 0; j < p; j++) scale[j] = scale[j] > 1e-9 ? 1 / scale[j] : 0;
    // The standardized copy, Gram or kernel matrix and eigenvectors are work (scratch.ts);
    // the decomposition keeps only u, the basis and the eigenvalues.
    // With `work` the caller's x is its own work too: standardized in place (each value
    // read once before it is written), one design-sized copy less.
    const xs = work === undefined ? scratch('design.xs', n * p) : x;
    for (let i = 0; i < n; i++) for (let j = 0; j < p; j++) xs[i * p + j] = (x[i * p + j] - mean[j]) * scale[j];
    this.mean = mean;
    this.scale = scale;

    const keep: number[] = [];
    let basis: Float64Array;
    let u: Float64Array;
    let dAll: Float64Array;
    if (p <= n) {
      const gram = gramMatrix(xs, n, p, scratch('design.gram', p * p));
      const eig = symmetricEigenQl(gram, p, scratch('design.vectors', p * p));
      dAll = eig.values;
      const top = Math.max(...dAll, 0);
      for (let j = 0; j < p; j++) if (dAll[j] > 1e-10 * top) keep.push(j);
      const r = keep.length;
      basis = new Float64Array(p * r);
      for (let k = 0; k < p; k++) for (let c = 0; c < r; c++) basis[k * r + c] = eig.vectors[k * p + keep[c]];
      // U = X_s V as dot products along memory (V transposed), the terms added in feature
      // order as the row-by-row accumulation did: the same to the bit (a zero feature adds
      // a zero, which leaves a sum unchanged).
      const basisT = scratch('design.basisT', r * p);
      for (let k = 0; k < p; k++) for (let c = 0; c < r; c++) basisT[c * p + k] = basis[k * r + c];
      u = productWithTransposed(xs, n, basisT, r, p, work === undefined ? undefined : scratch(`${work}.u`, n * r));
    } else {
      // Fewer days than features: decompose the n x n kernel X_s X_s' instead (blocked dot
      // products in feature order, as the plain ones: the same bits, and symmetric).
      const kern = productWithTransposed(xs, n, xs, n, p, scratch('design.kern', n * n));
      const eig = symmetricEigenQl(kern, n, scratch('design.vectors', n * n));
      dAll = eig.values;
      const top = Math.max(...dAll, 0);
      for (let j = 0; j < n; j++) if (dAll[j] > 1e-10 * top) keep.push(j);
      const r = keep.length;
      // U = W S (unnormalized scores); V = X_s' W / s.
      u = work === undefined ? new Float64Array(n * r) : scratch(`${work}.u`, n * r);
      basis = new Float64Array(p * r);
      for (let c = 0; c < r; c++) {
        const s = Math.sqrt(dAll[keep[c]]);
        for (let i = 0; i < n; i++) u[i * r + c] = eig.vectors[i * n + keep[c]] * s;
        for (let k = 0; k < p; k++) {
          let acc = 0;
          for (let i = 0; i < n; i++) acc += xs[i * p + k] * eig.vectors[i * n + keep[c]];
          basis[k * r + c] = acc / s;
        }
      }
    }
    this.r = keep.length;
    this.d = Float64Array.from(keep, (j) => dAll[j]);
    this.u = u;
    this.basis = basis;
    let trace = 0;
    for (let c = 0; c < this.r; c++) trace += this.d[c];
    this.unit = trace / Math.max(1, p) || 1;
  }

  /** Components of a raw feature row in the decomposition's basis. */
  project(row: ArrayLike<number>): Float64Array {
    const { p, r } = this;
    const out = new Float64Array(r);
    for (let k = 0; k < p; k++) {
      const z = (row[k] - this.mean[k]) * this.scale[k];
      if (z === 0) continue;
      for (let c = 0; c < r; c++) out[c] += z * this.basis[k * r + c];
    }
    return out;
  }

  /**
   * Fits target `y` (length n) and predicts the projected row `at`. The penalty is the one
   * given, or else the one minimizing the exact leave-one-out squared error over a log grid.
   */
  fitPredict(y: ArrayLike<number>, at: Float64Array, relativePenalty?: number): { value: number; relativePenalty: number } {
    const fit = this.fit(y, relativePenalty);
    return { value: fit.predict(at), relativePenalty: fit.relativePenalty };
  }

  /**
   * Fits target `y` (length n); the fit predicts any projected row (the recursive forecast
   * applies the day-ahead fit to rows of later days, recursive.ts).
   */
  fit(y: ArrayLike<number>, relativePenalty?: number): { predict(at: Float64Array): number; relativePenalty: number } {
    const { n, r, u, d } = this;
    let ybar = 0;
    for (let i = 0; i < n; i++) ybar += y[i];
    ybar /= n;
    const uy = scratch('fit.uy', r);
    for (let i = 0; i < n; i++) {
      const yc = y[i] - ybar;
      for (let c = 0; c < r; c++) uy[c] += u[i * r + c] * yc;
    }
    let rel = relativePenalty;
    if (rel === undefined) {
      const grid = PENALTY_GRID.length;
      const inv = scratch('fit.inv', grid * r);
      const coef = scratch('fit.coef', grid * r);
      for (let g = 0; g < grid; g++) {
        const alpha = PENALTY_GRID[g] * this.unit;
        for (let c = 0; c < r; c++) {
          inv[g * r + c] = 1 / (d[c] + alpha);
          coef[g * r + c] = uy[c] * inv[g * r + c];
        }
      }
      const scores = looScores(u, n, r, y, ybar, inv, coef, grid);
      let bestScore = Infinity;
      rel = PENALTY_GRID[0];
      for (let g = 0; g < grid; g++)
        if (scores[g] < bestScore) {
          bestScore = scores[g];
          rel = PENALTY_GRID[g];
        }
    }
    const alpha = rel * this.unit;
    const coef = new Float64Array(r);
    for (let c = 0; c < r; c++) coef[c] = uy[c] / (d[c] + alpha);
    return {
      relativePenalty: rel,
      predict(at: Float64Array): number {
        let value = ybar;
        for (let c = 0; c < r; c++) value += at[c] * coef[c];
        return value;
      },
    };
  }
}
