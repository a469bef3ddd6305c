// The meter-source seam: every kind of meter (Modbus register maps, DSMR P1 telegrams, ...)
// is read by a MeterSource; the daemon only sees this interface. A source type registers
// itself into a SourceRegistry (registry.ts) from its own folder; index.ts lists them.
import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Config, MeterConfig } from '../config/types.js';
import type { EventBus } from '../events.js';
import type { MeterSample, MeterStatus } from '../domain.js';
import type { Module } from '../lifecycle.js';
import type { Logger } from '../log.js';
import type { Liveness } from '../ops/systemd/liveness.js';
import type { BusScanView, ModuleViews } from '../ops/observability/views.js';

/** What a source is built from. `config.buses` and `config.meters` hold only this source's. */
export interface MeterSourceDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics: Registry;
  /**
   * Where the source tells what happened (events.ts): `sample.taken` per accepted sample (the
   * clock guard takes it on to the recorder), `poll.tick-done` once every sample of a poll slot
   * was handed on (the store commits a slot's samples together), `meter.state-changed`.
   */
  readonly events: EventBus;
  /** Watchdog feed: a source ticks its loop handle every cycle while it is not stuck. */
  readonly liveness?: Liveness;
  /**
   * The last `count` readings of a resource that were accepted and stored, newest first (the
   * store's, read once at start): what a source judges the next reading against after a restart.
   * Absent (a source on its own in a test): nothing stored.
   */
  readonly storedReadings?: (resourceId: string, count: number) => readonly MeterSample[];
}

/** What the meter says about itself (for boot_notification), once it has said it. */
export interface MeterIdentity {
  readonly vendor: string;
  readonly model: string;
  readonly serialNumber: string | null;
  readonly firmware: string | null;
}

/** A running source of meter samples; it reports on the event bus (MeterSourceDeps.events). */
export interface MeterSource extends Module {
  /** `meters` and `busScan` (its statuses() and busScan()): how /healthz, the status page, heartbeats and network_scan see its meters. */
  readonly views: Required<Pick<ModuleViews, 'meters' | 'busScan'>>;
  statuses(): MeterStatus[];
  /** What answers on each of the source's buses, for network_scan. */
  busScan(): BusScanView[];
  /** The meter's own identity when the source learns it from the meter, else undefined (the config's profile says). */
  identity?(resourceId: string): MeterIdentity | null | undefined;
}

/** One kind of source, as it registers itself. */
export interface MeterSourceType {
  /** Module name in logs, e.g. `modbus`, `p1`. */
  readonly kind: string;
  /** The `buses[].type` values this source reads. */
  readonly busTypes: readonly string[];
  /**
   * Config problems of one meter on a bus of this type (`meters[i].…: message`), checked
   * with the other cross-setting checks of config/load.ts; the config may be invalid in
   * other places, so read it defensively.
   */
  meterProblems(meter: Partial<MeterConfig>, index: number, config: Config): string[];
  /** Its meters name themselves (MeterSource.identity): boot_notification waits for that a moment. */
  readonly identifiesMeters?: boolean;
  /** Defaults for settings a meter of this type may leave out (applied before freezing). */
  meterDefaults?: Partial<MeterConfig>;
  /** Imports the source's code (serial ports, sockets) only when a bus of its type is configured. */
  load(): Promise<(deps: MeterSourceDeps) => MeterSource>;
}
