// Rolling-origin forecasting with split-conformal bounds. The same code path serves the
// gateway (the last origin is today's forecast) and the backtest (every origin is
// scored): at each origin the model is refitted on what was known then, and the bounds
// are the empirical quantiles of the model's own out-of-sample errors of recent origins
// whose targets are already known, per horizon day. Errors are divided by a scale known
// at their origin (recent day-to-day price variation) so the bounds widen and narrow with
// the market rather than lagging a regime change by the whole calibration window.
import { valueAt, type DayMatrix } from './day-matrix.js';
import { forecastLearPaths, quantileSorted, type DayForecast, type LearOptions } from './lear.js';
import { blendDay, ShareScores } from './blend.js';
import { PenaltyCache } from './penalty-cache.js';
import { normalQuantile } from './probabilistic.js';
import { idrQuantiles } from './idr.js';
import type { BandMethod } from './band-methods.js';

export type ErrorScaling = 'none' | 'recent-variation';

/** Half-width of a central 80 % normal interval in standard deviations: the cold-start bounds. */
export const COLD_START_Z = 1.2816;

export interface RollingOptions extends LearOptions {
  /** How many recent origins' errors calibrate the bounds. */
  readonly calibrationDays: number;
  /** Nominal coverage of the bounds, e.g. 0.8. */
  readonly coverage: number;
  readonly scaling: ErrorScaling;
  /** Days after the origin day whose exogenous forecasts are known at the origin. */
  readonly exogenousLeadDays: number;
  /**
   * Adaptive conformal inference (Gibbs & Candes 2021): after each revealed day, the
   * quantile level of each horizon moves by this rate times (nominal miss rate - the day's
   * miss rate), so the long-run coverage holds under distribution shift. 0 = off.
   */
  readonly adaptiveRate?: number;
  /**
   * Also forecast recursively (the day-ahead model fed its own forecasts, recursive.ts)
   * and ship, per horizon, the blend of direct and recursive whose share did best on the
   * calibration origins (blend.ts). Off: the direct forecasts alone.
   */
  readonly recursiveBlend?: boolean;
  /** How many recent origins' errors choose the blend's share (default calibrationDays). */
  readonly blendCalibrationDays?: number;
  /**
   * Levels (0..1) of quantiles to report besides the band (`BoundedDayForecast.quantiles`;
   * the backtest's scorecard asks for them, the service does not).
   */
  readonly quantileLevels?: readonly number[];
  /** With quantileLevels, also the candidate quantiles (IDR, averages; `candidates`). */
  readonly candidateQuantiles?: boolean;
  /**
   * Per horizon (index h - 1), where the band (`lower`, `upper`) and the reported quantiles
   * come from (band-methods.ts; absent or short: conformal). The adaptive correction
   * (adaptiveRate) follows the conformal band's own misses whatever is shipped, as measured.
   */
  readonly bandMethods?: readonly BandMethod[];
}

export interface RollingInput {
  readonly prices: DayMatrix;
  readonly exogenous?: Readonly<Record<string, DayMatrix>>;
  /**
   * Day-level load inputs for D+2.. (week-ahead.ts), read only at `origin`: the live
   * origin whose fetched week-ahead forecast they are. Earlier origins did not know them
   * (the stored day-ahead load of those days came later), so they stay without.
   */
  readonly dailyLoad?: { readonly series: Readonly<Record<string, DayMatrix>>; readonly origin: number; readonly knownThrough: number };
}

export interface BoundedDayForecast {
  readonly originDay: number;
  readonly day: number;
  readonly horizon: number;
  readonly method: 'lear' | 'naive';
  readonly forecast: Float64Array;
  /** The band at the configured coverage, from `bandMethod`'s quantiles. */
  readonly lower: Float64Array;
  readonly upper: Float64Array;
  /** Where the band and `quantiles` came from: the configured method, or conformal while too few calibration pairs. */
  readonly bandMethod: BandMethod;
  /** Number of calibration errors behind the bounds (0: the normal fallback was used). */
  readonly calibrationSize: number;
  /** With recursiveBlend: the direct and the recursive forecast, and the recursive one's share in `forecast`. */
  readonly direct?: Float64Array;
  readonly recursive?: Float64Array;
  readonly recursiveShare?: number;
  /** With quantileLevels: the shipped (bandMethod's) quantiles, level-major (level i, slot s at i * slots + s). */
  readonly quantiles?: Float64Array;
  /**
   * With quantileLevels and candidateQuantiles, every method measured against each other
   * (issue 24), same layout: the conformal quantiles, IDR of the price on the forecast, and
   * the average of the IDR and the conformal quantiles (Lipiecki, Uniejewski & Weron's
   * averaging of post-processors). Cold (too few calibration pairs): the conformal quantiles.
   */
  readonly candidates?: {
    readonly conformal: Float64Array;
    readonly idr: Float64Array;
    readonly average: Float64Array;
    /** IDR with the conformal (ACI) correction of its own band's coverage, and its average with the conformal quantiles. */
    readonly idrAci: Float64Array;
    readonly averageAci: Float64Array;
    /** idrAci's band at the nominal levels (lower, upper): what its ACI step scores. */
    readonly idrAciBand?: readonly [Float64Array, Float64Array];
  };
}

