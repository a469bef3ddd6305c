// The express app, built from one typed deps object. Every route group lives in
// src/http/routes/<group>.ts as a function (router, deps) => void; adding one is a
// one-line change to ROUTES below.
import express, { Router, type Express } from 'express';
import { SessionStore } from '../store/sessions.js';
import { TokenStore } from '../store/tokens.js';
import { errorHandler, HttpProblem, notFoundHandler } from './errors.js';
import { localClientsOnly, LOCAL_ONLY_PATHS } from './local-only.js';
import { httpMetrics } from './metrics.js';
import type { HttpDeps, RouteDeps, RouteRegistrar } from './deps.js';
import { createPriceAccess } from './price-access.js';
import { registerCdrsRoutes } from './routes/cdrs.js';
import { registerChargerOperationRoutes } from './routes/charger-operations.js';
import { registerChargerTransactionRoutes } from './routes/charger-transactions.js';
import { registerChargerSecurityEventRoutes } from './routes/charger-security-events.js';
import { registerDeviceModelRoutes } from './routes/device-model.js';
import { registerStationChargingProfileRoutes } from './routes/station-charging-profiles.js';
import { registerStationTransactionStatusRoutes } from './routes/station-transaction-status.js';
import { registerChargingPlanRoutes } from './routes/charging-plan.js';
import { registerGridDimmingRoutes } from './routes/grid-dimming.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerMarketPriceForecastRoutes } from './routes/market-price-forecast.js';
import { registerMetricsRoutes } from './routes/metrics.js';
import { registerOpenApiRoutes } from './routes/openapi.js';
import { registerSessionRoutes } from './routes/sessions.js';
import { registerStatusRoutes } from './routes/status.js';

/** Route groups in registration order. */
export const ROUTES: readonly RouteRegistrar[] = [
  registerHealthRoutes,
  registerOpenApiRoutes,
  registerCdrsRoutes,
  registerSessionRoutes,
  registerMarketPriceForecastRoutes,
  registerChargingPlanRoutes,
  registerChargerTransactionRoutes,
  registerChargerSecurityEventRoutes,
  registerChargerOperationRoutes,
  registerDeviceModelRoutes,
  registerStationChargingProfileRoutes,
  registerStationTransactionStatusRoutes,
  registerGridDimmingRoutes,
  registerMetricsRoutes,
  registerStatusRoutes,
];

export function createApp(deps: HttpDeps, routes: readonly RouteRegistrar[] = ROUTES): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(httpMetrics(deps.metrics, deps.logger));
  app.use((req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // RFC 9112 section 3.2: a server MUST answer 400 to an HTTP/1.1 request without Host.
    if (req.httpVersion === '1.1' && req.headers.host === undefined) next(new HttpProblem(400, 'an HTTP/1.1 request needs a Host header', { errors: [{ path: 'Host', message: 'is required' }] }));
    else next();
  });
  const routeDeps: RouteDeps = { ...deps, tokens: new TokenStore(deps.db), sessions: new SessionStore(deps.db), priceAccess: createPriceAccess(deps.db, deps.config.prices.regions, deps.clock) };
  app.use(LOCAL_ONLY_PATHS, localClientsOnly(deps.config.http));
  const router = Router();
  for (const register of routes) register(router, routeDeps);
  app.use(router);
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
