// Ridge regression on Float64Arrays with the penalty chosen by exact leave-one-out
// cross-validation inside the training set (closed form via the eigendecomposition of the
// standardized Gram matrix), so no penalty constant is tuned by hand.
import { scratch } from './scratch.js';

export interface LinearModel {
  readonly coef: Float64Array;
  readonly intercept: number;
  /** The penalty chosen (relative to the mean eigenvalue of the standardized Gram matrix). */
  readonly relativePenalty: number;
}

/** Eigen-decomposition of a symmetric p x p matrix (row-major) by cyclic Jacobi rotations. */
export function symmetricEigen(a: Float64Array, p: number): { values: Float64Array; vectors: Float64Array } {
  const m = Float64Array.from(a);
  const v = new Float64Array(p * p);
  for (let i = 0; i < p; i++) v[i * p + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    let diag = 0;
    for (let i = 0; i < p; i++) {
      diag += m[i * p + i] * m[i * p + i];
      for (let j = i + 1; j < p; j++) off += m[i * p + j] * m[i * p + j];
    }
    if (off <= 1e-22 * diag || off === 0) break;
    for (let i = 0; i < p; i++) {
      for (let j = i + 1; j < p; j++) {
        const aij = m[i * p + j];
        if (Math.abs(aij) < 1e-300) continue;
        const theta = (m[j * p + j] - m[i * p + i]) / (2 * aij);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < p; k++) {
          const mki = m[k * p + i];
          const mkj = m[k * p + j];
          m[k * p + i] = c * mki - s * mkj;
          m[k * p + j] = s * mki + c * mkj;
        }
        for (let k = 0; k < p; k++) {
          const mik = m[i * p + k];
          const mjk = m[j * p + k];
          m[i * p + k] = c * mik - s * mjk;
          m[j * p + k] = s * mik + c * mjk;
        }
        for (let k = 0; k < p; k++) {
          const vki = v[k * p + i];
          const vkj = v[k * p + j];
          v[k * p + i] = c * vki - s * vkj;
          v[k * p + j] = s * vki + c * vkj;
        }
      }
    }
  }
  const values = new Float64Array(p);
  for (let i = 0; i < p; i++) values[i] = Math.max(0, m[i * p + i]);
  return { values, vectors: v };
}

const PENALTY_GRID = Array.from({ length: 22 }, (_, k) => 10 ** (-5 + k * 0.3));

/** X'X (p x p, row-major, symmetric) of X (n rows, p columns, row-major); zero entries skipped. */
export function gramMatrix(xs: Float64Array, n: number, p: number, into?: Float64Array): Float64Array {
  // Dot products of the columns along memory (X transposed), each summed over the rows in
  // order as a row-by-row accumulation would: the same to the bit, 1.3x faster.
  const xt = scratch('gram.xt', p * n);
  for (let i = 0; i < n; i++) for (let a = 0; a < p; a++) xt[a * n + i] = xs[i * p + a];
  const gram = into ?? new Float64Array(p * p);
  for (let a = 0; a < p; a++) {
    const ra = a * n;
    for (let b = a; b < p; b++) {
      const rb = b * n;
      let acc = 0;
      for (let i = 0; i < n; i++) acc += xt[ra + i] * xt[rb + i];
      gram[a * p + b] = acc;
      gram[b * p + a] = acc;
    }
  }
  return gram;
}

/** Column means and (population) standard deviations of X (n rows, p columns, row-major). */
export function columnMeanSd(x: Float64Array, n: number, p: number): { mean: Float64Array; sd: Float64Array } {
  const mean = new Float64Array(p);
  const sd = new Float64Array(p);
  for (let i = 0; i < n; i++) for (let j = 0; j < p; j++) mean[j] += x[i * p + j];
  for (let j = 0; j < p; j++) mean[j] /= n;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < p; j++) {
      const d = x[i * p + j] - mean[j];
      sd[j] += d * d;
    }
  for (let j = 0; j < p; j++) sd[j] = Math.sqrt(sd[j] / n);
  return { mean, sd };
}

/**
 * Fits y ~ X (n rows, p columns, row-major). Columns are standardized; the intercept is
 * not penalized. The penalty minimizes the leave-one-out squared error over a log grid.
 */
export function fitRidgeLoo(x: Float64Array, y: Float64Array, n: number, p: number): LinearModel {
  const { mean, sd: scale } = columnMeanSd(x, n, p);
  for (let j = 0; j < p; j++) if (!(scale[j] > 1e-12)) scale[j] = 0;
  const xs = scratch('loo.xs', n * p);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < p; j++) xs[i * p + j] = scale[j] === 0 ? 0 : (x[i * p + j] - mean[j]) / scale[j];
  let ybar = 0;
  for (let i = 0; i < n; i++) ybar += y[i];
  ybar /= n;
  const yc = scratch('loo.yc', n);
  for (let i = 0; i < n; i++) yc[i] = y[i] - ybar;

  const gram = gramMatrix(xs, n, p);
  const { values, vectors } = symmetricEigen(gram, p);
  let trace = 0;
  for (let j = 0; j < p; j++) trace += values[j];
  const unit = trace / Math.max(1, p) || 1;

  // U = Xs V, uy = U' yc
  const u = scratch('loo.u', n * p);
  const uy = new Float64Array(p);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < p; j++) {
      let s = 0;
      for (let k = 0; k < p; k++) s += xs[i * p + k] * vectors[k * p + j];
      u[i * p + j] = s;
      uy[j] += s * yc[i];
    }

  let best = PENALTY_GRID[0];
  let bestScore = Infinity;
  const inv = new Float64Array(p);
  for (const rel of PENALTY_GRID) {
    const alpha = rel * unit;
    for (let j = 0; j < p; j++) inv[j] = 1 / (values[j] + alpha);
    let score = 0;
    for (let i = 0; i < n; i++) {
      let fit = 0;
      let h = 1 / n;
      for (let j = 0; j < p; j++) {
        const uij = u[i * p + j];
        fit += uij * uy[j] * inv[j];
        h += uij * uij * inv[j];
      }
      const e = (yc[i] - fit) / Math.max(1e-9, 1 - h);
      score += e * e;
    }
    if (score < bestScore) {
      bestScore = score;
      best = rel;
    }
  }
  const alpha = best * unit;
  const coefS = new Float64Array(p);
  for (let k = 0; k < p; k++) {
    let s = 0;
    for (let j = 0; j < p; j++) s += (vectors[k * p + j] * uy[j]) / (values[j] + alpha);
    coefS[k] = s;
  }
  const coef = new Float64Array(p);
  let intercept = ybar;
  for (let j = 0; j < p; j++) {
    coef[j] = scale[j] === 0 ? 0 : coefS[j] / scale[j];
    intercept -= coef[j] * mean[j];
  }
  return { coef, intercept, relativePenalty: best };
}