/** Mean absolute day-to-day change of the last 14 known days: the scale of errors at an origin. */
export function recentVariation(prices: DayMatrix, lastKnownDay: number): number {
  let sum = 0;
  let n = 0;
  for (let d = lastKnownDay - 13; d <= lastKnownDay; d++)
    for (let s = 0; s < prices.slots; s++) {
      const a = valueAt(prices, d, s);
      const b = valueAt(prices, d - 1, s);
      if (Number.isNaN(a) || Number.isNaN(b)) continue;
      sum += Math.abs(a - b);
      n++;
    }
  return n > 0 ? Math.max(sum / n, 1e-3) : 1;
}

interface PastForecast {
  readonly originDay: number;
  readonly scale: number;
  /** lower/upper: the conformal band, whatever was shipped (its misses drive the ACI step). */
  readonly days: { day: number; horizon: number; values: Float64Array; lower: Float64Array; upper: Float64Array; direct?: Float64Array; recursive?: Float64Array; idrLower?: Float64Array; idrUpper?: Float64Array }[];
}

/**
 * Steps through consecutive origins (each the last day with known prices). Bounds of an
 * origin use only errors of earlier origins whose target days are known by then, so start
 * `calibrationDays + horizonDays` before the first origin whose bounds matter.
 */
export class ConformalForecaster {
  private readonly past: PastForecast[] = [];
  private readonly penalties = new PenaltyCache();
  /** Per horizon (index h-1), the miss rate currently aimed at (ACI); starts at the nominal one. */
  private readonly missLevel: number[];
  /** The same for the IDR candidate's band (backtest only, quantileLevels). */
  private readonly idrMissLevel: number[];

  constructor(
    private input: RollingInput,
    private readonly options: RollingOptions,
  ) {
    this.missLevel = Array.from({ length: options.horizonDays }, () => 1 - options.coverage);
    this.idrMissLevel = Array.from({ length: options.horizonDays }, () => 1 - options.coverage);
  }

  /** The last origin advanced to, if any. */
  get lastOrigin(): number | undefined {
    return this.past.length > 0 ? this.past[this.past.length - 1].originDay : undefined;
  }

  /**
   * Newer data for the next origins (same slot layout). Earlier origins' forecasts stay as
   * they were made; their errors are scored against the new data.
   */
  updateInput(input: RollingInput): void {
    this.input = input;
  }

  /** ACI step: each horizon's forecast whose target day `o` is now known moves its level. */
  private adapt(o: number): void {
    const rate = this.options.adaptiveRate ?? 0;
    if (rate <= 0) return;
    const nominal = 1 - this.options.coverage;
    for (const f of this.past) {
      const h = o - f.originDay;
      const fd = f.days[h - 1];
      if (!fd || fd.day !== o) continue;
      let misses = 0;
      let n = 0;
      for (let s = 0; s < fd.values.length; s++) {
        const actual = valueAt(this.input.prices, o, s);
        if (Number.isNaN(actual)) continue;
        n++;
        if (actual < fd.lower[s] || actual > fd.upper[s]) misses++;
      }
      if (n === 0) continue;
      const level = this.missLevel[h - 1] + rate * (nominal - misses / n);
      this.missLevel[h - 1] = Math.min(0.95, Math.max(0.005, level));
      const { idrLower, idrUpper } = fd;
      if (idrLower && idrUpper) {
        let idrMisses = 0;
        for (let s = 0; s < fd.values.length; s++) {
          const actual = valueAt(this.input.prices, o, s);
          if (!Number.isNaN(actual) && (actual < idrLower[s] || actual > idrUpper[s])) idrMisses++;
        }
        const idrLevel = this.idrMissLevel[h - 1] + rate * (nominal - idrMisses / n);
        this.idrMissLevel[h - 1] = Math.min(0.95, Math.max(0.005, idrLevel));
      }
    }
  }

