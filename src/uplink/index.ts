// Builds the store-and-forward pipeline: recorder (readings + outbox in SQLite), the
// outbox publisher with its MQTT connection, and the device messages. The composition
// root (daemon.ts) feeds samples to `recorder.record` and scan content to `deviceMessages`.
import type { MeterIdentity } from '../sources/source.js';
import { hostname } from 'node:os';
import type { AppContext } from '../context.js';
import type { MeterStatus } from '../domain.js';
import type { Module } from '../lifecycle.js';
import { Outbox } from '../store/outbox.js';
import { ReadingsStore } from '../store/readings.js';
import { BUILD_DATE_MS } from '../version.js';
import type { BackoffPolicy } from './backoff.js';
import { leaveVerdict, trustingGate, type ClockGate } from './clock-gate.js';
import { MqttConnection } from './connection.js';
import { DeviceMessages } from './device-messages.js';
import { OutboxPublisher } from './publisher.js';
import { MeasurementRecorder } from './recorder.js';

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

export function buildUplink(ctx: AppContext, opts: UplinkOptions = {}): Uplink {
  const { config } = ctx;
  const clockGate = opts.clockGate ?? trustingGate(ctx.clock);
  const readings = new ReadingsStore(ctx.db);
  const outbox = new Outbox(ctx.db, { maxRows: config.store.outbox_max_rows, maxBytes: config.store.outbox_max_bytes });
  let publisher: OutboxPublisher | null = null;
  let deviceMessages: DeviceMessages | null = null;
  let connection: MqttConnection | null = null;
  if (config.mqtt) {
    connection = new MqttConnection({ mqtt: config.mqtt, clientId: config.mqtt.client_id ?? `metergate-${config.gateway_id ?? hostname()}`, logger: ctx.logger });
    const buildDateMs = opts.buildDateMs ?? BUILD_DATE_MS;
    const aheadToleranceMs = (config.clock?.step_tolerance_s ?? 60) * 1000;
    publisher = new OutboxPublisher({ ...ctx, outbox, connection, heldRetry: opts.heldRetry, mayLeave: (stampedAtMs) => leaveVerdict(clockGate, buildDateMs, stampedAtMs, aheadToleranceMs) });
  }
  const pub = publisher;
  const recorder = new MeasurementRecorder({
    ...ctx,
    readings,
    outbox,
    clockGate,
    onStored: (id) => pub?.wake(id),
    onEvicted: (n) => pub?.countEvicted(n),
  });
  const modules: Module[] = [recorder];
  if (publisher && connection) {
    deviceMessages = new DeviceMessages({ ...ctx, connection, recorder, clockGate, meters: opts.meters ?? (() => null), meterIdentity: opts.meterIdentity });
    modules.push(publisher, deviceMessages);
  }
  return { modules, readings, outbox, recorder, publisher, deviceMessages };
}