/** Ridge at a given relative penalty (as chosen by fitRidgeLoo for a similar problem), by Cholesky. */
export function fitRidgeFixed(x: Float64Array, y: Float64Array, n: number, p: number, relativePenalty: number): LinearModel {
  // Hundreds of these fits an origin: their work arrays are scratch (scratch.ts), only the
  // coefficients are new.
  const mean = scratch('fixed.mean', p);
  const scale = scratch('fixed.scale', p);
  let ybar = 0;
  for (let i = 0; i < n; i++) {
    const off = i * p;
    for (let j = 0; j < p; j++) mean[j] += x[off + j];
    ybar += y[i];
  }
  for (let j = 0; j < p; j++) mean[j] /= n;
  ybar /= n;
  const gram = scratch('fixed.gram', p * p);
  const xy = scratch('fixed.xy', p);
  const row = scratch('fixed.row', p);
  // Raw cross-products (the weekday dummies are mostly zero, so skipping zeros pays),
  // centred afterwards: sum (x - m)(x - m)' = sum x x' - n m m'.
  for (let i = 0; i < n; i++) {
    const off = i * p;
    for (let j = 0; j < p; j++) row[j] = x[off + j];
    const yc = y[i] - ybar;
    for (let a = 0; a < p; a++) {
      const ra = row[a];
      if (ra === 0) continue;
      xy[a] += ra * yc;
      const ga = a * p;
      for (let b = a; b < p; b++) gram[ga + b] += ra * row[b];
    }
  }
  for (let a = 0; a < p; a++) for (let b = a; b < p; b++) gram[a * p + b] -= n * mean[a] * mean[b];
  for (let j = 0; j < p; j++) {
    const sd = Math.sqrt(gram[j * p + j] / n);
    scale[j] = sd > 1e-12 ? sd : 0;
  }
  // Standardize the Gram matrix in place: G_ab / (sd_a sd_b); dropped columns get a unit diagonal.
  let trace = 0;
  for (let a = 0; a < p; a++) {
    for (let b = a; b < p; b++) {
      const v = scale[a] === 0 || scale[b] === 0 ? 0 : gram[a * p + b] / (scale[a] * scale[b]);
      gram[a * p + b] = v;
      gram[b * p + a] = v;
    }
    xy[a] = scale[a] === 0 ? 0 : xy[a] / scale[a];
    trace += gram[a * p + a];
  }
  const alpha = relativePenalty * (trace / Math.max(1, p) || 1);
  for (let a = 0; a < p; a++) gram[a * p + a] += scale[a] === 0 ? 1 : alpha;
  const coefS = choleskySolve(gram, xy, p);
  const coef = new Float64Array(p);
  let intercept = ybar;
  for (let j = 0; j < p; j++) {
    coef[j] = scale[j] === 0 ? 0 : coefS[j] / scale[j];
    intercept -= coef[j] * mean[j];
  }
  return { coef, intercept, relativePenalty };
}

/** Solves A x = b for symmetric positive definite A (row-major, overwritten). */
function choleskySolve(a: Float64Array, b: Float64Array, p: number): Float64Array {
  for (let j = 0; j < p; j++) {
    let d = a[j * p + j];
    for (let k = 0; k < j; k++) d -= a[j * p + k] * a[j * p + k];
    const l = Math.sqrt(Math.max(d, 1e-12));
    a[j * p + j] = l;
    for (let i = j + 1; i < p; i++) {
      let s = a[i * p + j];
      for (let k = 0; k < j; k++) s -= a[i * p + k] * a[j * p + k];
      a[i * p + j] = s / l;
    }
  }
  const z = scratch('cholesky.z', p);
  for (let i = 0; i < p; i++) {
    let s = b[i];
    for (let k = 0; k < i; k++) s -= a[i * p + k] * z[k];
    z[i] = s / a[i * p + i];
  }
  const x = scratch('cholesky.x', p);
  for (let i = p - 1; i >= 0; i--) {
    let s = z[i];
    for (let k = i + 1; k < p; k++) s -= a[k * p + i] * x[k];
    x[i] = s / a[i * p + i];
  }
  return x;
}

export function predictLinear(model: LinearModel, row: ArrayLike<number>): number {
  let s = model.intercept;
  for (let j = 0; j < model.coef.length; j++) s += model.coef[j] * row[j];
  return s;
}
