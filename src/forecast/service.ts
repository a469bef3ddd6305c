// ForecastService: keeps the stored forecast of every configured region fresh. It
// recomputes after each price sync (the sync calls refresh()) and on an hourly cron, one
// region at a time, yielding to the event loop between forecast origins so HTTP requests
// are not held up. The endpoint only reads the stored result; it never trains.
import cron, { type ScheduledTask } from 'node-cron';
import type { Config } from '../config/types.js';
import type { Clock } from '../clock.js';
import type { PricePeriod } from '../domain.js';
import type { Module } from '../lifecycle.js';
import type { Logger } from '../log.js';
import { marketByCode, nativeResolutionS } from '../prices/markets.js';
import type { ForecastStore } from '../store/forecasts.js';
import { isoDate } from './local-days.js';
import { computeMarketForecast, historyDaysNeeded, type WarmState } from './market-forecast.js';
import type { RollingOptions } from './rolling.js';

const DAY_MS = 86_400_000;

/** What the forecaster needs to know about a market. */
export interface ForecastMarket {
  readonly code: string;
  readonly timeZone: string;
  /** Native day-ahead period length at an instant (3600, or 900 after the 15-minute switch). */
  nativeResolutionS(atMs: number): number;
}

export interface ForecastServiceDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly forecasts: ForecastStore;
  readonly prices: { native(marketArea: string, fromMs: number, toMs: number): PricePeriod[] };
  market(code: string): ForecastMarket | undefined;
}

/** The registry's market as the forecaster sees it. */
export function forecastMarket(code: string): ForecastMarket | undefined {
  const m = marketByCode(code);
  return m && { code: m.code, timeZone: m.timeZone, nativeResolutionS: (atMs) => nativeResolutionS(m, atMs) };
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
    calibrationDays: 56,
    coverage: config.forecast.interval,
    scaling: 'recent-variation',
    exogenousLeadDays: 1,
    adaptiveRate: 0.05,
  };
}

export class ForecastService implements Module {
  readonly name = 'forecast';
  private task?: ScheduledTask;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  /** Per region: the forecaster as of its last origin, and what the stored forecast was made from. */
  private readonly warm = new Map<string, { state: WarmState; fingerprint: string }>();

  constructor(private readonly deps: ForecastServiceDeps) {}

  async start(): Promise<void> {
    if (!this.deps.config.forecast.enabled) return;
    this.stopped = false;
    this.task = cron.schedule('7 * * * *', () => void this.refresh());
    // First computation in the background: start-up does not wait for training.
    setImmediate(() => void this.refresh());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
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

  /** Computes and stores one region's forecast; false if there is not enough data. */
  async computeRegion(region: string): Promise<boolean> {
    const { logger, clock, config, forecasts, prices } = this.deps;
    const market = this.deps.market(region);
    if (!market) {
      logger.warn({ region }, 'forecast: unknown market area');
      return false;
    }
    const options = rollingOptions(config);
    const nowMs = clock.now();
    const startedMs = Date.now();
    try {
      const history = prices.native(market.code, nowMs - (historyDaysNeeded(options) + 2) * DAY_MS, nowMs + 3 * DAY_MS);
      // Unchanged prices and the same origin give the same forecast: keep the stored one.
      // New days advance the kept forecaster by just those origins; a correction of
      // earlier prices (a different fingerprint on the same origin) recomputes from cold.
      const fingerprint = `${history.length}:${history.reduce((sum, p) => sum + p.pricePerMwh * (1 + (p.startMs % 7)), 0)}`;
      const previous = this.warm.get(market.code);
      if (previous && previous.fingerprint === fingerprint && forecasts.latestRun(market.code)) {
        logger.debug({ region }, 'forecast: prices unchanged since the last computation');
        return true;
      }
      const result = await computeMarketForecast({
        timeZone: market.timeZone,
        prices: history.map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.pricePerMwh })),
        nowMs,
        targetIntervalS: market.nativeResolutionS(nowMs + 2 * DAY_MS),
        options,
        pause: () => new Promise((resolve) => setImmediate(resolve)),
        warm: previous?.state,
      });
      if (!result) {
        logger.info({ region }, 'forecast: no complete recent day of prices yet; nothing to forecast from');
        return false;
      }
      if (this.stopped) return false;
      this.warm.set(market.code, { state: result.state, fingerprint });
      forecasts.replace(
        { marketArea: market.code, originDay: isoDate(result.originDay), computedAtMs: clock.now(), method: result.method, coverage: options.coverage },
        result.periods,
      );
      logger.info({ region, originDay: isoDate(result.originDay), periods: result.periods.length, ms: Date.now() - startedMs }, 'forecast stored');
      return true;
    } catch (err) {
      logger.error({ err, region }, 'forecast failed');
      return false;
    }
  }
}