  /**
   * The blend of origin `o`'s direct and recursive forecast of one horizon day, its share
   * chosen on the errors of the calibration origins the bounds use (blend.ts). Where the
   * recursion did not run (the naive fallback) the direct forecast stands for both.
   */
  private blend(o: number, d: DayForecast, recursiveValues: Float64Array | undefined): { point: DayForecast; direct: Float64Array; recursive: Float64Array; share: number } {
    const recursive = recursiveValues ?? d.values;
    // D+1 price only: the recursion starts from the direct day ahead, nothing to choose.
    if (recursive === d.values) return { point: d, direct: d.values, recursive, share: 0 };
    const scores = new ShareScores();
    for (const f of this.past) {
      if (f.originDay < o - blendDays(this.options) - d.horizon + 1 || f.originDay + d.horizon > o) continue;
      const fd = f.days[d.horizon - 1];
      if (!fd?.direct || !fd.recursive) continue;
      for (let s = 0; s < fd.direct.length; s++) scores.add(valueAt(this.input.prices, fd.day, s), fd.direct[s], fd.recursive[s]);
    }
    // At least two weeks of calibration days, as many as the bounds' minimum several times over.
    const share = scores.best(14 * d.values.length);
    return { point: { ...d, values: blendDay(d.values, recursive, share) }, direct: d.values, recursive, share };
  }

  /**
   * Forecasts from origin `o` (call with increasing origins). `calibrationOnly`: the caller
   * keeps only what later origins calibrate on (the service's origins before today's), so
   * the band stays conformal and no IDR is fitted; later origins are the same either way
   * (ACI and the calibration read the conformal band and the point forecasts only).
   */
  advance(o: number, { calibrationOnly = false }: { readonly calibrationOnly?: boolean } = {}): BoundedDayForecast[] {
    const { input, options, past } = this;
    this.adapt(o);
    const out: BoundedDayForecast[] = [];
    const paths = forecastLearPaths(
      {
        prices: input.prices,
        exogenous: input.exogenous,
        lastKnownDay: o,
        exogenousKnownThrough: o + options.exogenousLeadDays,
        ...(input.dailyLoad && input.dailyLoad.origin === o ? { dailyLoad: { series: input.dailyLoad.series, knownThrough: input.dailyLoad.knownThrough } } : {}),
      },
      options,
      this.penalties,
      options.recursiveBlend === true,
    );
    const blends = paths.recursive ? paths.direct.map((d, i) => this.blend(o, d, paths.recursive![i])) : undefined;
    const points = blends ? blends.map((b) => b.point) : paths.direct;
    const scale = options.scaling === 'none' ? 1 : recentVariation(input.prices, o);
    const nominalHalf = (1 - options.coverage) / 2;
    const conformalBands: [Float64Array, Float64Array][] = [];
    for (const p of points) {
      const configured = calibrationOnly ? 'conformal' : (options.bandMethods?.[p.horizon - 1] ?? 'conformal');
      const wantPairs = options.candidateQuantiles === true || configured === 'average';
      const scores: number[] = [];
      // Calibration pairs (forecast, price) for IDR: only for the average band or the candidates.
      const pairX: number[] = [];
      const pairY: number[] = [];
      for (const f of past) {
        if (f.originDay < o - options.calibrationDays - p.horizon + 1) continue;
        if (f.originDay + p.horizon > o) continue;
        const fd = f.days[p.horizon - 1];
        if (!fd) continue;
        for (let s = 0; s < fd.values.length; s++) {
          // Only finite errors calibrate: a NaN does not sort, and one in the set turned
          // every later bound NaN (issue 15).
          const score = (valueAt(input.prices, fd.day, s) - fd.values[s]) / f.scale;
          if (Number.isFinite(score)) {
            scores.push(score);
            if (wantPairs) {
              pairX.push(fd.values[s]);
              pairY.push(valueAt(input.prices, fd.day, s));
            }
          }
        }
      }
      scores.sort((a, b) => a - b);
      const n = scores.length;
      const calibrated = n >= 2 * p.values.length;
      let qLo: number;
      let qHi: number;
      if (calibrated) {
        const alpha = this.missLevel[p.horizon - 1];
        qLo = quantileSorted(scores, alpha / 2);
        qHi = quantileSorted(scores, 1 - alpha / 2);
      } else {
        // Cold start without own errors: a normal interval on the recent variation.
        const z = COLD_START_Z * Math.sqrt(p.horizon);
        const sc = options.scaling === 'none' ? recentVariation(input.prices, o) : 1;
        qLo = -z * sc;
        qHi = z * sc;
      }
      const lower = new Float64Array(p.values.length);
      const upper = new Float64Array(p.values.length);
      for (let s = 0; s < p.values.length; s++) {
        lower[s] = p.values[s] + qLo * scale;
        upper[s] = p.values[s] + qHi * scale;
      }
      conformalBands.push([lower, upper]);
      const conformal = options.quantileLevels
        ? conformalQuantiles(options.quantileLevels, p.values, scale, {
            nominalHalf,
            qLo,
            qHi,
            ...(calibrated ? { scores, aciHalf: this.missLevel[p.horizon - 1] / 2 } : {}),
          })
        : undefined;
      const idrPairs = calibrated && pairX.length >= 2 * p.values.length;
      const candidates = conformal && options.quantileLevels && options.candidateQuantiles ? idrCandidates(options.quantileLevels, p.values, conformal, idrPairs ? pairX : [], pairY, nominalHalf, this.idrMissLevel[p.horizon - 1] / 2) : undefined;
      // The average needs IDR's pairs; without them (cold) the band stays conformal.
      const bandMethod: BandMethod = configured === 'average' && idrPairs ? 'average' : 'conformal';
      const band = bandMethod === 'conformal' ? { lower, upper } : (candidates && bandOf(options.quantileLevels!, candidates.average, p.values.length, nominalHalf)) ?? averageBand(pairX, pairY, p.values, lower, upper, nominalHalf);
      const quantiles = conformal && (bandMethod === 'average' ? averageQuantiles(options.quantileLevels!, p.values, conformal, pairX, pairY, candidates) : conformal);
      const b = blends?.[p.horizon - 1];
      out.push({
        originDay: o,
        day: p.day,
        horizon: p.horizon,
        method: p.method,
        forecast: p.values,
        lower: band.lower,
        upper: band.upper,
        bandMethod,
        calibrationSize: calibrated ? n : 0,
        ...(b ? { direct: b.direct, recursive: b.recursive, recursiveShare: b.share } : {}),
        ...(quantiles ? { quantiles } : {}),
        ...(candidates ? { candidates } : {}),
      });
    }
    past.push({ originDay: o, scale, days: out.map((p, i) => ({ day: p.day, horizon: p.horizon, values: p.forecast, lower: conformalBands[i][0], upper: conformalBands[i][1], direct: p.direct, recursive: p.recursive, ...(p.candidates?.idrAciBand ? { idrLower: p.candidates.idrAciBand[0], idrUpper: p.candidates.idrAciBand[1] } : {}) })) });
    const kept = Math.max(options.calibrationDays, options.recursiveBlend ? blendDays(options) : 0);
    while (past.length > 0 && past[0].originDay < o - kept - options.horizonDays) past.shift();
    return out;
  }
}

