// Drains the outbox to the broker: oldest first, at most `inflight_window` messages
// waiting for their PUBACK, a row deleted only after its PUBACK (deletes are batched
// into one transaction per batch; a crash before the batch commits means a duplicate,
// never a loss).
//
// After a (re)connect, the rows already stored are the *backlog*: they drain oldest
// first at most at `backlog_rate_per_s` (token bucket). Rows written after the connect
// are *fresh* and take a free window slot before any backlog row, so live readings keep
// flowing while a long backlog drains. The outbox is never loaded as a whole: each
// stream reads pages of PAGE_ROWS by id.
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Config } from '../config/types.js';
import type { Module } from '../lifecycle.js';
import type { Logger } from '../log.js';
import type { Liveness, LoopHandle } from '../ops/liveness.js';
import type { UplinkView } from '../ops/probes.js';
import type { Outbox, OutboxRow } from '../store/outbox.js';
import { PublishRefusedError, type MqttConnection } from './connection.js';
import { TokenBucket } from './token-bucket.js';

/**
 * Rows read per page. Small enough that a page dies young (with a 2 MB young generation a
 * page of 500 rows outlived two scavenges and was promoted: old-space garbage, heap growth
 * and copying while a backlog drains), large enough that a query per page costs nothing.
 */
const PAGE_ROWS = 100;
/**
 * Acknowledged rows are deleted in one transaction when this many wait or ACK_FLUSH_MS
 * after the first: one WAL commit per batch, not per message. A crash before the commit
 * means those rows are sent again (duplicates, never a loss).
 */
const ACK_BATCH = 1000;
const ACK_FLUSH_MS = 50;
const HOUSEKEEPING_MS = 5_000;

/** What may happen to a message whose own timestamp is `stampedAtMs`, now (the clock-trust seam). */
export type LeaveVerdict = 'send' | 'hold' | 'drop';

export interface OutboxPublisherDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics: Registry;
  readonly outbox: Outbox;
  readonly connection: MqttConnection;
  readonly liveness?: Liveness;
  /** Decides whether a message stamped at this time may leave now; default: always. */
  readonly mayLeave?: (stampedAtMs: number) => LeaveVerdict;
  /**
   * Connected, messages in flight, and not one PUBACK for this long: the publish loop is
   * stuck (a broker that keeps the link alive but never acknowledges; a lost callback).
   * The loop then stops ticking its liveness, so systemd's watchdog restarts the daemon,
   * which reconnects and sends the rows again from SQLite. Default: the larger of 120 s
   * and three keepalive periods (a dead link is the keepalive's business, not a stall).
   */
  readonly stallAfterMs?: number;
  /** Housekeeping period (liveness tick, pump retry); tests shorten it. */
  readonly housekeepingMs?: number;
}

interface Stream {
  cursor: number;
  buffer: OutboxRow[];
  exhausted: boolean;
}

export class OutboxPublisher implements Module {
  readonly name = 'uplink';
  /** Row id -> connection generation it was sent on. */
  private readonly inFlight = new Map<number, number>();
  private acked: OutboxRow[] = [];
  /** PUBACKs not yet counted in the metric (counted per delete batch, not per message). */
  private publishedUncounted = 0;
  private ackFlush: NodeJS.Timeout | null = null;
  private generation = 0;
  /** Rows with id <= boundary were stored before the current connection came up. */
  private boundary = 0;
  private backlog: Stream = { cursor: 0, buffer: [], exhausted: true };
  private fresh: Stream = { cursor: 0, buffer: [], exhausted: true };
  private knownMaxId = 0;
  private bucket: TokenBucket | null = null;
  private pumpTimer: NodeJS.Timeout | null = null;
  private pumping = false;
  private refill: NodeJS.Immediate | null = null;
  private housekeeping: NodeJS.Timeout | null = null;
  private holdLogged = false;
  private droppedRun = 0;
  private running = false;
  private lastPublishedAtMs: number | null = null;
  private loop: LoopHandle | null = null;
  /** Monotonic time of the last sign of progress: a PUBACK, a (re)connect, a send into an empty window. */
  private lastProgressMonoMs = performance.now();
  private stallLogged = false;
  private readonly counters: { published: Counter; refused: Counter; clockDropped: Counter; evicted: Counter };

  constructor(private readonly deps: OutboxPublisherDeps) {
    const registers = [deps.metrics];
    this.counters = {
      published: new Counter({ name: 'metergate_uplink_published_total', help: 'Outbox messages acknowledged by the broker (PUBACK)', registers }),
      refused: new Counter({ name: 'metergate_uplink_refused_total', help: 'Outbox messages the broker refused (MQTT 5 PUBACK reason code >= 128, e.g. 135 not authorized); removed from the outbox', registers }),
      clockDropped: new Counter({ name: 'metergate_uplink_implausible_timestamp_dropped_total', help: 'Outbox messages dropped because their timestamp can never be right', registers }),
      evicted: new Counter({
        name: 'metergate_outbox_dropped_total',
        help: 'Messages dropped from the outbox, oldest first, because it hit store.outbox_max_rows or store.outbox_max_bytes',
        registers,
      }),
    };
  }

