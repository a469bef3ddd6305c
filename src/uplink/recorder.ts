// Where every accepted sample lands: the reading and its measurement message are
// committed to SQLite in one transaction before anything is published. A write the store
// cannot take (disk full, I/O error, locked by another process) waits in a bounded queue in
// memory and is written as soon as the store takes writes again (docs/uplink.md). Also
// purges readings past store.readings_retention_days.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import { sessionMaxEdgeGapMs } from '../config/derived.js';
import type { Config } from '../config/types.js';
import type { MeterSample } from '../domain.js';
import type { EventBus } from '../events.js';
import type { Module } from '../lifecycle.js';
import type { Logger } from '../log.js';
import { storeHealth } from '../ops/observability/store-health.js';
import type { ModuleViews, StoreView } from '../ops/observability/views.js';
import { durableTransaction, type Db } from '../store/db.js';
import type { Outbox, OutboxMessage } from '../store/outbox.js';
import type { ReadingsStore } from '../store/readings.js';
import { isStorageUnavailable, primaryCode, storageErrorReason, STORE_RETRY_EVERY_MS, withWriteBusyTimeout, type StorageError } from '../store/storage-errors.js';
import { storePendingDropped, storeView, storeWriteFailures } from '../store/write-queue.js';
import type { ClockGate } from './clock-gate.js';
import { buildMeasurement } from './messages.js';
import { topicFor } from './topics.js';
import { messageProblems, type MessageType } from './validate.js';

const PURGE_EVERY_MS = 3_600_000;
const DAY_MS = 86_400_000;
const DROP_LOG_EVERY_MS = 60_000;
/** Retention purge steps: rows per step start here and adapt so that one step blocks the event loop about this long. */
const PURGE_STEP_TARGET_MS = 10;
const PURGE_STEP_FIRST_ROWS = 500;
const PURGE_STEP_MIN_ROWS = 50;
const PURGE_STEP_MAX_ROWS = 20_000;

/** One write waiting for the store: a reading with its measurement, or another message. */
type PendingWrite =
  | { readonly kind: 'reading'; readonly sample: MeterSample; readonly message: OutboxMessage | null }
  | { readonly kind: 'message'; readonly message: OutboxMessage };

interface Written {
  readings: number;
  messages: number;
  lastId: number;
  evicted: number;
}

export interface RecorderDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics: Registry;
  readonly db: Db;
  readonly readings: ReadingsStore;
  readonly outbox: Outbox;
  /** Gets sample.stored after each commit that added outbox rows, outbox.evicted when old rows were dropped to hold its bounds. */
  readonly events: EventBus;
  /** Purging by age needs a trusted clock (a clock stepped years ahead would purge everything). */
  readonly clockGate?: ClockGate;
}

export class MeasurementRecorder implements Module {
  readonly name = 'recorder';
  /** /healthz `store`: whether the database takes writes. */
  readonly views: ModuleViews = { health: { store: () => storeHealth(this.view()) } };
  private purgeTimer: NodeJS.Timeout | null = null;
  private purging: Promise<number> | null = null;
  /** False once stopped: a running purge ends after its current step. */
  private running = true;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Commits samples of a tick whose tick-done did not come (see recordInTick). */
  private tickTimer: NodeJS.Timeout | null = null;
  private droppedSinceLog = 0;
  private lastDropLogMs = Number.NEGATIVE_INFINITY;
  /** Writes the store has not taken yet, oldest first; at most store.write_queue_max_entries. */
  private pending: PendingWrite[] = [];
  private pendingDropped = 0;
  private pendingDroppedSinceLog = 0;
  private lastPendingDropLogMs = Number.NEGATIVE_INFINITY;
  /** Why the last write failed and since when (wall ms), while the store refuses writes. */
  private failure: { reason: string; sinceMs: number } | null = null;
  private readonly c: { invalid: Counter; stored: Counter; failures: Counter; pendingDropped: Counter; writable: Gauge; pending: Gauge };

