// Composition of the store-and-forward pipeline: recorder (readings + outbox in SQLite), and
// with an `mqtt` section the outbox publisher and the device messages over one MQTT
// connection. Part of the daemon's modules (composition/metering.ts); tests and benchmarks
// build it alone.
import { hostname } from 'node:os';
import type { AppContext } from '../context.js';
import type { MeterStatus } from '../domain.js';
import type { Module } from '../lifecycle.js';
import type { MeterIdentity } from '../sources/source.js';
import { Outbox } from '../store/outbox.js';
import { ReadingsStore } from '../store/readings.js';
import type { BackoffPolicy } from '../uplink/backoff.js';
import { leaveVerdict, trustingGate, type ClockGate } from '../uplink/clock-gate.js';
import { MqttConnection } from '../uplink/connection.js';
import { DeviceMessages } from '../uplink/device-messages.js';
import { OutboxPublisher } from '../uplink/publisher.js';
import { MeasurementRecorder } from '../uplink/recorder.js';
import { BUILD_DATE_MS } from '../version.js';

/** The pipeline's parts. */
export interface Uplink {
  /** In start order. */
  readonly modules: Module[];
  readonly readings: ReadingsStore;
  readonly outbox: Outbox;
  readonly recorder: MeasurementRecorder;
  /** Null without an `mqtt` section (readings are still stored for pricing). */
  readonly publisher: OutboxPublisher | null;
  readonly deviceMessages: DeviceMessages | null;
}

export interface UplinkOptions {
  readonly clockGate?: ClockGate;
  readonly meters?: () => readonly MeterStatus[] | null;
  /** What a meter said about itself (sources/source.ts MeterSource.identity), for boot_notification. */
  readonly meterIdentity?: (resourceId: string) => MeterIdentity | null | undefined;
  readonly buildDateMs?: number;
  /** Backoff of the automatic retries of a topic the broker refused (default: the reconnect backoff). */
  readonly heldRetry?: BackoffPolicy;
}

/**
 * Builds the store-and-forward pipeline (part of buildModules; tests and benchmarks build it
 * alone) and wires its events: a commit with outbox rows wakes the publisher, evictions are
 * counted by it. Samples reach the recorder through `recorder.record` / `recordInTick`.
 */
export function buildUplink(ctx: AppContext, opts: UplinkOptions = {}): Uplink {
  const { config, events } = ctx;
  const clockGate = opts.clockGate ?? trustingGate(ctx.clock);
  const readings = new ReadingsStore(ctx.db);
  const outbox = new Outbox(ctx.db, { maxRows: config.store.outbox_max_rows, maxBytes: config.store.outbox_max_bytes });
  const recorder = new MeasurementRecorder({ ...ctx, readings, outbox, clockGate });
  const modules: Module[] = [recorder];
  if (!config.mqtt) return { modules, readings, outbox, recorder, publisher: null, deviceMessages: null };
  const connection = new MqttConnection({ mqtt: config.mqtt, clientId: config.mqtt.client_id ?? `metergate-${config.gateway_id ?? hostname()}`, logger: ctx.logger });
  const buildDateMs = opts.buildDateMs ?? BUILD_DATE_MS;
  const aheadToleranceMs = (config.clock?.step_tolerance_s ?? 60) * 1000;
  const publisher = new OutboxPublisher({ ...ctx, outbox, connection, heldRetry: opts.heldRetry, mayLeave: (stampedAtMs) => leaveVerdict(clockGate, buildDateMs, stampedAtMs, aheadToleranceMs) });
  const deviceMessages = new DeviceMessages({ ...ctx, connection, recorder, clockGate, meters: opts.meters ?? (() => null), meterIdentity: opts.meterIdentity });
  modules.push(publisher, deviceMessages);
  events.on('sample.stored', ({ lastOutboxId }) => publisher.wake(lastOutboxId));
  events.on('outbox.evicted', ({ count }) => publisher.countEvicted(count));
  return { modules, readings, outbox, recorder, publisher, deviceMessages };
}