  /** Counts rows the outbox dropped to hold its bounds (reported by the writer). */
  countEvicted(n: number): void {
    this.counters.evicted.inc(n);
  }

  async start(): Promise<void> {
    this.running = true;
    this.knownMaxId = this.deps.outbox.maxId();
    const c = this.deps.connection;
    c.on('connected', this.onConnected);
    c.on('disconnected', this.onDisconnected);
    const housekeepingMs = this.deps.housekeepingMs ?? HOUSEKEEPING_MS;
    this.loop = this.deps.liveness?.register('mqtt-publish', 6 * housekeepingMs) ?? null;
    this.housekeeping = setInterval(() => {
      if (!this.stalled()) this.loop?.tick();
      this.pump();
    }, housekeepingMs);
    const depth = this.deps.outbox.depth;
    if (depth > 0) this.deps.logger.info({ depth }, 'outbox holds messages from before; they drain once the broker is reachable');
    c.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.loop?.unregister();
    if (this.housekeeping) clearInterval(this.housekeeping);
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    if (this.refill) clearImmediate(this.refill);
    this.refill = null;
    this.housekeeping = this.pumpTimer = null;
    const c = this.deps.connection;
    await c.stop();
    c.off('connected', this.onConnected);
    c.off('disconnected', this.onDisconnected);
    this.flushAcks();
  }

  /** A row was written (by this process): look at the fresh stream again. */
  wake(newId?: number): void {
    if (newId !== undefined && newId > this.knownMaxId) this.knownMaxId = newId;
    else if (newId === undefined) this.knownMaxId = Math.max(this.knownMaxId, this.deps.outbox.maxId());
    this.pump();
  }

  view(): UplinkView {
    const stats = this.deps.outbox.stats();
    const c = this.deps.connection;
    return {
      state: c.state,
      broker: c.broker,
      outboxDepth: stats.depth,
      oldestAgeMs: stats.oldestCreatedAtMs === null ? null : Math.max(0, this.deps.clock.now() - stats.oldestCreatedAtMs),
      lastPublishedAtMs: this.lastPublishedAtMs,
      lastError: c.lastError,
      outboxFull: stats.full,
    };
  }

  /** Whether the loop is stuck (see stallAfterMs); logs the change once each way. */
  private stalled(): boolean {
    const stallAfterMs = this.deps.stallAfterMs ?? Math.max(120_000, 3 * (this.deps.config.mqtt?.keepalive_s ?? 30) * 1000);
    const silentMs = performance.now() - this.lastProgressMonoMs;
    const stuck = this.deps.connection.state === 'connected' && this.inFlight.size > 0 && silentMs > stallAfterMs;
    if (stuck && !this.stallLogged) {
      this.deps.logger.error({ inFlight: this.inFlight.size, silentMs: Math.round(silentMs) }, 'publish loop stalled: connected, but no PUBACK for the messages in flight; the systemd watchdog will restart the daemon');
    } else if (!stuck && this.stallLogged) {
      this.deps.logger.warn('publish loop moving again');
    }
    this.stallLogged = stuck;
    return stuck;
  }

  /** Messages sent and not yet acknowledged (for tests and the status page). */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  private readonly onConnected = (): void => {
    this.lastProgressMonoMs = performance.now();
    this.flushAcks();
    this.generation += 1;
    this.inFlight.clear();
    this.knownMaxId = Math.max(this.knownMaxId, this.deps.outbox.maxId());
    this.boundary = this.knownMaxId;
    this.backlog = { cursor: 0, buffer: [], exhausted: false };
    this.fresh = { cursor: this.boundary, buffer: [], exhausted: false };
    const rate = this.deps.config.mqtt!.backlog_rate_per_s;
    this.bucket = new TokenBucket(rate, Math.max(1, Math.min(rate, this.deps.config.mqtt!.inflight_window)), performance.now());
    const depth = this.deps.outbox.depth;
    if (depth > 0) this.deps.logger.info({ depth, ratePerS: rate }, 'draining the outbox backlog');
    this.pump();
  };

  private readonly onDisconnected = (): void => {
    this.lastProgressMonoMs = performance.now();
    // Whatever was in flight is sent again from SQLite after the next connect.
    this.generation += 1;
    this.inFlight.clear();
    this.backlog.buffer = [];
    this.fresh.buffer = [];
    this.flushAcks();
  };

  private next(stream: Stream, upTo: number): OutboxRow | undefined {
    if (stream.buffer.length === 0 && !stream.exhausted) {
      stream.buffer = this.deps.outbox.page(stream.cursor, PAGE_ROWS, upTo);
      if (stream.buffer.length === 0) stream.exhausted = true;
      else stream.buffer.reverse(); // pop() from the end = oldest first
    }
    return stream.buffer[stream.buffer.length - 1];
  }

