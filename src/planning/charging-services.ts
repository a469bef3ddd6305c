// The planner and the charging stores, built once by the composition root (daemon.ts
// buildModules) and passed to every module that plans or follows charging: the central
// system, the plan and site followers, the replanner and the HTTP plan route.
import type { AppContext } from '../context.js';
import { openChargingStores, type ChargingStores } from '../store/charging-stores.js';
import { siteContext } from './site-context.js';
import { TargetPlanner } from './target-plan.js';

export interface ChargingServices {
  readonly stores: ChargingStores;
  readonly planner: TargetPlanner;
}

export function buildChargingServices(ctx: Pick<AppContext, 'db' | 'config' | 'probes'>): ChargingServices {
  const stores = openChargingStores(ctx.db);
  return { stores, planner: new TargetPlanner(stores, ctx.config.forecast.enabled, siteContext(ctx)) };
}
