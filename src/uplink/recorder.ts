// Where every accepted sample lands: the reading and its measurement message are
// committed to SQLite in one transaction before anything is published. Also purges
// readings past store.readings_retention_days.
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import { sessionMaxEdgeGapMs } from '../config/derived.js';
import type { Config } from '../config/types.js';
import type { MeterSample } from '../domain.js';
import type { Module } from '../lifecycle.js';
import type { Logger } from '../log.js';
import { durableTransaction, type Db } from '../store/db.js';
import type { Outbox, OutboxMessage } from '../store/outbox.js';
import type { ReadingsStore } from '../store/readings.js';
import type { ClockGate } from './clock-gate.js';
import { buildMeasurement } from './messages.js';
import { topicFor } from './topics.js';
import { messageProblems, type MessageType } from './validate.js';

const PURGE_EVERY_MS = 3_600_000;
const DAY_MS = 86_400_000;
const DROP_LOG_EVERY_MS = 60_000;

export interface RecorderDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics: Registry;
  readonly db: Db;
  readonly readings: ReadingsStore;
  readonly outbox: Outbox;
  /** Told after each commit that added outbox rows (the publisher's wake()). */
  readonly onStored?: (lastId: number) => void;
  /** Told how many old rows the outbox dropped to hold its bounds. */
  readonly onEvicted?: (n: number) => void;
  /** Purging by age needs a trusted clock (a clock stepped years ahead would purge everything). */
  readonly clockGate?: ClockGate;
}

export class MeasurementRecorder implements Module {
  readonly name = 'recorder';
  private purgeTimer: NodeJS.Timeout | null = null;
  private droppedSinceLog = 0;
  private lastDropLogMs = Number.NEGATIVE_INFINITY;
  private readonly c: { invalid: Counter; stored: Counter };

  constructor(private readonly deps: RecorderDeps) {
    const registers = [deps.metrics];
    this.c = {
      invalid: new Counter({ name: 'metergate_uplink_invalid_messages_total', help: 'Messages that failed their JSON Schema and were not stored or sent (a bug)', labelNames: ['type'], registers }),
      stored: new Counter({ name: 'metergate_readings_stored_total', help: 'Readings committed to SQLite (with their measurement message)', registers }),
    };
  }

  async start(): Promise<void> {
    this.purge();
    this.purgeTimer = setInterval(() => this.purge(), PURGE_EVERY_MS);
    this.purgeTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.purgeTimer) clearInterval(this.purgeTimer);
    this.purgeTimer = null;
  }

  /** Stores one sample: the reading (for pricing) and its measurement message (for the broker), in one transaction. */
  record(sample: MeterSample): void {
    const { config } = this.deps;
    const message = buildMeasurement(config.organization_id, sample);
    const problems = messageProblems('measurement', message);
    const outboxMessage: OutboxMessage | null =
      problems.length === 0 && config.mqtt
        ? { topic: topicFor(config.mqtt.topic_prefix, sample.resourceId, 'measurement'), payload: JSON.stringify(message), qos: 1, retain: false, stampedAtMs: sample.sampledAtMs }
        : null;
    if (problems.length > 0) this.invalid('measurement', problems, sample.resourceId);
    let result: { id: number; dropped: number } | null = null;
    durableTransaction(this.deps.db, () => {
      if (!this.deps.readings.insert(sample)) return; // same instant stored already (e.g. re-stamped twice)
      if (outboxMessage) result = this.deps.outbox.enqueue(outboxMessage, this.deps.clock.now());
    });
    this.c.stored.inc();
    this.afterEnqueue(result);
  }

  /** Stores another kind of message (boot notification, network scan) after checking its schema; false when invalid. */
  enqueue(type: MessageType, resourceId: string, message: unknown, opts: { retain: boolean; stampedAtMs: number }): boolean {
    const mqtt = this.deps.config.mqtt;
    if (!mqtt) return false;
    const problems = messageProblems(type, message);
    if (problems.length > 0) {
      this.invalid(type, problems, resourceId);
      return false;
    }
    const result = durableTransaction(this.deps.db, () =>
      this.deps.outbox.enqueue(
        { topic: topicFor(mqtt.topic_prefix, resourceId, type), payload: JSON.stringify(message), qos: 1, retain: opts.retain, stampedAtMs: opts.stampedAtMs },
        this.deps.clock.now(),
      ),
    );
    this.afterEnqueue(result);
    return true;
  }

  private afterEnqueue(result: { id: number; dropped: number } | null): void {
    if (!result) return;
    if (result.dropped > 0) {
      this.deps.onEvicted?.(result.dropped);
      this.droppedSinceLog += result.dropped;
      // While the outbox stays full every new reading drops one: one line a minute, with the count.
      const now = this.deps.clock.now();
      if (now - this.lastDropLogMs >= DROP_LOG_EVERY_MS || now < this.lastDropLogMs) {
        const { store } = this.deps.config;
        this.deps.logger.warn(
          { dropped: this.droppedSinceLog, depth: this.deps.outbox.depth, maxRows: store.outbox_max_rows, maxBytes: store.outbox_max_bytes },
          'outbox full: dropped the oldest messages',
        );
        this.droppedSinceLog = 0;
        this.lastDropLogMs = now;
      }
    }
    this.deps.onStored?.(result.id);
  }

  private invalid(type: MessageType, problems: string[], resourceId: string): void {
    this.c.invalid.inc({ type });
    this.deps.logger.error({ type, resource_id: resourceId, problems }, 'message does not match its schema: not stored, not sent');
  }

  /** Deletes readings older than the retention; returns how many went. */
  purge(): number {
    const now = this.deps.clockGate ? this.deps.clockGate.trustedNow() : this.deps.clock.now();
    if (now === null) return 0;
    const cutoff = now - this.deps.config.store.readings_retention_days * DAY_MS;
    try {
      const n = this.deps.readings.purgeBefore(cutoff, sessionMaxEdgeGapMs(this.deps.config));
      if (n > 0) this.deps.logger.info({ purged: n, before: new Date(cutoff).toISOString() }, 'purged old readings');
      return n;
    } catch (err) {
      this.deps.logger.error({ err }, 'readings purge failed');
      return 0;
    }
  }
}