/**
 * Quantiles of a day forecast from the same conformal scores as its band: the score
 * quantile at each level, the levels warped piecewise linearly so that the band's own
 * levels land on the ACI-adjusted ones (0 -> 0, nominal alpha/2 -> ACI's alpha/2,
 * 0.5 -> 0.5, symmetric above). So the quantiles at the band's levels are exactly its
 * lower and upper bounds (the endpoint's contract) and the adaptive correction carries
 * over to every level; monotone in the level. Without scores (cold start) a normal law
 * whose band quantiles are the cold-start bounds.
 */
export function conformalQuantiles(
  levels: readonly number[],
  values: Float64Array,
  scale: number,
  c: { nominalHalf: number; qLo: number; qHi: number; scores?: readonly number[]; aciHalf?: number },
): Float64Array {
  const slots = values.length;
  const out = new Float64Array(levels.length * slots);
  levels.forEach((tau, i) => {
    let q: number;
    if (Math.abs(tau - c.nominalHalf) < 1e-9) q = c.qLo;
    else if (Math.abs(tau - (1 - c.nominalHalf)) < 1e-9) q = c.qHi;
    else if (c.scores && c.aciHalf !== undefined) q = quantileSorted(c.scores, warpLevel(tau, c.nominalHalf, c.aciHalf));
    else q = (normalQuantile(tau) / -normalQuantile(c.nominalHalf)) * (tau < 0.5 ? -c.qLo : c.qHi);
    for (let s = 0; s < slots; s++) out[i * slots + s] = values[s] + q * scale;
  });
  return out;
}

/**
 * The band of the average method: per slot the mean of the IDR quantile at the band's level
 * and the conformal bound (so it equals the average candidate's quantiles at those levels).
 * IDR is fitted here for the two levels only; its arrays are dropped on return.
 */
