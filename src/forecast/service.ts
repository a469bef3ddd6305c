// ForecastService: keeps the stored forecast of every configured region fresh. It
// recomputes after each price sync (the sync calls refresh()) and on an hourly cron, one
// region at a time, yielding to the event loop between forecast origins so HTTP requests
// are not held up. The endpoint only reads the stored result; it never trains.
import { parseCron, scheduleCron, type ScheduledJob } from '../schedule/cron-schedule.js';
import type { Config } from '../config/types.js';
import type { Clock } from '../clock.js';
import type { Module } from '../lifecycle.js';
import type { Logger } from '../log.js';
import type { ComponentHealth, ModuleViews } from '../ops/observability/views.js';
import { marketByCode, nativeResolutionS } from '../prices/markets.js';
import type { ForecastStore } from '../store/forecasts.js';
import { isoDate, localDayOf } from './local-days.js';
import { computeMarketForecast, forecastIntervalS, historyDaysNeeded, priceMatrixLayout, type WarmState } from './market-forecast.js';
import { DayMatrixBuilder } from './day-matrix.js';
import type { RollingOptions } from './rolling.js';
import { bandMethodsFor, shippedBandMethods, type BandMethodTable } from './band-methods.js';
import { EXOGENOUS_SERIES_NAMES, type ExogenousSeriesName } from '../prices/exogenous/series.js';
import type { PublishedPoint } from './exogenous-availability.js';
import { garbageBetweenSteps } from '../ops/garbage-between-steps.js';

const DAY_MS = 86_400_000;
/** Growth of heap + typed arrays between forecast origins after which the daemon collects (with --expose-gc). */
const TRAINING_GARBAGE_BYTES = 2 * 1024 * 1024;
/** Warm forecasters kept per region, one per set of inputs (warmByInputs). */
const MAX_WARM_INPUT_SETS = 3;

/** What the forecaster needs to know about a market. */
export interface ForecastMarket {
  readonly code: string;
  readonly timeZone: string;
  /** Native day-ahead period length at an instant (3600, or 900 after the 15-minute switch). */
  nativeResolutionS(atMs: number): number;
  /** Coupled zones whose exogenous series the forecaster reads too (markets.json exogenous_neighbours). */
  readonly exogenousNeighbours?: readonly string[];
}

export interface ForecastServiceDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly forecasts: ForecastStore;
  /** The stored native periods overlapping [fromMs, toMs), oldest first, one at a time (PriceStore.forEachNative). */
  readonly prices: { forEachNative(marketArea: string, fromMs: number, toMs: number, visit: (startMs: number, durationS: number, pricePerMwh: number) => void): void };
  /** Stored exogenous series (load, wind, solar forecasts) with fetch times; absent = price only. */
  readonly exogenous?: { forEachFetched(marketArea: string, series: ExogenousSeriesName, fromMs: number, toMs: number, visit: (startMs: number, durationS: number, valueMw: number, fetchedAtMs: number) => void): void };
  market(code: string): ForecastMarket | undefined;
  /** Which band each market, resolution and horizon gets; default the shipped band-methods.json. */
  readonly bandMethods?: BandMethodTable;
}

/** The registry's market as the forecaster sees it. */
export function forecastMarket(code: string): ForecastMarket | undefined {
  const m = marketByCode(code);
  return m && { code: m.code, timeZone: m.timeZone, nativeResolutionS: (atMs) => nativeResolutionS(m, atMs), ...(m.exogenousNeighbours ? { exogenousNeighbours: m.exogenousNeighbours } : {}) };
}

/** The forecaster's method settings from the configuration (methods, not tuned constants). */
export function rollingOptions(config: Config): RollingOptions {
  return {
    horizonDays: config.forecast.horizon_days,
    trainingWindowDays: config.forecast.training_window_days,
    transform: 'asinh',
    // The day ahead is forecast by the same-slot and the cross-hour model, averaged; with
    // exogenous inputs each of them on four calibration windows (8 and 12 weeks, as the
    // epftoolbox LEAR ensemble, the configured window and twice it). Later days: the
    // same-slot model on the configured window (docs/forecast-evaluation.md says why).
    members: ['same-slot', 'cross-hour'],
    crossHourDays: 1,
    windows: [56, 84, config.forecast.training_window_days, 2 * config.forecast.training_window_days],
    ensembleWithExogenousOnly: true,
    // With exogenous inputs, each zone's residual load (load minus its wind and solar) too.
    residualLoad: true,
    calibrationDays: 56,
    coverage: config.forecast.interval,
    scaling: 'recent-variation',
    exogenousLeadDays: 1,
    adaptiveRate: 0.05,
    // D+2..D+7: per horizon, the blend of the direct model and the recursive day-ahead
    // model whose share did best on the last 182 origins' errors (blend.ts; issue 15; a
    // longer set than the bounds' 56 origins chooses less noisily, docs say by how much).
    recursiveBlend: true,
    blendCalibrationDays: 182,
  };
}

