// Composition of the metering half: the clock guard every sample passes, the store-and-forward
// pipeline (composition/uplink.ts), one module per meter source type, the network scan, and
// the site meter the charging half plans with. Its events: a sample goes source → clock guard
// → recorder, which commits a poll slot once every source has finished it (one durable
// transaction per slot); the site meter keeps the newest reading of config site.meter.
import type { AppContext } from '../context.js';
import { LazyModule, type Module } from '../lifecycle.js';
import { ClockGuard } from '../ops/clock/clock-guard.js';
import { NetworkScanWatcher } from '../ops/network/network-scan.js';
import { SiteMeter } from '../site/site-meter.js';
import { meterSourceTypes } from '../sources/index.js';
import type { MeterSource } from '../sources/source.js';
import { TickJoin } from '../sources/tick-join.js';
import type { MeasurementRecorder } from '../uplink/recorder.js';
import { buildUplink } from './uplink.js';

export interface Metering {
  /** In start order. */
  readonly modules: Module[];
  /** Clock safety (docs/clock-safety.md): also the trusted clock of the session retention. */
  readonly clockGuard: ClockGuard;
  /** The site meter (config site.meter), or null: its latest reading is the site's other load. */
  readonly siteMeter: SiteMeter | null;
  /** Stores messages for the publisher (the outbox): the grid control's dimming events go out through it. */
  readonly recorder: Pick<MeasurementRecorder, 'enqueue'>;
  /** Subscribes the metering modules to the bus. */
  wire(): void;
}

export function buildMetering(ctx: AppContext): Metering {
  const { events } = ctx;
  // Clock safety: every sample passes the guard before anything stores or publishes it;
  // it holds samples while the clock is not trusted (docs/clock-safety.md).
  const clockGuard = new ClockGuard(ctx);
  // network_scan content (interfaces + what answers on each bus), re-checked periodically and
  // when a meter changes state; network.changed at start and on every change.
  const networkScan = new NetworkScanWatcher(ctx);
  const sources: MeterSource[] = [];
  const parts = ctx.config.meters.length > 0 ? meterSourceTypes().partition(ctx.config) : [];
  // Store and forward: samples that pass the clock gate are committed (reading + outbox
  // row) before the publisher drains them to the broker (src/uplink).
  const uplink = buildUplink(ctx, {
    clockGate: clockGuard,
    meters: () => ctx.probes.meters?.() ?? null,
    // What a meter says about itself (a P1 meter's identification line) for boot_notification.
    meterIdentity: (resourceId) => {
      for (const source of sources) {
        const identity = source.identity?.(resourceId);
        if (identity !== undefined) return identity;
      }
      // Its source has not started yet: not heard yet, if it is a source whose meters name themselves.
      return parts.some((p) => p.type.identifiesMeters && p.meters.some((m) => m.resource_id === resourceId)) ? null : undefined;
    },
  });
  // Meter sources (sources/index.ts): one module per source type with a configured bus, its
  // code imported only then (Modbus: modbus-serial; P1: serialport). Each reads only its own
  // buses and meters and reports on the bus (sample.taken, poll.tick-done, meter.state-changed).
  const sourceModules = parts.map(
    ({ type, buses, meters }) =>
      new LazyModule(type.kind, async () => {
        const create = await type.load();
        const source = create({ ...ctx, config: { ...ctx.config, buses, meters }, storedReadings: (resourceId, count) => uplink.readings.newest(resourceId, count) });
        sources.push(source);
        return source;
      }),
  );
  const siteMeter = ctx.config.site.meter !== undefined ? new SiteMeter(ctx) : null;
  const modules: Module[] = [clockGuard, ...uplink.modules, ...sourceModules, networkScan, ...(siteMeter ? [siteMeter] : [])];

  return {
    recorder: uplink.recorder,
    modules,
    clockGuard,
    siteMeter,
    wire() {
      const ticks = new TickJoin(parts.length, () => uplink.recorder.tickDone());
      events.on('sample.taken', (sample) => clockGuard.submit(sample));
      if (siteMeter) events.on('sample.taken', (sample) => siteMeter.sampleTaken(sample));
      // A Belgian P1 site meter's quarter-hour demand and month's peak (site.capacity), told just before its sample.
      if (siteMeter) events.on('meter.demand', (e) => siteMeter.demandRead(e));
      events.on('sample.released', (sample) => uplink.recorder.recordInTick(sample));
      events.on('poll.tick-done', ({ source }) => ticks.done(source));
      events.on('meter.state-changed', () => networkScan.check());
      const { deviceMessages } = uplink;
      if (deviceMessages) events.on('network.changed', (content) => deviceMessages.networkScan(content));
    },
  };
}