  constructor(private readonly deps: RecorderDeps) {
    const registers = [deps.metrics];
    const self = this;
    this.c = {
      invalid: new Counter({ name: 'metergate_uplink_invalid_messages_total', help: 'Messages that failed their JSON Schema and were not stored or sent (a bug)', labelNames: ['type'], registers }),
      stored: new Counter({ name: 'metergate_readings_stored_total', help: 'Readings committed to SQLite (with their measurement message); a reading already stored for that instant is not counted', registers }),
      failures: storeWriteFailures(deps.metrics),
      pendingDropped: storePendingDropped(deps.metrics),
      writable: new Gauge({ name: 'metergate_store_writable', help: '1 while the store takes writes, 0 while they wait in memory', registers, collect() { this.set(self.failure ? 0 : 1); } }),
      pending: new Gauge({ name: 'metergate_store_pending_writes', help: 'Readings and messages waiting in memory for the store to take writes again', registers, collect() { this.set(self.pending.length); } }),
    };
  }

  async start(): Promise<void> {
    this.running = true;
    // Not awaited: a purge runs in steps beside polling (and next to the start-up watchdog).
    void this.purge();
    this.purgeTimer = setInterval(() => void this.purge(), PURGE_EVERY_MS);
    this.purgeTimer.unref();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.purgeTimer) clearInterval(this.purgeTimer);
    this.purgeTimer = null;
    await this.purging;
    // The samples of an unfinished tick, and whatever waits for the store: one last try.
    if (this.pending.length > 0 && !this.flush()) {
      this.deps.logger.error({ pending: this.pending.length, reason: this.failure?.reason }, 'stopping while the store refuses writes: these readings and messages are lost');
    }
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.retryTimer = this.tickTimer = null;
  }

  /** Stores one sample now: the reading (for pricing) and its measurement message (for the broker), in one durable transaction. */
  record(sample: MeterSample): void {
    this.queueReading(sample);
    // While the store refuses writes the retry timer tries (once a second), not every reading.
    if (this.failure === null) this.flush();
  }

  /**
   * Stores a sample taken in a poll tick: it waits for the other meters of the tick, and
   * `tickDone()` commits them all in one durable transaction — one WAL commit and fsync per
   * tick instead of one per meter (SD-card wear: docs/uplink.md). A sample outside a tick
   * (held ones released when the clock becomes trusted) is committed one poll interval later.
   */
  recordInTick(sample: MeterSample): void {
    this.queueReading(sample);
    if (this.failure === null) this.tickTimer ??= setTimeout(() => this.flush(), this.deps.config.poll.interval_ms);
  }

  /** Every meter polled in a tick has answered or failed: commit what the tick took. */
  tickDone(): void {
    if (this.failure === null) this.flush();
  }

  private queueReading(sample: MeterSample): void {
    const { config } = this.deps;
    const message = buildMeasurement(config.organization_id, sample);
    const problems = messageProblems('measurement', message);
    const outboxMessage: OutboxMessage | null =
      problems.length === 0 && config.mqtt
        ? {
            topic: topicFor(config.mqtt.topic_prefix, sample.resourceId, 'measurement'),
            payload: JSON.stringify(message),
            qos: 1,
            retain: false,
            stampedAtMs: sample.sampledAtMs,
            // Stored once, in the reading (SD-card wear): the outbox row points at it.
            reading: { resourceId: sample.resourceId, metricsJson: JSON.stringify(message.data.metrics) },
          }
        : null;
    if (problems.length > 0) this.invalid('measurement', problems, sample.resourceId);
    this.push({ kind: 'reading', sample, message: outboxMessage });
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
    this.push({ kind: 'message', message: { topic: topicFor(mqtt.topic_prefix, resourceId, type), payload: JSON.stringify(message), qos: 1, retain: opts.retain, stampedAtMs: opts.stampedAtMs } });
    if (this.failure === null) this.flush();
    return true;
  }

  /** For /healthz, /metrics and the status page. */
  view(): StoreView {
    return storeView(this.failure, { pending: this.pending.length, max: this.deps.config.store.write_queue_max_entries, droppedTotal: this.pendingDropped });
  }

  /**
   * Writes everything waiting, in one durable transaction. True when the queue is empty
   * afterwards. A store that refuses writes keeps the queue as it is (retried every
   * second); an entry that cannot be written for any other reason (a bug) is dropped on
   * its own, logged, so it cannot block the rest.
   */
  flush(): boolean {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.retryTimer = this.tickTimer = null;
    if (this.pending.length === 0) return true;
    let written: Written;
    try {
      written = this.commit(this.pending);
      this.pending = [];
    } catch (err) {
      if (isStorageUnavailable(err)) return this.refused(err);
      written = this.commitOneByOne();
      if (this.pending.length > 0) return false;
    }
    this.committed(written);
    return true;
  }

  private push(write: PendingWrite): void {
    this.pending.push(write);
    const max = this.deps.config.store.write_queue_max_entries;
    if (this.pending.length <= max) return;
    const gone = this.pending.splice(0, this.pending.length - max);
    for (const w of gone) this.c.pendingDropped.inc({ kind: w.kind });
    this.pendingDropped += gone.length;
    this.pendingDroppedSinceLog += gone.length;
    const now = this.deps.clock.now();
    if (now - this.lastPendingDropLogMs >= DROP_LOG_EVERY_MS || now < this.lastPendingDropLogMs) {
      this.deps.logger.error(
        { dropped: this.pendingDroppedSinceLog, max, reason: this.failure?.reason },
        'store still refuses writes and the queue in memory is full: dropped the oldest readings',
      );
      this.pendingDroppedSinceLog = 0;
      this.lastPendingDropLogMs = now;
    }
  }

  /** One durable transaction for `writes`; the outbox totals go back with it when it fails. */
  private commit(writes: readonly PendingWrite[]): Written {
    const { db, outbox, readings } = this.deps;
    const mark = outbox.mark();
    try {
      return withWriteBusyTimeout(db, () => durableTransaction(db, () => {
        const done: Written = { readings: 0, messages: 0, lastId: 0, evicted: 0 };
        // Deliveries acknowledged since the last tick leave in this commit, not one of their own (SD-card wear).
        outbox.deleteDeferred();
        const now = this.deps.clock.now();
        for (const w of writes) {
          // A reading already stored for that instant (re-stamped twice) is not stored or sent again.
          if (w.kind === 'reading' && !readings.insert(w.sample)) continue;
          if (w.kind === 'reading') done.readings++;
          if (w.message === null) continue;
          const { id, dropped } = outbox.enqueue(w.message, now);
          done.messages++;
          done.lastId = id;
          done.evicted += dropped;
        }
        return done;
      }));
    } catch (err) {
      outbox.restore(mark);
      throw err;
    }
  }

  /** After a failure that is not the storage's: each entry alone; the ones that fail on their own are dropped. */
  private commitOneByOne(): Written {
    const total: Written = { readings: 0, messages: 0, lastId: 0, evicted: 0 };
    while (this.pending.length > 0) {
      const w = this.pending[0];
      try {
        const one = this.commit([w]);
        total.readings += one.readings;
        total.messages += one.messages;
        total.lastId = one.lastId || total.lastId;
        total.evicted += one.evicted;
      } catch (err) {
        if (isStorageUnavailable(err)) {
          this.committed(total);
          this.refused(err);
          return { readings: 0, messages: 0, lastId: 0, evicted: 0 };
        }
        this.c.failures.inc({ code: err instanceof Error && 'code' in err ? primaryCode(String(err.code)) : 'error' });
        this.deps.logger.error({ err, kind: w.kind, topic: w.message?.topic }, 'write failed for a reason other than the storage: dropped');
      }
      this.pending.shift();
    }
    return total;
  }

  private refused(err: StorageError): false {
    this.c.failures.inc({ code: primaryCode(err.code) });
    const reason = storageErrorReason(err);
    if (this.failure === null) {
      this.failure = { reason, sinceMs: this.deps.clock.now() };
      this.deps.logger.error(
        { reason, pending: this.pending.length, max: this.deps.config.store.write_queue_max_entries },
        'store refuses writes: readings wait in memory and are written when it takes writes again',
      );
    } else this.failure.reason = reason;
    if (this.running) this.retryTimer = setTimeout(() => this.flush(), STORE_RETRY_EVERY_MS);
    return false;
  }

  private committed(written: Written): void {
    if (written.readings > 0) this.c.stored.inc(written.readings);
    if (this.failure !== null) {
      this.deps.logger.info(
        { reason: this.failure.reason, failedForMs: this.deps.clock.now() - this.failure.sinceMs, dropped: this.pendingDropped },
        'store takes writes again: waiting readings written',
      );
      this.failure = null;
    }
    if (written.messages === 0) return;
    if (written.evicted > 0) {
      this.deps.events.emit('outbox.evicted', { count: written.evicted });
      this.droppedSinceLog += written.evicted;
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
    this.deps.events.emit('sample.stored', { lastOutboxId: written.lastId });
  }

  private invalid(type: MessageType, problems: string[], resourceId: string): void {
    this.c.invalid.inc({ type });
    this.deps.logger.error({ type, resource_id: resourceId, problems }, 'message does not match its schema: not stored, not sent');
  }

  /**
   * Deletes readings older than the retention; resolves to how many went. Runs in steps
   * through the keys (the time-ordered readings, and before them those from before
   * migration 200 resource by resource), each sized to take about
   * PURGE_STEP_TARGET_MS, with the event loop free in between (a purge of a day of 4 meters
   * in one statement scanned 13.8 M rows on the event loop: docs/uplink.md). One at a time.
   */
  purge(): Promise<number> {
    this.purging ??= this.purgeInSteps().finally(() => {
      this.purging = null;
    });
    return this.purging;
  }

  private async purgeInSteps(): Promise<number> {
    const now = this.deps.clockGate ? this.deps.clockGate.trustedNow() : this.deps.clock.now();
    if (now === null) return 0;
    const cutoff = this.deps.readings.purgeCutoff(now - this.deps.config.store.readings_retention_days * DAY_MS);
    const margin = sessionMaxEdgeGapMs(this.deps.config);
    const { readings } = this.deps;
    let n = 0;
    let rows = PURGE_STEP_FIRST_ROWS;
    try {
      for (let at = readings.firstPurgeCursor(); at !== null && this.running; ) {
        const t0 = performance.now();
        const step = readings.purgeStep(at, cutoff, margin, rows);
        rows = nextStepRows(rows, step.deleted, performance.now() - t0);
        n += step.deleted;
        at = step.next;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (err) {
      this.deps.logger.error({ err, purged: n }, 'readings purge failed');
    }
    if (n > 0) this.deps.logger.info({ purged: n, before: new Date(cutoff).toISOString() }, 'purged old readings');
    return n;
  }
}

/** A step that went quicker than the target takes more rows next time, a slower one fewer (an SD card is slower than this VM). */
function nextStepRows(rows: number, deleted: number, tookMs: number): number {
  if (deleted < rows) return rows; // a short step says nothing about the rate
  if (tookMs < PURGE_STEP_TARGET_MS / 2) return Math.min(rows * 2, PURGE_STEP_MAX_ROWS);
  if (tookMs > PURGE_STEP_TARGET_MS * 2) return Math.max(Math.floor(rows / 2), PURGE_STEP_MIN_ROWS);
  return rows;
}

/** SQLITE_IOERR_SHMSIZE -> SQLITE_IOERR: one metric series per kind of failure. */
