// The price views behind /healthz, /metrics and the status page's chart: coverage per
// configured region (cheap indexed queries, run at every scrape) and today's and
// tomorrow's prices with the stored forecast and its band where prices are not out yet.
import type { Config } from '../../config/types.js';
import { buildForecastResponse, NATIVE_HISTORY_MS, responseWindow } from '../../forecast/response.js';
import { marketByCode, nativeResolutionS } from '../../prices/markets.js';
import type { Db } from '../../store/db.js';
import { ForecastStore } from '../../store/forecasts.js';
import { PriceStore } from '../../store/prices.js';
import type { Module } from '../../lifecycle.js';
import type { ModuleViews, PriceCoverageView, PriceSeriesView } from './views.js';

const DAY_MS = 86_400_000;

export interface PriceViewDeps {
  readonly config: Config;
  readonly db: Db;
  readonly clock: { now(): number };
}

/** The price views as a module (Module.views); it prepares its queries at start and runs nothing in the background. */
export class PriceViews implements Module {
  readonly name = 'price-views';
  private prepared: ModuleViews = {};

  constructor(private readonly deps: PriceViewDeps) {}

  get views(): ModuleViews {
    return this.prepared;
  }

  async start(): Promise<void> {
    this.prepared = priceViews(this.deps);
  }

  async stop(): Promise<void> {}
}

function priceViews(deps: PriceViewDeps): ModuleViews {
  const { config, db, clock } = deps;
  if (config.prices.regions.length === 0) return {};
  const prices = new PriceStore(db);
  const forecasts = new ForecastStore(db);
  const lastStart = db.prepare<[string]>('SELECT start_ms, duration_s FROM prices WHERE market_area = ? ORDER BY start_ms DESC LIMIT 1');
  const current = db.prepare<[string, number, number, number]>('SELECT 1 FROM prices WHERE market_area = ? AND start_ms > ? AND start_ms <= ? AND start_ms + duration_s * 1000 > ? LIMIT 1').pluck();

  // Coverage is judged only where the gateway fetches prices itself (source: none means
  // prices arrive by CSV import when the operator chooses; missing ones are not a fault).
  const coverage = (): PriceCoverageView[] => {
    const now = clock.now();
    return config.prices.regions.map((region) => {
      const last = lastStart.get(region) as { start_ms: number; duration_s: number } | undefined;
      return { region, lastEndMs: last ? last.start_ms + last.duration_s * 1000 : null, coversNow: current.get(region, now - DAY_MS, now, now) !== undefined };
    });
  };

  const priceSeries = (region: string, nowMs: number): PriceSeriesView | null => {
    const market = marketByCode(region);
    if (!market) return null;
    // Today and tomorrow in the market's time zone, at its native resolution.
    const { fromMs, toMs } = responseWindow(market.timeZone, nowMs, 1);
    const intervalS = nativeResolutionS(market, toMs - 1);
    const response = buildForecastResponse({
      marketArea: market.code,
      currencyCode: market.currency,
      timeZone: market.timeZone,
      intervalS,
      nowMs,
      horizonDays: 1,
      native: prices.native(market.code, fromMs - NATIVE_HISTORY_MS, toMs),
      forecast: forecasts.periods(market.code, fromMs - DAY_MS, toMs),
    });
    return {
      region: market.code,
      currency: market.currency,
      points: response.prices.map((p) => ({
        periodStartMs: Date.parse(p.period_start),
        durationS: response.duration_seconds,
        pricePerMwh: p.price_per_mwh,
        forecast: p.forecast,
        forecastLower: p.forecast_lower,
        forecastUpper: p.forecast_upper,
      })),
    };
  };
  return config.prices.source !== 'none' ? { prices: coverage, priceSeries } : { priceSeries };
}
