// Composition of the price half: the price views the status page and HTTP API read, the
// forecaster (hourly, after each price sync, and when exogenous series arrive), the ENTSO-E
// price sync, and the watch that picks up prices another process imported. Each is imported
// when its module starts and only when configured: a feature that is off costs no resident
// memory (its code, and the time-zone data the price calendar touches at load).
import type { AppContext } from '../context.js';
import { LazyModule, type Module } from '../lifecycle.js';

export interface Prices {
  /** Before the HTTP API, so its first request already sees the price views. */
  readonly views: Module[];
  /** Price forecasts: recomputed hourly and after each price sync; the HTTP endpoint only reads the store. */
  readonly forecast: LazyModule<{ refresh(): Promise<unknown> } & Module>;
  /** The price sync and the import watch: after the HTTP API, which serves (health, metrics) while a backfill runs. */
  readonly jobs: Module[];
  wire(): void;
}

export function buildPrices(ctx: AppContext): Prices {
  const { config, events } = ctx;
  const views: Module[] = config.prices.regions.length > 0 ? [new LazyModule('price-views', async () => new (await import('../ops/observability/price-views.js')).PriceViews(ctx))] : [];
  const forecast = new LazyModule('forecast', async () => {
    if (!config.forecast.enabled) return null;
    const [{ ForecastService, forecastMarket }, { ForecastStore }, { PriceStore }, { ExogenousStore }] = await Promise.all([
      import('../forecast/service.js'),
      import('../store/forecasts.js'),
      import('../store/prices.js'),
      import('../store/exogenous.js'),
    ]);
    return new ForecastService({ ...ctx, forecasts: new ForecastStore(ctx.db), prices: new PriceStore(ctx.db), exogenous: new ExogenousStore(ctx.db), market: forecastMarket });
  });
  const jobs: Module[] = [
    // Day-ahead prices: background backfill, then the cron-scheduled sync and repair (prices.updated).
    new LazyModule('price-sync', async () => {
      const p = config.prices;
      if (p.source !== 'entsoe' || !p.entsoe.security_token) {
        // Same condition and words as PriceSync.start(), without loading the ENTSO-E client.
        ctx.logger.warn({ source: p.source }, 'price sync off: prices.source is none or prices.entsoe.security_token is not set; import CSV files with `metergate prices import`');
        return null;
      }
      const [{ PriceSync }, { exogenousProviderTypes }] = await Promise.all([import('../prices/sync.js'), import('../prices/exogenous/index.js')]);
      // Exogenous series (load, wind, solar forecasts) from every provider the config turns on.
      return new PriceSync({ ...ctx, exogenous: exogenousProviderTypes().build(ctx) });
    }),
  ];
  // Prices another process stored (`prices import` while the daemon runs): prices.updated at once (prices/import-watch.ts).
  if (config.prices.regions.length > 0) jobs.push(new LazyModule('price-import-watch', async () => new (await import('../prices/import-watch.js')).PriceImportWatch(ctx)));
  return {
    views,
    forecast,
    jobs,
    wire() {
      // Not awaited: a backfill must not wait for forecasts (the charging half replans on the same event).
      events.on('prices.updated', () => void forecast.instance?.refresh());
      events.on('exogenous.updated', () => void forecast.instance?.refresh());
    },
  };
}
