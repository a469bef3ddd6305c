// Linear algebra of the cross-hour model: the QL eigen-decomposition reconstructs its
// matrix, and the shared-design ridge gives the same predictions as a per-target ridge
// (Cholesky) at the same penalty, with more features than rows too.
import { describe, expect, it } from 'vitest';
import { fitRidgeFixed, predictLinear } from '../../src/forecast/ridge.js';
import { productWithTransposed, SharedRidgeDesign, symmetricEigenQl } from '../../src/forecast/shared-ridge.js';

function generator(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647 - 0.5;
  };
}

describe('shared-design ridge', () => {
  it('A B\' blocked two rows by four gives the bits of plain dot products, on every edge of the blocks', () => {
    const rnd = generator(11);
    for (const [n, r, p] of [[1, 1, 1], [2, 4, 3], [3, 5, 7], [7, 9, 13], [8, 8, 1], [5, 3, 0]]) {
      const a = Float64Array.from({ length: n * p }, () => (rnd() < -0.4 ? 0 : rnd() * 1e3));
      const b = Float64Array.from({ length: r * p }, rnd);
      const got = productWithTransposed(a, n, b, r, p);
      expect(got).toHaveLength(n * r);
      for (let i = 0; i < n; i++)
        for (let c = 0; c < r; c++) {
          let s = 0;
          for (let k = 0; k < p; k++) s += a[i * p + k] * b[c * p + k];
          expect(Object.is(got[i * r + c], s)).toBe(true);
        }
    }
  });

  it('eigen-decomposition reconstructs a symmetric matrix', () => {
    const rnd = generator(7);
    for (const p of [1, 3, 30]) {
      const a = new Float64Array(p * p);
      for (let i = 0; i < p; i++)
        for (let j = 0; j <= i; j++) {
          const v = rnd();
          a[i * p + j] = v;
          a[j * p + i] = v;
        }
      const { values, vectors } = symmetricEigenQl(a, p);
      for (let i = 0; i < p; i++)
        for (let j = 0; j < p; j++) {
          let s = 0;
          for (let k = 0; k < p; k++) s += vectors[i * p + k] * values[k] * vectors[j * p + k];
          expect(s).toBeCloseTo(a[i * p + j], 10);
        }
    }
  });

  it.each([
    [60, 8],
    [20, 45],
  ])('n=%i rows, p=%i features: same prediction as a single-target ridge; two targets, one decomposition', (n, p) => {
    const rnd = generator(n * 100 + p);
    const x = new Float64Array(n * p).map(rnd);
    const y1 = new Float64Array(n).map((_, i) => 2 * x[i * p] - x[i * p + 1] + 0.1 * rnd());
    const y2 = new Float64Array(n).map((_, i) => x[i * p + 2] + 0.1 * rnd());
    const row = new Float64Array(p).map(rnd);
    const design = new SharedRidgeDesign(x, n, p);
    const at = design.project(row);
    for (const y of [y1, y2]) {
      const shared = design.fitPredict(y, at, 0.05);
      expect(shared.value).toBeCloseTo(predictLinear(fitRidgeFixed(x, y, n, p, 0.05), row), 9);
      const loo = design.fitPredict(y, at);
      expect(loo.relativePenalty).toBeGreaterThan(0);
      expect(Number.isFinite(loo.value)).toBe(true);
    }
  });
});
