// GET /api/v1/market_price_forecast: published prices and the stored forecast of a
// region (see design.md, market_price_forecast). Reads only; the ForecastService trains.
import { createHash } from 'node:crypto';
import type { Router } from 'express';
import { buildForecastResponse, NATIVE_HISTORY_MS, responseWindow } from '../../forecast/response.js';
import { parseRegion } from '../../forecast/region.js';
import { ForecastStore } from '../../store/forecasts.js';
import type { RouteDeps } from '../deps.js';
import { requireToken } from '../auth.js';
import { HttpProblem, methodNotAllowed } from '../errors.js';
import { pricesUnavailable } from '../price-access.js';
import { TokenBucketThrottle } from '../throttle.js';

export const MARKET_PRICE_FORECAST_PATH = '/api/v1/market_price_forecast';

export function registerMarketPriceForecastRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Bearer', type: 'price_forecast' });
  const throttle = new TokenBucketThrottle(deps.clock, deps.config.http.forecast_burst, deps.config.http.forecast_interval_s);
  const access = deps.priceAccess;
  const forecasts = new ForecastStore(deps.db);

  router.get(MARKET_PRICE_FORECAST_PATH, auth, (req, res) => {
    const decision = throttle.take(req.apiToken!.id);
    if (!decision.allowed) {
      throw new HttpProblem(429, `at most one request every ${deps.config.http.forecast_interval_s} s after a burst of ${deps.config.http.forecast_burst}; retry in ${decision.retryAfterS} s`, {
        headers: { 'Retry-After': String(decision.retryAfterS) },
      });
    }
    const raw = req.query.region;
    if (raw !== undefined && typeof raw !== 'string') throw new HttpProblem(400, 'region must be given once, as a string', { errors: [{ path: 'region', message: 'must be a string' }] });
    const region = parseRegion(raw, (code) => access.market(code) !== undefined, access.configuredMarkets());
    if (!region.ok) throw new HttpProblem(422, region.message, { errors: [{ path: 'region', message: region.message }] });
    const market = access.market(region.marketArea)!;
    const nowMs = deps.clock.now();
    const horizonDays = deps.config.forecast.horizon_days;
    const { fromMs, toMs } = responseWindow(market.timeZone, nowMs, horizonDays);
    // Contract: only configured regions; today's prices must be stored (else 503, the sync is behind).
    const unavailable = pricesUnavailable(access, market, { path: 'region', need: { fromMs, toMs: responseWindow(market.timeZone, nowMs, 0).toMs }, unconfiguredWithPrices: false });
    if (unavailable) throw unavailable;

    const body = buildForecastResponse({
      marketArea: market.code,
      currencyCode: market.currency,
      timeZone: market.timeZone,
      intervalS: region.intervalS,
      nowMs,
      horizonDays,
      native: access.periods(market.code, fromMs - NATIVE_HISTORY_MS, toMs),
      forecast: deps.config.forecast.enabled ? forecasts.periods(market.code, fromMs - 86_400_000, toMs) : [],
    });
    const json = JSON.stringify(body);
    const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'private, no-cache');
    if (etagMatches(req.headers['if-none-match'], etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).type('application/json').send(json);
  });
  router.all(MARKET_PRICE_FORECAST_PATH, methodNotAllowed(['GET']));
}

/** If-None-Match: `*` or a list of (possibly weak) tags. */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}