export function averageBand(pairX: readonly number[], pairY: readonly number[], values: Float64Array, lower: Float64Array, upper: Float64Array, nominalHalf: number): { lower: Float64Array; upper: Float64Array } {
  const slots = values.length;
  // The levels as the backtest's QUANTILE_LEVELS write them ((1 - 0.8) / 2 is 0.09999999999999998,
  // whose IDR quantile differs from 0.1's in the last bit).
  const level = Math.round(nominalHalf * 1e9) / 1e9;
  const idr = idrQuantiles(pairX, pairY, values, [level, 1 - level]);
  return {
    lower: Float64Array.from(lower, (c, s) => (idr[s] + c) / 2),
    upper: Float64Array.from(upper, (c, s) => (idr[slots + s] + c) / 2),
  };
}

/** The quantiles at the band's levels, when `levels` has them (the backtest's computed the average already). */
function bandOf(levels: readonly number[], quantiles: Float64Array, slots: number, nominalHalf: number): { lower: Float64Array; upper: Float64Array } | undefined {
  const lo = levels.findIndex((t) => Math.abs(t - nominalHalf) < 1e-9);
  const hi = levels.findIndex((t) => Math.abs(t - (1 - nominalHalf)) < 1e-9);
  return lo >= 0 && hi >= 0 ? { lower: quantiles.slice(lo * slots, (lo + 1) * slots), upper: quantiles.slice(hi * slots, (hi + 1) * slots) } : undefined;
}

/** The average method's quantiles at every level: the candidates' average where computed, else fitted here. */
function averageQuantiles(levels: readonly number[], values: Float64Array, conformal: Float64Array, pairX: readonly number[], pairY: readonly number[], candidates: BoundedDayForecast['candidates']): Float64Array {
  if (candidates) return candidates.average;
  const idr = idrQuantiles(pairX, pairY, values, levels);
  return Float64Array.from(idr, (q, i) => (q + conformal[i]) / 2);
}

/**
 * The candidate quantiles of a day forecast (BoundedDayForecast.candidates): IDR as
 * fitted, IDR with its levels warped by its own ACI level (the conformal correction of its
 * band's coverage, as the conformal quantiles are warped), and each averaged with the
 * conformal quantiles. Cold: the conformal quantiles.
 */
function idrCandidates(
  levels: readonly number[],
  values: Float64Array,
  conformal: Float64Array,
  pairX: readonly number[],
  pairY: readonly number[],
  nominalHalf: number,
  aciHalf: number,
): NonNullable<BoundedDayForecast['candidates']> {
  if (pairX.length < 2 * values.length) return { conformal, idr: conformal, average: conformal, idrAci: conformal, averageAci: conformal };
  const idr = idrQuantiles(pairX, pairY, values, levels);
  const idrAci = idrQuantiles(pairX, pairY, values, levels.map((t) => warpLevel(t, nominalHalf, aciHalf)));
  const average = Float64Array.from(idr, (q, i) => (q + conformal[i]) / 2);
  const averageAci = Float64Array.from(idrAci, (q, i) => (q + conformal[i]) / 2);
  const slots = values.length;
  const lo = levels.findIndex((t) => Math.abs(t - nominalHalf) < 1e-9);
  const hi = levels.findIndex((t) => Math.abs(t - (1 - nominalHalf)) < 1e-9);
  const idrAciBand = lo >= 0 && hi >= 0 ? ([idrAci.slice(lo * slots, (lo + 1) * slots), idrAci.slice(hi * slots, (hi + 1) * slots)] as const) : undefined;
  return { conformal, idr, average, idrAci, averageAci, ...(idrAciBand ? { idrAciBand } : {}) };
}

/** Piecewise-linear map of [0, 1] with a -> b, 0.5 -> 0.5 and its mirror image above 0.5. */
export function warpLevel(tau: number, a: number, b: number): number {
  if (tau > 0.5) return 1 - warpLevel(1 - tau, a, b);
  return tau <= a ? (tau * b) / a : b + ((tau - a) * (0.5 - b)) / (0.5 - a);
}

function blendDays(options: RollingOptions): number {
  return options.blendCalibrationDays ?? options.calibrationDays;
}

/** Forecasts from every origin in [firstOrigin, lastOrigin]; see ConformalForecaster. */
export function rollingForecasts(
  input: RollingInput,
  firstOrigin: number,
  lastOrigin: number,
  options: RollingOptions,
): BoundedDayForecast[] {
  const forecaster = new ConformalForecaster(input, options);
  const out: BoundedDayForecast[] = [];
  for (let o = firstOrigin; o <= lastOrigin; o++) out.push(...forecaster.advance(o));
  return out;
}