/** Days of the horizon (tomorrow .. today + horizon_days) a region's last computation left without a forecast. */
export interface ForecastGap {
  readonly region: string;
  /** YYYY-MM-DD, local days of the market. */
  readonly days: readonly string[];
  readonly reason: string;
  /** No prices at all to forecast from: the price sync's or the operator's matter, not a forecasting fault. */
  readonly idle?: boolean;
}

/**
 * Days in today+1 .. today+horizon neither priced (at or before `origin`) nor forecast
 * (origin+1 .. origin+horizon, less `dropped`).
 */
export function unforecastDays(today: number, horizonDays: number, origin: number | undefined, dropped: readonly number[] = []): number[] {
  const out: number[] = [];
  for (let d = today + 1; d <= today + horizonDays; d++) {
    if (origin !== undefined && d <= origin) continue;
    if (origin === undefined || d > origin + horizonDays || dropped.includes(d)) out.push(d);
  }
  return out;
}

export class ForecastService implements Module {
  readonly name = 'forecast';
  /** /healthz `forecast` names a day of the horizon the forecaster could not forecast. */
  readonly views: ModuleViews = { health: { forecast: () => this.health() } };
  private task?: ScheduledJob;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  /** Per region: the forecaster as of its last origin, and what the stored forecast was made from. */
  private readonly warm = new Map<string, { state: WarmState; fingerprint: string; dropped: readonly number[] }>();
  /**
   * Per region, the last forecaster of each set of inputs. A live day switches between them
   * (tomorrow's series arrive: with series; then tomorrow's prices: price only again, the
   * day after has no series yet), and each advances from its own state the next day instead
   * of every switch starting cold (a cold start with series costs 20 times a warm update).
   */
  private readonly warmByInputs = new Map<string, Map<string, WarmState>>();
  /** Per region, what its last computation could not forecast (for /healthz). */
  private readonly gaps = new Map<string, ForecastGap>();
  /** Per region, what its stored forecast was made from (`prices + load, ...` or `prices only: why`). */
  private readonly inputs = new Map<string, string>();

  private readonly bandMethods: BandMethodTable;

  constructor(private readonly deps: ForecastServiceDeps) {
    this.bandMethods = deps.bandMethods ?? shippedBandMethods();
  }

  async start(): Promise<void> {
    if (!this.deps.config.forecast.enabled) return;
    this.stopped = false;
    // Hourly at minute 7 (UTC: the same minute in every whole-hour zone, every hour runs once).
    this.task = scheduleCron(parseCron('7 * * * *', 'UTC'), () => void this.refresh(), {
      now: () => this.deps.clock.now(),
      onError: (err) => this.deps.logger.error({ err }, 'forecast refresh schedule failed'),
    });
    // First computation in the background: start-up does not wait for training.
    setImmediate(() => void this.refresh());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.task?.stop();
    this.task = undefined;
    await this.running;
  }

