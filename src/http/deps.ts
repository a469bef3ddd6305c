// What the HTTP app and its route groups are given: the context plus the stores the HTTP
// layer shares. Its own file so that routes/ and app.ts do not import each other.
import type { Router } from 'express';
import type { AppContext } from '../context.js';
import type { ChargingServices } from '../planning/charging-services.js';
import type { SessionStore } from '../store/sessions.js';
import type { TokenStore } from '../store/tokens.js';
import type { PriceAccess } from './price-access.js';

/** What the HTTP app needs: the application context (config, logger, db, clock, metrics) and the shared charging planner and stores. */
export type HttpDeps = AppContext & { readonly charging: ChargingServices };

/** What every route registrar gets: the context plus the stores the HTTP layer shares. */
export interface RouteDeps extends HttpDeps {
  readonly tokens: TokenStore;
  readonly sessions: SessionStore;
  readonly priceAccess: PriceAccess;
}

export type RouteRegistrar = (router: Router, deps: RouteDeps) => void;
