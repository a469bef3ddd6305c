// Composition of the grid operator's dimming (§14a EnWG, docs/grid-limits.md): the control
// box's contacts, read by the configured input (grid/index.ts), become a limit the planner
// shares over the controlled chargers (the fuse controller then keeps it). After the fuse
// controller, whose connectors are the evidence of each event. Its event: a dimming that
// starts, changes or ends makes the fuse controller check every connector at once (lowered
// now; raised again after site.raise_interval_s, as any raise).
import type { AppContext } from '../context.js';
import { LazyModule, type Module } from '../lifecycle.js';
import type { GridControl, GridControlDeps } from '../grid/grid-control.js';
import type { Charging } from './charging.js';
import type { Metering } from './metering.js';

export interface Grid {
  /** The grid control module, or null without grid_control. */
  readonly module: Module | null;
  wire(): void;
}

/**
 * How a dimming event's phases go upstream: the grid_dimming_events topic of the site meter's
 * resource (the site's connection is what is dimmed), else the first meter's, through the
 * outbox (stored first, sent when the broker takes it). Without mqtt or a meter: undefined.
 */
export async function dimmingPublisher(ctx: Pick<AppContext, 'config'>, recorder: Metering['recorder']): Promise<GridControlDeps['publish']> {
  const resourceId = ctx.config.site.meter ?? ctx.config.meters[0]?.resource_id;
  if (resourceId === undefined || !ctx.config.mqtt) return undefined;
  const { dimmingMessage } = await import('../grid/dimming-message.js');
  const ids = { organizationId: ctx.config.organization_id, resourceId };
  return (event, phase, atMs) => void recorder.enqueue('grid_dimming_event', resourceId, dimmingMessage(event, phase, ids, atMs), { retain: false, stampedAtMs: atMs });
}

export function buildGrid(ctx: AppContext, charging: Charging, metering: Pick<Metering, 'recorder'>): Grid {
  const settings = ctx.config.grid_control;
  if (!settings) return { module: null, wire: () => undefined };
  const module = new LazyModule<GridControl>('grid-control', async () => {
    const [{ controlSignalTypes }, { GridControl }] = await Promise.all([import('../grid/index.js'), import('../grid/grid-control.js')]);
    const type = controlSignalTypes().forType(settings.input.type);
    if (!type) throw new Error(`grid_control.input.type ${settings.input.type} is not known`);
    const source = (await type.load())({ config: ctx.config, input: settings.input, logger: ctx.logger, now: () => ctx.clock.now() });
    // Each configured connector is one controllable device (a charge point) behind this energy manager.
    const chargePoints = ctx.config.chargers.reduce((n, c) => n + (c.connectors?.length ?? 0), 0);
    const publish = await dimmingPublisher(ctx, metering.recorder);
    const control = new GridControl(ctx, { source, fuseConnectors: () => charging.fuse()?.connectorViews() ?? [], chargePoints, ...(publish ? { publish } : {}) });
    (await charging.services()).planner.useGridLimit(control);
    return control;
  });
  return {
    module,
    wire() {
      ctx.events.on('grid.limit-changed', () => charging.fuse()?.check());
    },
  };
}
