// Per-horizon combination of the direct and the recursive forecast (issue 15): at each
// origin, for each horizon day, the share of the recursive forecast is the one of
// RECURSIVE_SHARES whose blend had the smallest MAE over the calibration errors the
// conformal bounds use (the last origins whose target days are known at the origin), so
// nothing of the forecast's own target enters the choice. Ties go to the smaller share
// (the direct forecast is the default); without enough calibration points the direct
// forecast stands.

/** Shares of the recursive forecast tried (1 - share is the direct forecast's weight). */
export const RECURSIVE_SHARES: readonly number[] = [0, 0.25, 0.5, 0.75, 1];

/** Running absolute errors of every share's blend over calibration points. */
export class ShareScores {
  private readonly absErrors = new Float64Array(RECURSIVE_SHARES.length);
  private points = 0;

  /** One calibration point; non-finite ones are left out (as in the conformal set). */
  add(actual: number, direct: number, recursive: number): void {
    if (!Number.isFinite(actual) || !Number.isFinite(direct) || !Number.isFinite(recursive)) return;
    for (let k = 0; k < RECURSIVE_SHARES.length; k++) {
      const share = RECURSIVE_SHARES[k];
      this.absErrors[k] += Math.abs(actual - ((1 - share) * direct + share * recursive));
    }
    this.points++;
  }

  get size(): number {
    return this.points;
  }

  /** The share with the smallest MAE (the smaller on a tie); 0 with fewer than `minPoints` points. */
  best(minPoints: number): number {
    if (this.points < minPoints) return 0;
    let k = 0;
    for (let i = 1; i < RECURSIVE_SHARES.length; i++) if (this.absErrors[i] < this.absErrors[k]) k = i;
    return RECURSIVE_SHARES[k];
  }
}

/** (1 - share) x direct + share x recursive, per slot. */
export function blendDay(direct: Float64Array, recursive: Float64Array, share: number): Float64Array {
  if (share === 0) return direct;
  if (share === 1) return recursive;
  return direct.map((d, s) => (1 - share) * d + share * recursive[s]);
}
