// Plans again when prices arrive: on prices.updated (wired in daemon.ts) every stored target
// of that market whose departure is still ahead gets a new plan, told on the bus as
// plan.updated (reason prices-updated) for whoever applies plans to chargers. Reads the
// stores; the planning itself is pure.
import type { AppContext } from '../context.js';
import type { Module } from '../lifecycle.js';
import type { ChargingTargetStore } from '../store/charging-targets.js';
import type { ChargingServices } from './charging-services.js';
import { ConnectorNotConfigured, type TargetPlanner } from './target-plan.js';

export class Replanner implements Module {
  readonly name = 'charging-plans';
  private readonly targets: ChargingTargetStore;
  private readonly planner: TargetPlanner;

  constructor(
    private readonly ctx: Pick<AppContext, 'clock' | 'events' | 'logger'>,
    charging: ChargingServices,
  ) {
    this.targets = charging.stores.targets;
    this.planner = charging.planner;
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  /** Plans every upcoming target of the market again; returns how many. */
  replan(marketArea: string): number {
    const nowMs = this.ctx.clock.now();
    const planner = this.planner;
    const targets = this.targets.upcoming(nowMs).filter((t) => t.marketArea === marketArea);
    for (const target of targets) {
      let plan;
      try {
        plan = planner.plan(target, nowMs);
      } catch (err) {
        // A target stored for a connector since removed from the config has no ceilings: never planned.
        if (err instanceof ConnectorNotConfigured) this.ctx.logger.warn({ chargePointId: target.chargePointId, connectorId: target.connectorId, reason: err.message }, 'charging target not planned: its connector is not configured');
        // One target's bad prices (e.g. overlapping periods) must not stop the others.
        else this.ctx.logger.error({ err, chargePointId: target.chargePointId, connectorId: target.connectorId }, 'charging plan failed');
        continue;
      }
      this.ctx.logger.info(
        { chargePointId: target.chargePointId, connectorId: target.connectorId, energyWh: Math.round(plan.planned.energyWh), meetsTarget: plan.meetsTarget, costExpected: Math.round(plan.planned.cost.expected * 10_000) / 10_000 },
        'charging plan updated after new prices',
      );
      this.ctx.events.emit('plan.updated', { chargePointId: target.chargePointId, connectorId: target.connectorId, marketArea, reason: 'prices-updated', plannedAtMs: nowMs, plan });
    }
    return targets.length;
  }
}
