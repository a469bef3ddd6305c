// Composition of the charging half: the OCPP central system for the configured chargers
// (docs/chargers.md), the plan follower, the fuse controller (docs/planning.md "The fuse
// controller") and the replanner, sharing one planner and the charging stores
// (planning/charging-services.ts, built once, when the first of them starts). ocpp-rpc and
// its schemas are loaded only when a charger is configured. Its events: plans go to the
// chargers as profiles, what a charger measures and says goes to the followers, and who
// shares the site (or the site meter's load) changing goes to the fuse controller.
import type { AppContext } from '../context.js';
import { LazyModule, type Module } from '../lifecycle.js';
import type { CentralSystem } from '../ocpp/central-system.js';
import type { FuseController } from '../ocpp/fuse-controller.js';
import type { LimitSender } from '../ocpp/limit-attempts.js';
import type { ChargingServices } from '../planning/charging-services.js';

export interface Charging {
  /** The planner and the charging stores, built once (also for the HTTP plan route). */
  readonly services: () => Promise<ChargingServices>;
  /** The central system once it has started (the HTTP API's operator operations), or null. */
  readonly centralSystem: () => CentralSystem | null;
  /** Central system, plan follower, fuse controller: after the HTTP API, in start order. */
  readonly modules: Module[];
  /** The fuse controller once it has started (the grid control's evidence and checks), or null. */
  readonly fuse: () => FuseController | null;
  /** Charging plans made again when prices arrive (plan.updated); after the forecaster. */
  readonly replanner: Module;
  wire(): void;
}

export function buildCharging(ctx: AppContext, opts: { readonly siteMeter: boolean }): Charging {
  const { config, events } = ctx;
  let built: Promise<ChargingServices> | null = null;
  const services = (): Promise<ChargingServices> => (built ??= import('../planning/charging-services.js').then((m) => m.buildChargingServices(ctx)));
  const centralSystem = config.chargers.length > 0 ? new LazyModule('ocpp', async () => new (await import('../ocpp/central-system.js')).CentralSystem(ctx, await services())) : null;
  // Follows each charging session against its plan and plans the rest again when it falls behind.
  const planFollower = centralSystem ? new LazyModule('plan-follower', async () => new (await import('../ocpp/plan-follower.js')).PlanFollower(ctx, await services())) : null;
  // One controller per connector that holds a plan or charges with none (charge-now), keeping site.limit_a whatever the chargers
  // answer; after the central system, whose calls it makes and whose answers it hears.
  const fuse =
    centralSystem && (opts.siteMeter || config.site.limit_a !== undefined || config.grid_control !== undefined)
      ? new LazyModule('fuse-controller', async () => {
          const cs = centralSystem.instance!;
          const { FuseController } = await import('../ocpp/fuse-controller.js');
          let sender: LimitSender | null = null;
          const controller = new FuseController(ctx, await services(), { sendPlan: (r) => sender!.sendPlan(r), sendLimit: (r) => sender!.sendLimit(r), clearEscalationProfile: (id, c) => sender!.clearEscalationProfile(id, c) }, (id) => cs.isConnected(id), ctx.metrics);
          sender = cs.controlLimits(controller);
          return controller;
        })
      : null;
  const replanner = new LazyModule('charging-plans', async () => new (await import('../planning/replan.js')).Replanner(ctx, await services()));
  const modules = [centralSystem, planFollower, fuse].filter((m): m is NonNullable<typeof m> => m !== null);

  return {
    services,
    centralSystem: () => centralSystem?.instance ?? null,
    fuse: () => fuse?.instance ?? null,
    modules,
    replanner,
    wire() {
      // Outcomes not priced at their stop, and every plan, again on new prices.
      events.on('prices.updated', (update) => {
        centralSystem?.instance?.pricesUpdated();
        replanner.instance?.replan(update.marketArea);
      });
      // After the site meter took the sample (composition/metering.ts wired it first): the fuse controller compares every connector with it.
      if (fuse) events.on('sample.taken', (sample) => fuse.instance?.sampleTaken(sample));
      if (!centralSystem) return;
      // A new plan goes to the connector's charger as a charging profile (when it is connected).
      events.on('plan.updated', (plan) => centralSystem.instance?.applyPlan(plan));
      // A target deleted or ended: the profiles set for it are cleared from the charger.
      events.on('plan.cleared', (e) => centralSystem.instance?.clearPlan(e));
      // What a charger measures and says of its connectors: is its session keeping up with the plan?
      if (planFollower) {
        events.on('charger.energy-measured', (e) => planFollower.instance?.energyMeasured(e));
        events.on('charger.connector-status', (e) => planFollower.instance?.connectorStatus(e));
        events.on('charger.transaction-started', (e) => planFollower.instance?.transactionStarted(e));
        events.on('charger.transaction-stopped', (e) => planFollower.instance?.transactionStopped(e));
      }
      // A car joining the site's share (after the plan follower stored its default target) lowers the others at once;
      // one leaving it (after the plan follower ended its target) leaves room to raise them again.
      if (fuse) {
        events.on('charger.transaction-started', (e) => fuse.instance?.sharingChanged(e));
        events.on('charger.transaction-stopped', (e) => fuse.instance?.sharingChanged(e));
        events.on('charger.connector-status', (e) => fuse.instance?.connectorStatus(e));
        events.on('plan.updated', (e) => e.reason !== 'site-load' && fuse.instance?.sharingChanged(e));
      }
    },
  };
}