  /** Recomputes every region; a call during a run schedules one more run after it. */
  refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          for (const region of this.deps.config.prices.regions) {
            if (this.stopped) return;
            await this.computeRegion(region);
          }
        } while (this.again && !this.stopped);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /**
   * The forecaster's part of /healthz: degraded while a day of some region's horizon could
   * not be forecast (the endpoint then ends early or answers from the gap filler), naming
   * the days and why; nothing is lost, so never down.
   */
  health(): ComponentHealth {
    if (!this.deps.config.forecast.enabled) return { status: 'disabled', reason: 'forecasting is off (forecast.enabled)' };
    const all = [...this.gaps.values()];
    const open = all.filter((g) => g.days.length > 0);
    if (open.length > 0) return { status: 'degraded', reason: open.map((g) => `${g.region}: could not forecast ${g.days.join(', ')} (${g.reason})`).join('; ') };
    if (all.length === 0) return { status: 'ok', reason: 'first forecast not computed yet' };
    const idle = all.filter((g) => g.idle);
    if (idle.length === all.length) return { status: 'disabled', reason: idle.map((g) => `${g.region}: ${g.reason}`).join('; ') };
    const made = all.filter((g) => !g.idle).map((g) => (this.inputs.has(g.region) ? `${g.region} (${this.inputs.get(g.region)})` : g.region));
    return { status: 'ok', reason: `every day of the horizon forecast for ${made.join(', ')}` };
  }

  private noteGap(region: string, days: readonly number[], reason: string, idle = false): void {
    const gap = { region, days: days.map(isoDate), reason, ...(idle ? { idle } : {}) };
    const before = this.gaps.get(region);
    this.gaps.set(region, gap);
    if (days.length > 0 && (before?.days.join() !== gap.days.join() || before?.reason !== reason)) {
      this.deps.logger.warn({ region, days: gap.days, reason }, 'forecast: days of the horizon could not be forecast');
    }
  }

  /** Computes and stores one region's forecast; false if there is not enough data. */
  async computeRegion(region: string): Promise<boolean> {
    const { logger, clock, config, forecasts, prices } = this.deps;
    const horizonDays = config.forecast.horizon_days;
    const market = this.deps.market(region);
    if (!market) {
      logger.warn({ region }, 'forecast: unknown market area');
      this.noteGap(region, unforecastDays(Math.floor(clock.now() / DAY_MS), horizonDays, undefined), 'unknown market area');
      return false;
    }
    const nowMs = clock.now();
    const targetIntervalS = market.nativeResolutionS(nowMs + 2 * DAY_MS);
    // The band's method per horizon, as measured for this market, resolution and coverage
    // (band-methods.json; conformal where never measured).
    const options: RollingOptions = { ...rollingOptions(config), bandMethods: bandMethodsFor(this.bandMethods, market.code, forecastIntervalS(targetIntervalS), config.forecast.interval, horizonDays) };
    const today = localDayOf(market.timeZone, nowMs);
    const startedMs = Date.now();
    try {
      const fromMs = nowMs - (historyDaysNeeded(options) + 2) * DAY_MS;
      // The prices go into the forecaster's day matrix as SQLite steps through them (a year
      // of them as objects was most of the training's garbage); the fingerprint and the
      // last period are taken on the way.
      const layout = priceMatrixLayout(market.timeZone, nowMs, targetIntervalS, options);
      const builder = new DayMatrixBuilder(market.timeZone, layout.firstDay, layout.lastDay, layout.slots);
      const history = { length: 0, sum: 0, lastStartMs: 0, lastDurationS: 0 };
      prices.forEachNative(market.code, fromMs, nowMs + 3 * DAY_MS, (startMs, durationS, pricePerMwh) => {
        builder.add(startMs, durationS, pricePerMwh);
        history.sum += pricePerMwh * (1 + (startMs % 7));
        history.length++;
        history.lastStartMs = startMs;
        history.lastDurationS = durationS;
      });
      const published = this.published(market, fromMs, nowMs + 3 * DAY_MS);
      const weekAhead = this.weekAhead(market, fromMs, nowMs + (horizonDays + 3) * DAY_MS);
      // Unchanged prices and the same origin give the same forecast: keep the stored one.
      // New days advance the kept forecaster by just those origins; a correction of
      // earlier prices (a different fingerprint on the same origin) recomputes from cold.
      const exoSeries = [...Object.values(published ?? {}), ...(weekAhead ? [weekAhead.min, weekAhead.max] : [])];
      const exoCount = exoSeries.reduce((n, xs) => n + xs.length, 0);
      const exoLast = Math.max(0, ...exoSeries.map((xs) => xs.reduce((m, p) => Math.max(m, p.fetchedAtMs), 0)));
      const fingerprint = `${history.length}:${history.sum}:${exoCount}:${exoLast}`;
      const previous = this.warm.get(market.code);
      if (previous && previous.fingerprint === fingerprint && forecasts.latestRun(market.code)) {
        logger.debug({ region }, 'forecast: prices unchanged since the last computation');
        // The same forecast, but today may have moved on past what it reaches.
        this.noteGap(market.code, unforecastDays(today, horizonDays, previous.state.origin, previous.dropped), this.gapReason(today, previous.state.origin, previous.dropped));
        return true;
      }
      const garbage = garbageBetweenSteps(TRAINING_GARBAGE_BYTES);
      const result = await computeMarketForecast({
        timeZone: market.timeZone,
        prices: builder.finish(),
        ...(published ? { exogenousPublished: published } : {}),
        ...(weekAhead ? { weekAheadPublished: weekAhead } : {}),
        nowMs,
        targetIntervalS,
        options,
        pause: () => new Promise((resolve) => setImmediate(() => { garbage.step(); resolve(); })),
        warm: [...(this.warmByInputs.get(market.code)?.values() ?? [])],
      });
      if (!result) {
        logger.info({ region }, 'forecast: no complete recent day of prices yet; nothing to forecast from');
        if (history.length === 0) this.noteGap(market.code, [], `nothing to forecast from: no ${market.code} prices stored in the last ${historyDaysNeeded(options)} days`, true);
        else {
          const lastDay = isoDate(localDayOf(market.timeZone, history.lastStartMs + history.lastDurationS * 1000 - 1));
          this.noteGap(market.code, unforecastDays(today, horizonDays, undefined), `no complete day of prices in the last two weeks; prices stored through ${lastDay}`);
        }
        return false;
      }
      if (this.stopped) return false;
      this.warm.set(market.code, { state: result.state, fingerprint, dropped: result.unforecastDays });
      const kept = this.warmByInputs.get(market.code) ?? new Map<string, WarmState>();
      kept.delete(result.state.inputs);
      kept.set(result.state.inputs, result.state);
      // Input sets are few (price only, all series, a series left out); keep the last three.
      for (const inputs of kept.keys()) if (kept.size > MAX_WARM_INPUT_SETS) kept.delete(inputs);
      this.warmByInputs.set(market.code, kept);
      this.noteGap(market.code, unforecastDays(today, horizonDays, result.originDay, result.unforecastDays), this.gapReason(today, result.originDay, result.unforecastDays));
      const dayAheadInputs = result.exogenous.used.length > 0 ? `prices + ${result.exogenous.used.join(', ')}${result.exogenous.note ? ` (${result.exogenous.note})` : ''}` : `prices only${result.exogenous.note.replace(/^price only/, '')}`;
      // The day-ahead series serve D+1 only; the horizons the week-ahead load entered are named.
      const week = result.weekAhead;
      const inputs = !week
        ? dayAheadInputs
        : week.horizons.length > 0
          ? `${dayAheadInputs}; load week-ahead min/max in ${week.horizons.map((h) => `D+${h}`).join(', ')}`
          : `${dayAheadInputs}; load week-ahead min/max through D+${week.through - result.originDay} unused (the recursive day-ahead model was chosen)`;
      this.inputs.set(market.code, inputs);
      forecasts.replace(
        { marketArea: market.code, originDay: isoDate(result.originDay), computedAtMs: clock.now(), method: result.method, coverage: options.coverage, inputs },
        result.periods,
      );
      logger.info({ region, originDay: isoDate(result.originDay), periods: result.periods.length, inputs, method: result.method, ms: Date.now() - startedMs }, 'forecast stored');
      return true;
    } catch (err) {
      logger.error({ err, region }, 'forecast failed');
      const kept = this.warm.get(market.code);
      this.noteGap(market.code, unforecastDays(today, horizonDays, kept?.state.origin, kept?.dropped), `forecast failed: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    }
  }

  /**
   * The region's stored exogenous series with fetch times, load first, then its coupled
   * neighbours' (`DE-LU load`, ...); undefined without a store.
   */
  private published(market: ForecastMarket, fromMs: number, toMs: number): Record<string, PublishedPoint[]> | undefined {
    const store = this.deps.exogenous;
    if (!store) return undefined;
    const out: Record<string, PublishedPoint[]> = {};
    for (const [area, prefix] of [[market.code, ''], ...(market.exogenousNeighbours ?? []).map((n) => [n, `${n} `])] as const)
      for (const name of EXOGENOUS_SERIES_NAMES) {
        const points = this.fetched(area, name, fromMs, toMs);
        // A series the zone does not have (no offshore wind) is simply not offered; the region's load always is.
        if (points.length > 0 || (name === 'load' && prefix === '')) out[prefix + name] = points;
      }
    return out;
  }

  /** The region's stored week-ahead load forecast (daily min/max) with fetch times; undefined without a store or without any. */
  private weekAhead(market: ForecastMarket, fromMs: number, toMs: number): { min: PublishedPoint[]; max: PublishedPoint[] } | undefined {
    const store = this.deps.exogenous;
    if (!store) return undefined;
    const read = (name: ExogenousSeriesName) => this.fetched(market.code, name, fromMs, toMs);
    const min = read('load_week_ahead_min');
    const max = read('load_week_ahead_max');
    return min.length > 0 && max.length > 0 ? { min, max } : undefined;
  }

  /** A stored series as the forecaster reads it, built row by row (one array of points, not three). */
  private fetched(area: string, name: ExogenousSeriesName, fromMs: number, toMs: number): PublishedPoint[] {
    const points: PublishedPoint[] = [];
    this.deps.exogenous?.forEachFetched(area, name, fromMs, toMs, (startMs, durationS, value, fetchedAtMs) => points.push({ startMs, durationS, value, fetchedAtMs }));
    return points;
  }

  private gapReason(today: number, origin: number, dropped: readonly number[]): string {
    const reasons: string[] = [];
    if (dropped.length > 0) reasons.push(`the model gave no finite value for ${dropped.map(isoDate).join(', ')}`);
    if (origin < today) reasons.push(`prices stored only through ${isoDate(origin)}, and the forecast reaches ${this.deps.config.forecast.horizon_days} days past it`);
    return reasons.join('; ');
  }
}
