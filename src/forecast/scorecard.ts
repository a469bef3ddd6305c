// The probabilistic scorecard of a backtest, per horizon day (issue 24): CRPS from the
// 1..99 % quantiles, pinball loss at 10/50/90 %, coverage of the central 50/80/95 % bands
// with Kupiec's and Christoffersen's tests, and Diebold-Mariano against the naive and
// against a previous release's forecasts. Points are added in time order; pure.
import { blockBootstrapSe, christoffersen, crpsFromQuantiles, dieboldMariano, kupiec, pinball, type DieboldMariano } from './probabilistic.js';

/** The CRPS grid: 1, 2, ..., 99 %. */
export const CRPS_LEVELS: readonly number[] = Array.from({ length: 99 }, (_, i) => (i + 1) / 100);
/** Central bands scored, nominal coverage. */
export const BANDS: readonly number[] = [0.5, 0.8, 0.95];
/** Every level the scorecard reads: the CRPS grid plus the 95 % band's 2.5 / 97.5 %. */
export const QUANTILE_LEVELS: readonly number[] = [...CRPS_LEVELS, 0.025, 0.975].sort((a, b) => a - b);
export const PINBALL_LEVELS: readonly number[] = [0.1, 0.5, 0.9];

const levelIndex = (tau: number): number => {
  const i = QUANTILE_LEVELS.findIndex((l) => Math.abs(l - tau) < 1e-12);
  if (i < 0) throw new RangeError(`level ${tau} is not in QUANTILE_LEVELS`);
  return i;
};
const CRPS_INDEX = CRPS_LEVELS.map(levelIndex);
const PINBALL_INDEX = PINBALL_LEVELS.map(levelIndex);
const BAND_INDEX = BANDS.map((b) => [levelIndex(Math.round(((1 - b) / 2) * 1000) / 1000), levelIndex(Math.round((1 - (1 - b) / 2) * 1000) / 1000)] as const);

export interface ScorecardPoint {
  /** Target local day and slot. */
  readonly day: number;
  readonly slot: number;
  readonly actual: number;
  readonly forecast: number;
  readonly naive: number;
  /** The previous release's forecast of the same point, NaN if none. */
  readonly previous: number;
  /** Quantiles at QUANTILE_LEVELS (non-decreasing). */
  readonly quantiles: ArrayLike<number>;
}

export interface BandScore {
  readonly nominal: number;
  readonly coverage: number;
  /** Kupiec's unconditional coverage test on every point. */
  readonly kupiecP: number;
  /** Christoffersen's conditional coverage test on the points in time order. */
  readonly christoffersenP: number;
  /** Christoffersen's independence test alone, same sequence. */
  readonly independenceP: number;
  /** Slots whose daily sequence passes the conditional coverage test at 5 %, of `slots`. */
  readonly slotsPassing: number;
  readonly slots: number;
}

export interface ScorecardRow {
  readonly horizon: number;
  readonly n: number;
  readonly crps: number;
  /** Mean pinball loss at PINBALL_LEVELS. */
  readonly pinball: readonly number[];
  readonly bands: readonly BandScore[];
  /** DM on daily mean absolute errors: negative statistic = the forecast beats the naive. */
  readonly dmNaive: DieboldMariano;
  /** The same against the previous release's forecasts, on the points both have. */
  readonly dmPrevious?: DieboldMariano;
  /** Noise: moving-block bootstrap standard errors (7-day blocks) of rMAE and CRPS. */
  readonly rmaeSe: number;
  readonly crpsSe: number;
}

interface DaySums {
  n: number;
  abs: number;
  naive: number;
  prevN: number;
  prevAbs: number;
  prevOwn: number;
  crps: number;
}

class HorizonAccumulator {
  n = 0;
  crps = 0;
  readonly pinball = PINBALL_LEVELS.map(() => 0);
  readonly misses = BANDS.map(() => [] as number[]);
  readonly slotMisses = BANDS.map(() => new Map<number, number[]>());
  readonly days = new Map<number, DaySums>();

  add(p: ScorecardPoint): void {
    this.n++;
    const q = p.quantiles;
    const grid = CRPS_INDEX.map((i) => q[i]);
    const crps = crpsFromQuantiles(p.actual, grid, CRPS_LEVELS);
    this.crps += crps;
    PINBALL_INDEX.forEach((i, k) => (this.pinball[k] += pinball(p.actual, q[i], PINBALL_LEVELS[k])));
    BAND_INDEX.forEach(([lo, hi], b) => {
      const miss = p.actual < q[lo] || p.actual > q[hi] ? 1 : 0;
      this.misses[b].push(miss);
      const perSlot = this.slotMisses[b].get(p.slot) ?? [];
      perSlot.push(miss);
      this.slotMisses[b].set(p.slot, perSlot);
    });
    let d = this.days.get(p.day);
    if (!d) this.days.set(p.day, (d = { n: 0, abs: 0, naive: 0, prevN: 0, prevAbs: 0, prevOwn: 0, crps: 0 }));
    d.crps += crps;
    const own = Math.abs(p.actual - p.forecast);
    d.n++;
    d.abs += own;
    d.naive += Math.abs(p.actual - p.naive);
    if (Number.isFinite(p.previous)) {
      d.prevN++;
      d.prevOwn += own;
      d.prevAbs += Math.abs(p.actual - p.previous);
    }
  }