  private pump(): void {
    if (!this.running || this.deps.connection.state !== 'connected' || this.pumpTimer || this.pumping) return;
    this.pumping = true;
    try {
      this.deps.connection.batch(() => this.fill());
    } finally {
      this.pumping = false;
    }
  }

  /** Sends rows until the window is full, the streams are dry, or the backlog must wait. */
  private fill(): void {
    const window = this.deps.config.mqtt!.inflight_window;
    // Bounded work per call, so rows that never occupy a slot (dropped) cannot hog the event loop.
    for (let steps = 0; this.inFlight.size < window; steps++) {
      if (steps >= window + PAGE_ROWS) return this.pumpLater(0);
      // Fresh rows first: new readings never wait behind the backlog.
      if (this.fresh.exhausted && this.fresh.cursor < this.knownMaxId) this.fresh.exhausted = false;
      let row = this.next(this.fresh, Number.MAX_SAFE_INTEGER);
      let stream = this.fresh;
      if (!row) {
        if (this.backlog.exhausted) return;
        // Monotonic: a wall-clock step must not stall or unleash the backlog.
        const now = performance.now();
        const wait = this.bucket!.waitMs(now);
        if (wait > 0) return this.pumpLater(wait);
        row = this.next(this.backlog, this.boundary);
        if (!row) {
          this.deps.logger.info('outbox backlog drained');
          return;
        }
        this.bucket!.take(now);
        stream = this.backlog;
      }
      const verdict = this.deps.mayLeave?.(row.stampedAtMs) ?? 'send';
      if (verdict === 'hold') {
        if (!this.holdLogged) this.deps.logger.warn('clock not trusted: outbox messages wait');
        this.holdLogged = true;
        return this.pumpLater(HOUSEKEEPING_MS);
      }
      this.holdLogged = false;
      stream.buffer.pop();
      stream.cursor = row.id;
      if (verdict === 'drop') {
        this.counters.clockDropped.inc();
        // One line for the first of a run, not one per row.
        if (this.droppedRun++ === 0) {
          this.deps.logger.error({ id: row.id, topic: row.topic, stampedAt: new Date(row.stampedAtMs).toISOString() }, 'outbox message with an impossible timestamp dropped (more are counted in metergate_uplink_implausible_timestamp_dropped_total)');
        }
        this.ack(row);
        continue;
      }
      this.droppedRun = 0;
      this.send(row);
    }
  }

  private pumpLater(ms: number): void {
    if (this.pumpTimer) return;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = null;
      this.pump();
    }, ms);
  }

  private send(row: OutboxRow): void {
    const gen = this.generation;
    // An idle window is not a stall: the wait for a PUBACK starts with this message.
    if (this.inFlight.size === 0) this.lastProgressMonoMs = performance.now();
    this.inFlight.set(row.id, gen);
    const sent = this.deps.connection.publish(
      { topic: row.topic, payload: row.payload, qos: row.qos, retain: row.retain, messageId: row.messageId },
      (err) => this.settled(row, gen, err),
    );
    if (!sent) this.inFlight.delete(row.id);
  }

  private settled(row: OutboxRow, gen: number, err: Error | null): void {
    const mine = this.inFlight.get(row.id) === gen;
    this.lastProgressMonoMs = performance.now();
    if (err instanceof PublishRefusedError) {
      // The broker will never take this message (ACL, quota, topic): keeping it would block the outbox.
      this.counters.refused.inc();
      this.deps.logger.error({ topic: row.topic, reasonCode: err.reasonCode, err: err.message }, 'broker refused a message; removed from the outbox');
    } else if (err) {
      // Connection lost: the row stays and is sent again after the reconnect.
      if (mine) this.inFlight.delete(row.id);
      return;
    } else {
      this.publishedUncounted += 1;
    }
    // A PUBACK from an earlier connection still means the broker has the message.
    this.ack(row);
    if (mine) this.inFlight.delete(row.id);
    // Refill once per event-loop turn: the PUBACKs of one socket read free slots together,
    // and their replacements leave in one write.
    this.refill ??= setImmediate(() => {
      this.refill = null;
      this.pump();
    });
  }

  private ack(row: OutboxRow): void {
    this.acked.push(row);
    if (this.acked.length >= ACK_BATCH) this.flushAcks();
    else this.ackFlush ??= setTimeout(() => this.flushAcks(), ACK_FLUSH_MS);
  }

  private flushAcks(): void {
    if (this.ackFlush) clearTimeout(this.ackFlush);
    this.ackFlush = null;
    if (this.publishedUncounted > 0) {
      this.counters.published.inc(this.publishedUncounted);
      this.publishedUncounted = 0;
      this.lastPublishedAtMs = this.deps.clock.now();
    }
    if (this.acked.length === 0) return;
    const batch = this.acked;
    this.acked = [];
    try {
      this.deps.outbox.deleteAcked(batch);
    } catch (err) {
      // The rows stay and will be sent again: a duplicate, not a loss.
      this.deps.logger.error({ err, rows: batch.length }, 'could not delete acknowledged outbox rows');
    }
  }
}
