// GET /api/v1/market_price_forecast: published prices and the stored forecast of a
// region (see design.md, market_price_forecast). Reads only; the ForecastService trains.
import { createHash } from 'node:crypto';
import type { Router } from 'express';
import { buildForecastResponse } from '../../forecast/response.js';
import { parseRegion } from '../../forecast/region.js';
import { marketByCode } from '../../prices/markets.js';
import { ForecastStore } from '../../store/forecasts.js';
import { PriceStore } from '../../store/prices.js';
import type { RouteDeps } from '../app.js';
import { requireToken } from '../auth.js';
import { HttpProblem, methodNotAllowed } from '../errors.js';
import { TokenBucketThrottle } from '../throttle.js';
import { responseWindow } from '../../forecast/response.js';

export const MARKET_PRICE_FORECAST_PATH = '/api/v1/market_price_forecast';

export function registerMarketPriceForecastRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Bearer', type: 'price_forecast' });
  const throttle = new TokenBucketThrottle(deps.clock, deps.config.http.forecast_burst, deps.config.http.forecast_interval_s);
  const prices = new PriceStore(deps.db);
  const forecasts = new ForecastStore(deps.db);
  const configured = new Set(deps.config.prices.regions.map((r) => r.toUpperCase()));

  router.get(MARKET_PRICE_FORECAST_PATH, auth, (req, res) => {
    const decision = throttle.take(req.apiToken!.id);
    if (!decision.allowed) {
      throw new HttpProblem(429, `at most one request every ${deps.config.http.forecast_interval_s} s after a burst of ${deps.config.http.forecast_burst}; retry in ${decision.retryAfterS} s`, {
        headers: { 'Retry-After': String(decision.retryAfterS) },
      });
    }
    const raw = req.query.region;
    if (raw !== undefined && typeof raw !== 'string') throw new HttpProblem(400, 'region must be given once, as a string', { errors: [{ path: 'region', message: 'must be a string' }] });
    const region = parseRegion(raw, (code) => marketByCode(code) !== undefined && configured.has(code));
    if (!region.ok) throw new HttpProblem(422, region.message, { errors: [{ path: 'region', message: region.message }] });
    const market = marketByCode(region.marketArea)!;
    if (!prices.hasPrices(market.code)) throw new HttpProblem(503, `no prices stored for ${market.code} yet`, { headers: { 'Retry-After': '60' } });

    const nowMs = deps.clock.now();
    const horizonDays = deps.config.forecast.horizon_days;
    const { fromMs, toMs } = responseWindow(market.timeZone, nowMs, horizonDays);
    const body = buildForecastResponse({
      marketArea: market.code,
      currencyCode: market.currency,
      timeZone: market.timeZone,
      intervalS: region.intervalS,
      nowMs,
      horizonDays,
      actual: prices.atInterval(market.code, fromMs, toMs, region.intervalS).map((p) => ({ startMs: p.startMs, pricePerMwh: p.pricePerMwh })),
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