  finish(horizon: number): ScorecardRow {
    const bands = BANDS.map((nominal, b) => {
      const seq = this.misses[b];
      const missCount = seq.reduce((a, m) => a + m, 0);
      const ch = christoffersen(seq, 1 - nominal);
      let slotsPassing = 0;
      for (const s of this.slotMisses[b].values()) if (christoffersen(s, 1 - nominal).conditional.pValue >= 0.05) slotsPassing++;
      return {
        nominal,
        coverage: 1 - missCount / seq.length,
        kupiecP: kupiec(seq.length, missCount, 1 - nominal).pValue,
        christoffersenP: ch.conditional.pValue,
        independenceP: ch.independence.pValue,
        slotsPassing,
        slots: this.slotMisses[b].size,
      };
    });
    const days = [...this.days.entries()].sort((a, b) => a[0] - b[0]).map(([, d]) => d);
    const dmNaive = dieboldMariano(
      days.map((d) => (d.abs - d.naive) / d.n),
      horizon - 1,
    );
    const withPrevious = days.filter((d) => d.prevN > 0);
    const dmPrevious =
      withPrevious.length > 0
        ? dieboldMariano(
            withPrevious.map((d) => (d.prevOwn - d.prevAbs) / d.prevN),
            horizon - 1,
          )
        : undefined;
    return {
      horizon,
      n: this.n,
      crps: this.crps / this.n,
      pinball: this.pinball.map((s) => s / this.n),
      bands,
      dmNaive,
      ...(dmPrevious ? { dmPrevious } : {}),
      rmaeSe: blockBootstrapSe(
        days.map((d) => d.abs),
        days.map((d) => d.naive),
      ),
      crpsSe: blockBootstrapSe(
        days.map((d) => d.crps),
        days.map((d) => d.n),
      ),
    };
  }
}

/** Collects scored points per horizon (in time order within each) and scores them. */
export class Scorecard {
  private readonly horizons = new Map<number, HorizonAccumulator>();

  /** A point whose actual, forecast, naive or any quantile is not a number is left out (the caller counts it). */
  add(horizon: number, p: ScorecardPoint): boolean {
    if (!Number.isFinite(p.actual) || !Number.isFinite(p.forecast) || !Number.isFinite(p.naive)) return false;
    for (let i = 0; i < p.quantiles.length; i++) if (!Number.isFinite(p.quantiles[i])) return false;
    let acc = this.horizons.get(horizon);
    if (!acc) this.horizons.set(horizon, (acc = new HorizonAccumulator()));
    acc.add(p);
    return true;
  }

  rows(): ScorecardRow[] {
    return [...this.horizons.entries()].sort((a, b) => a[0] - b[0]).map(([h, acc]) => acc.finish(h));
  }
}

const pFmt = (p: number): string => (Number.isNaN(p) ? '-' : p < 0.001 ? '<.001' : p.toFixed(3));
const dmFmt = (dm: DieboldMariano | undefined): string => (dm ? `${Number.isFinite(dm.statistic) ? dm.statistic.toFixed(1) : String(dm.statistic)} (${pFmt(dm.pValue)})` : '-');

/**
 * The printed scorecard, one line per horizon. `point` gives MAE and rMAE per horizon
 * (the point table's figures) to stand next to the distribution's.
 */
export function formatScorecard(rows: readonly ScorecardRow[], point: ReadonlyMap<number, { mae: number; rmae: number }>): string {
  const bandHead = BANDS.map((b) => `${Math.round(100 * b)} % cov (Kupiec p / Chr. p / slots ok)`).join(' | ');
  const head = `| day | MAE | rMAE ±2 SE | CRPS ±2 SE | pinball 10 / 50 / 90 % | ${bandHead} | DM vs naive (p) | DM vs previous (p) |`;
  const sep = `|${'---|'.repeat(7 + BANDS.length)}`;
  const lines = rows.map((r) => {
    const pt = point.get(r.horizon);
    const bands = r.bands.map((b) => `${(100 * b.coverage).toFixed(1)} (${pFmt(b.kupiecP)} / ${pFmt(b.christoffersenP)} / ${b.slotsPassing}/${b.slots})`).join(' | ');
    return `| D+${r.horizon} | ${pt ? pt.mae.toFixed(2) : '-'} | ${pt ? pt.rmae.toFixed(3) : '-'} ±${(2 * r.rmaeSe).toFixed(3)} | ${r.crps.toFixed(2)} ±${(2 * r.crpsSe).toFixed(2)} | ${r.pinball.map((x) => x.toFixed(2)).join(' / ')} | ${bands} | ${dmFmt(r.dmNaive)} | ${dmFmt(r.dmPrevious)} |`;
  });
  return [head, sep, ...lines].join('\n');
}
