// What the HTTP app and its route groups are given: the context plus the stores the HTTP
// layer shares. Its own file so that routes/ and app.ts do not import each other.
import type { Router } from 'express';
import type { AppContext } from '../context.js';
import type { ChargerOperationsPort } from '../ocpp/charger-operations.js';
import type { LocalListSync } from '../ocpp/local-list-sync.js';
import type { ChargerReservations } from '../ocpp/reservations.js';
import type { DeviceModels } from '../ocpp/v201/device-model.js';
import type { ChargingServices } from '../planning/charging-services.js';
import type { SessionStore } from '../store/sessions.js';
import type { TokenStore } from '../store/tokens.js';
import type { PriceAccess } from './price-access.js';

/** What the HTTP app needs: the application context (config, logger, db, clock, metrics) and the shared charging planner and stores. */
export type HttpDeps = AppContext & {
  readonly charging: ChargingServices;
  /** The running OCPP central system's operator operations (daemon.ts), or null before it started / without chargers. */
  readonly centralSystem?: () => CentralSystemAccess | null;
};

/** What the HTTP API may ask of the central system: the operator's calls to chargers. */
export interface CentralSystemAccess {
  readonly operations: ChargerOperationsPort | null;
  readonly localLists: LocalListSync | null;
  readonly reservations: ChargerReservations | null;
  /** The 2.0.1 stations' device model reports (GetBaseReport); absent in a central system without them. */
  readonly deviceModels?: Pick<DeviceModels, 'ask'> | null;
  /** Sends a charger's plans again after an operator cleared its profiles. */
  reapplyPlans(chargePointId: string): void;
}

/** What every route registrar gets: the context plus the stores the HTTP layer shares. */
export interface RouteDeps extends HttpDeps {
  readonly tokens: TokenStore;
  readonly sessions: SessionStore;
  readonly priceAccess: PriceAccess;
}

export type RouteRegistrar = (router: Router, deps: RouteDeps) => void;
