// The planner and the charging stores, built once by the composition root (daemon.ts
// buildModules) and passed to every module that plans or follows charging: the central
// system, the plan and site followers, the replanner and the HTTP plan route. With them the
// one write queue the charging side writes through while the store refuses writes
// (store/write-queue.ts): the central system's handlers and answers, the followers' state.
import type { AppContext } from '../context.js';
import { openChargingStores, type ChargingStores } from './charging-stores.js';
import { StoreWriteQueue } from '../store/write-queue.js';
import { marketTariffs } from '../pricing/market-tariffs.js';
import { siteContext } from './site-context.js';
import { TargetPlanner } from './target-plan.js';

export interface ChargingServices {
  readonly stores: ChargingStores;
  readonly planner: TargetPlanner;
  /** Writes that wait in memory while the store refuses them, in order (stopped by the central system). */
  readonly writes: StoreWriteQueue;
}

export function buildChargingServices(ctx: Pick<AppContext, 'db' | 'config' | 'probes' | 'logger' | 'clock' | 'metrics'>): ChargingServices {
  const stores = openChargingStores(ctx.db);
  const writes = new StoreWriteQueue({ db: ctx.db, logger: ctx.logger, clock: ctx.clock, metrics: ctx.metrics, maxEntries: ctx.config.store.write_queue_max_entries, kind: 'ocpp' });
  return { stores, planner: new TargetPlanner(stores, ctx.config.forecast.enabled, siteContext(ctx), marketTariffs(ctx.config.tariffs)), writes };
}
