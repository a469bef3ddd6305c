// The canonical shape of a meter source type, to copy into a new folder (e.g. src/mbus/source.ts)
// and register with one line in sources/index.ts. Not registered itself: it reads nothing.
// The real ones: modbus/source.ts (+ modbus/poller.ts), p1/source.ts (+ p1/p1-source.ts).
import type { MeterStatus } from '../domain.js';
import type { BusScanView } from '../ops/observability/views.js';
import { freshBookkeeping, meterStatus } from './meter-bookkeeping.js';
import type { SourceRegistry } from './registry.js';
import type { MeterSource, MeterSourceDeps } from './source.js';

export function registerBlueprintSource(registry: SourceRegistry): void {
  registry.register({
    kind: 'blueprint',
    // The `buses[].type` values it reads; add them to the enum in config/schema.json too.
    busTypes: ['blueprint'],
    // Checks of one meter entry that the schema cannot express, as `meters[i].setting: message`.
    meterProblems: (meter, i) => (meter.unit_id === undefined ? [`meters[${i}].unit_id: is required`] : []),
    // Code with I/O is imported only when a bus of this type is configured.
    load: async () => (deps) => new BlueprintSource(deps),
  });
}

/** A Module: the constructor stores, start() opens and schedules, stop() releases. */
class BlueprintSource implements MeterSource {
  readonly name = 'blueprint';
  readonly views = { meters: () => this.statuses(), busScan: () => this.busScan() };

  constructor(private readonly deps: MeterSourceDeps) {}

  async start(): Promise<void> {
    // Open the buses in deps.config.buses; every poll.interval_ms slot (sources/slot-timer.ts SlotTimer):
    // read each meter, deps.events.emit('sample.taken', sample) for each good reading, then
    // deps.events.emit('poll.tick-done', { source: this.name }). A meter changing
    // unknown/online/offline: deps.events.emit('meter.state-changed', { source: this.name, statuses: this.statuses() }).
  }

  async stop(): Promise<void> {}

  statuses(): MeterStatus[] {
    // A real source keeps a MeterBookkeeping per meter (meter-bookkeeping.ts) and maps those.
    return this.deps.config.meters.map((m) => meterStatus(freshBookkeeping(m)));
  }

  busScan(): BusScanView[] {
    return this.deps.config.buses.map((b) => ({ bus: b.name, port: b.port ?? '', unit_ids: [], devices: [] }));
  }
}
