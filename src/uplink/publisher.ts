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
//
// A refused PUBACK (MQTT 5, code >= 0x80) never deletes a row (docs/uplink.md, "Refused
// messages"). A permanent refusal (uplink/refusals.ts) holds the row, and every later row
// of its topic, in outbox_held; other topics go on. Held topics are retried after every
// (re)connect and on `metergate outbox retry`: the oldest held message goes first, alone,
// and once the broker takes it the rest of the topic follows, oldest first. A transient
// refusal keeps the row in the outbox and pauses sending with jittered backoff; then the
// streams start again from the oldest row left, the first one alone.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Config } from '../config/types.js';
import type { Module } from '../lifecycle.js';
import type { Logger } from '../log.js';
import type { Liveness, LoopHandle } from '../ops/systemd/liveness.js';
import type { ModuleViews, UplinkView } from '../ops/observability/views.js';
import type { HoldRequest, Outbox, OutboxRow } from '../store/outbox.js';
import { describeReasonCode } from '../store/outbox-held.js';
import { reconnectDelayMs, type BackoffPolicy } from './backoff.js';
import { PublishRefusedError, type MqttConnection } from './connection.js';
import { refusalKind } from './refusals.js';
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
/**
 * A smaller batch is not deleted in a commit of its own: the delete rides along with the
 * recorder's next tick (Outbox.deferAcked; one page fewer written per tick, docs/uplink.md),
 * or goes on its own after this many poll intervals when no tick came (no meters polled).
 */
const ACK_DEFER_POLL_INTERVALS = 2;
/**
 * At most this many acknowledged rows wait for a tick: a tick of live readings is a row per
 * meter, while a backlog drain acknowledges hundreds a second with no tick to ride along —
 * those commit on their own, so a crash resends no more than this plus what is in flight.
 */
const ACK_DEFER_MAX_ROWS = 200;
const HOUSEKEEPING_MS = 5_000;
/** A disconnect this soon after a permanent refusal is taken as the broker closing on it. */
const REFUSAL_CLOSE_MS = 2_000;
/**
 * Automatic retries of a refused topic: a jittered backoff from 30 s doubling to 10 min.
 * Each retry of a topic still refused costs one message and, on brokers that close the
 * connection after a refusal, one reconnect; a reconnect not caused by a refusal retries
 * at once, and so does `metergate outbox retry`.
 */
const HELD_RETRY = { minMs: 30_000, maxMs: 600_000 };

/**
 * What may happen to a message whose own timestamp is `stampedAtMs`, now (the clock-trust
 * seam): send it, wait (clock not trusted yet), or quarantine it (its time cannot be placed:
 * kept in outbox_held with reason 'clock', never deleted for it).
 */
export type LeaveVerdict = 'send' | 'hold' | 'quarantine';

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
  /** Housekeeping period (liveness tick, pump retry, `outbox retry` requests); tests shorten it. */
  readonly housekeepingMs?: number;
  readonly random?: () => number;
  /** Backoff of the automatic retries of a refused topic; default 30 s doubling to 10 min (HELD_RETRY). */
  readonly heldRetry?: BackoffPolicy;
}

/** A topic whose messages are held because the broker refused one for good. */
interface HeldTopic {
  readonly reasonCode: number | null;
  /** The held message sent again to see whether the broker takes it now (null: none out). */
  probeId: number | null;
  /** Refusals in a row; the automatic retry after a reconnect waits longer after each. */
  readonly attempt: number;
  /** Monotonic time before which no automatic retry is sent. */
  readonly notBeforeMs: number;
}

interface Stream {
  cursor: number;
  buffer: OutboxRow[];
  exhausted: boolean;
}

export class OutboxPublisher implements Module {
  readonly name = 'uplink';
  readonly views: ModuleViews = { uplink: () => this.view() };
  /** Row id -> connection generation it was sent on. */
  private readonly inFlight = new Map<number, number>();
  private acked: OutboxRow[] = [];
  /** Ids in `acked` (acknowledged, delete not committed yet): a stream started again must not send them twice. */
  private readonly ackedIds = new Set<number>();
  /** PUBACKs not yet counted in the metric (counted per delete batch, not per message). */
  private publishedUncounted = 0;
  private ackFlush: NodeJS.Timeout | null = null;
  /** Deletes the deferred acknowledged rows when no tick took them along. */
  private deferredAckTimer: NodeJS.Timeout | null = null;
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
  private quarantinedRun = 0;
  private readonly heldTopics = new Map<string, HeldTopic>();
  /**
   * Topics given back by the broker whose old rows (ids up to untilId) are still being sent:
   * rows of the topic written meanwhile ("followers") are held until those are out, then
   * released behind them, so the topic arrives oldest first although fresh rows of other
   * topics still overtake the backlog.
   */
  private readonly draining = new Map<string, { untilId: number; reasonCode: number | null; followers: boolean }>();
  /** A permanent refusal's monotonic time: a disconnect right after it is the broker closing on refusal. */
  private lastPermanentRefusalMs = Number.NEGATIVE_INFINITY;
  private refusedOnThisConnection = false;
  private disconnectFollowedRefusal = false;
  private toHold: HoldRequest[] = [];
  /** Transient refusals: consecutive pauses, the pause under way, the last code. */
  private refusalAttempt = 0;
  private pauseTimer: NodeJS.Timeout | null = null;
  private pausedUntilMs: number | null = null;
  private lastTransientCode: number | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private probeTimerAt = 0;
  /** After a pause or a retry the oldest row goes alone until the broker takes one. */
  private headAlone = false;
  private running = false;
  private lastPublishedAtMs: number | null = null;
  private loop: LoopHandle | null = null;
  /** Monotonic time of the last sign of progress: a PUBACK, a (re)connect, a send into an empty window. */
  private lastProgressMonoMs = performance.now();
  private stallLogged = false;
  private readonly counters: { published: Counter; refused: Counter<'reason_code' | 'outcome'>; quarantined: Counter; evicted: Counter };

  constructor(private readonly deps: OutboxPublisherDeps) {
    const registers = [deps.metrics];
    this.counters = {
      published: new Counter({ name: 'metergate_uplink_published_total', help: 'Outbox messages acknowledged by the broker (PUBACK)', registers }),
      refused: new Counter({
        name: 'metergate_uplink_refused_total',
        help: 'PUBACKs with a refusal (MQTT 5 reason code >= 128) by code; outcome held (permanent: 135, 144, 153; kept in outbox_held) or retried (the row stays in the outbox)',
        labelNames: ['reason_code', 'outcome'],
        registers,
      }),
      quarantined: new Counter({
        name: 'metergate_uplink_clock_quarantined_total',
        help: 'Outbox messages held because their timestamp lies ahead of the trusted clock (after a clock step); kept, not sent, never deleted for it',
        registers,
      }),
      evicted: new Counter({
        name: 'metergate_outbox_dropped_total',
        help: 'Messages dropped from the outbox, oldest first, because it hit store.outbox_max_rows or store.outbox_max_bytes',
        registers,
      }),
    };
    const outbox = deps.outbox;
    new Gauge({
      name: 'metergate_outbox_held',
      help: 'Messages held out of the sending order (kept, counted in the outbox bound): reason refused (the broker refused the topic) or clock (timestamp ahead of the trusted clock)',
      labelNames: ['reason'],
      registers,
      collect() {
        const groups = outbox.heldGroups();
        for (const reason of ['refused', 'clock'] as const) this.set({ reason }, groups.filter((g) => g.reason === reason).reduce((n, g) => n + g.count, 0));
      },
    });
  }

  /** Counts rows the outbox dropped to hold its bounds (reported by the writer). */
  countEvicted(n: number): void {
    this.counters.evicted.inc(n);
  }

  async start(): Promise<void> {
    this.running = true;
    this.knownMaxId = this.deps.outbox.maxId();
    for (const t of this.deps.outbox.refusedTopics()) this.heldTopics.set(t.topic, { reasonCode: t.reasonCode, probeId: null, attempt: 0, notBeforeMs: 0 });
    const c = this.deps.connection;
    c.on('connected', this.onConnected);
    c.on('disconnected', this.onDisconnected);
    const housekeepingMs = this.deps.housekeepingMs ?? HOUSEKEEPING_MS;
    this.loop = this.deps.liveness?.register('mqtt-publish', 6 * housekeepingMs) ?? null;
    this.housekeeping = setInterval(() => {
      if (!this.stalled()) this.loop?.tick();
      this.takeRetryRequest();
      this.pump();
    }, housekeepingMs);
    const depth = this.deps.outbox.depth;
    if (depth > 0) this.deps.logger.info({ depth }, 'outbox holds messages from before; they drain once the broker is reachable');
    const held = this.deps.outbox.heldCount;
    if (held > 0) this.deps.logger.warn({ held, groups: this.deps.outbox.heldGroups() }, 'messages held from before (refused by the broker, or stamped ahead of the clock); see `metergate doctor`');
    c.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.loop?.unregister();
    if (this.housekeeping) clearInterval(this.housekeeping);
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    if (this.pauseTimer) clearTimeout(this.pauseTimer);
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.pauseTimer = this.probeTimer = null;
    this.pausedUntilMs = null;
    if (this.refill) clearImmediate(this.refill);
    this.refill = null;
    this.housekeeping = this.pumpTimer = null;
    const c = this.deps.connection;
    await c.stop();
    c.off('connected', this.onConnected);
    c.off('disconnected', this.onDisconnected);
    this.flushAcks();
    this.deleteDeferredAcks();
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
      nodes: c.brokerNodes,
      outboxDepth: stats.depth,
      oldestAgeMs: stats.oldestCreatedAtMs === null ? null : Math.max(0, this.deps.clock.now() - stats.oldestCreatedAtMs),
      lastPublishedAtMs: this.lastPublishedAtMs,
      lastError: c.lastError,
      outboxFull: stats.full,
      heldMessages: stats.held,
      refusals: this.refusalSummary(),
    };
  }

  /** One line for /healthz and the status page while the broker refuses messages, else null. */
  private refusalSummary(): string | null {
    const parts: string[] = [];
    for (const g of this.deps.outbox.heldGroups()) {
      parts.push(
        g.reason === 'refused'
          ? `${g.count} message(s) for ${g.topic} held: the broker refused them (${describeReasonCode(g.reasonCode)}) since ${new Date(g.sinceMs).toISOString()}`
          : `${g.count} message(s) for ${g.topic} quarantined: stamped ahead of the trusted clock after a clock step`,
      );
    }
    if (this.pausedUntilMs !== null && this.lastTransientCode !== null) {
      parts.push(`broker refusing for now (${describeReasonCode(this.lastTransientCode)}), sending again in ${Math.max(0, Math.round((this.pausedUntilMs - performance.now()) / 1000))} s`);
    }
    return parts.length > 0 ? parts.join('; ') : null;
  }

  /**
   * Retries held messages: per refused topic its oldest message goes first, alone, and once
   * the broker takes it the rest follows. `force` (every reconnect, `metergate outbox retry`)
   * retries every topic now; otherwise (the timer; a reconnect right after the broker closed
   * the link on a refusal, as mosquitto 2.0 under MQTT 5, VerneMQ and aedes do) a topic waits
   * for its jittered backoff since its last refusal, so retries cannot become a reconnect
   * loop that starves the other topics. `includeClock` puts the messages quarantined for
   * their timestamp back too (the clock gate looks at each again).
   */
  retryHeld(opts: { force?: boolean; includeClock?: boolean } = {}): void {
    const now = performance.now();
    let released = 0;
    let nextAt = Number.POSITIVE_INFINITY;
    for (const [topic, held] of this.heldTopics) {
      if (!opts.force && held.probeId === null && held.notBeforeMs > now) {
        nextAt = Math.min(nextAt, held.notBeforeMs);
        continue;
      }
      // Idempotent: a probe still out keeps its place (a probe dropped by the bound is replaced).
      held.probeId = this.deps.outbox.probe(topic);
      if (held.probeId === null) this.heldTopics.delete(topic);
      else released += 1;
    }
    if (opts.includeClock) released += this.deps.outbox.releaseClockHeld();
    if (nextAt !== Number.POSITIVE_INFINITY) this.retryLater(nextAt - now);
    if (released === 0) return;
    this.deps.logger.info({ topics: [...this.heldTopics.keys()], includeClock: opts.includeClock === true }, 'retrying held messages: the oldest of each refused topic first');
    this.rewind();
  }

  /** The next automatic retry (one timer for all topics, armed for the earliest; the others re-arm it). */
  private retryLater(ms: number): void {
    const at = performance.now() + Math.max(0, ms);
    if (this.probeTimer && this.probeTimerAt <= at) return;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimerAt = at;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      // Not connected: the next connect retries.
      if (this.running && this.deps.connection.state === 'connected') this.retryHeld();
    }, Math.max(0, ms));
  }

  private takeRetryRequest(): void {
    let request: { includeClock: boolean } | null = null;
    try {
      request = this.deps.outbox.takeRetryRequest();
    } catch (err) {
      this.deps.logger.error({ err }, 'could not read `metergate outbox retry` requests');
    }
    if (request) this.retryHeld({ force: true, includeClock: request.includeClock });
  }

  /**
   * Starts both streams again from the oldest row left (rows moved back from outbox_held
   * have their old, lower ids; rows skipped while paused are still there). Acknowledged and
   * held rows are written first so they are not read again; rows still in flight are skipped.
   */
  private rewind(): void {
    this.flushAcks();
    this.knownMaxId = Math.max(this.knownMaxId, this.deps.outbox.maxId());
    this.boundary = this.knownMaxId;
    this.backlog = { cursor: 0, buffer: [], exhausted: false };
    this.fresh = { cursor: this.boundary, buffer: [], exhausted: false };
    this.headAlone = true;
    this.pump();
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
    // After every reconnect, at once, unless the broker closed the link right after refusing
    // (mosquitto 2.0 does): then each topic waits for its backoff, or it would loop.
    this.retryHeld({ force: !this.disconnectFollowedRefusal });
    this.pump();
  };

  private readonly onDisconnected = (): void => {
    this.lastProgressMonoMs = performance.now();
    this.disconnectFollowedRefusal = this.refusedOnThisConnection && performance.now() - this.lastPermanentRefusalMs < REFUSAL_CLOSE_MS;
    this.refusedOnThisConnection = false;
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
    if (!this.running || this.deps.connection.state !== 'connected' || this.pumpTimer || this.pumping || this.pausedUntilMs !== null) return;
    this.pumping = true;
    try {
      this.deps.connection.batch(() => this.fill());
    } finally {
      this.pumping = false;
    }
  }

  /** Sends rows until the window is full, the streams are dry, or the backlog must wait. */
  private fill(): void {
    const window = this.headAlone ? 1 : this.deps.config.mqtt!.inflight_window;
    // Bounded work per call, so rows that never occupy a slot (dropped) cannot hog the event loop.
    for (let steps = 0; this.inFlight.size < window; steps++) {
      if (steps >= window + PAGE_ROWS) return this.pumpLater(0);
      if (this.draining.size > 0) this.endDrains();
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
        stream = this.backlog;
      }
      // Sent before a rewind: its PUBACK is still to come, or came and its delete is pending.
      if (this.inFlight.has(row.id) || this.ackedIds.has(row.id)) {
        stream.buffer.pop();
        stream.cursor = row.id;
        continue;
      }
      // Behind a refused message of its topic: held too, so the topic keeps its order.
      const heldTopic = this.heldTopics.get(row.topic);
      if (heldTopic && heldTopic.probeId !== row.id) {
        stream.buffer.pop();
        stream.cursor = row.id;
        this.hold({ row, reason: 'refused', reasonCode: heldTopic.reasonCode });
        continue;
      }
      // Written after its topic was given back, while the topic's old rows are still going out.
      const drain = this.draining.get(row.topic);
      if (drain && row.id > drain.untilId) {
        stream.buffer.pop();
        stream.cursor = row.id;
        drain.followers = true;
        this.hold({ row, reason: 'refused', reasonCode: drain.reasonCode });
        continue;
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
      if (verdict === 'quarantine') {
        this.counters.quarantined.inc();
        // One line for the first of a run, not one per row.
        if (this.quarantinedRun++ === 0) {
          this.deps.logger.error({ id: row.id, topic: row.topic, stampedAt: new Date(row.stampedAtMs).toISOString() }, 'outbox message stamped ahead of the trusted clock: quarantined, not sent (kept in outbox_held; more are counted in metergate_uplink_clock_quarantined_total; docs/clock-safety.md)');
        }
        this.hold({ row, reason: 'clock', reasonCode: null });
        continue;
      }
      this.quarantinedRun = 0;
      if (stream === this.backlog) this.bucket!.take(performance.now());
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
    if (mine) this.inFlight.delete(row.id);
    if (err instanceof PublishRefusedError) {
      if (refusalKind(err.reasonCode) === 'permanent') this.refusedForGood(row, err.reasonCode);
      else this.refusedForNow(row, err.reasonCode);
    } else if (err) {
      // Connection lost: the row stays and is sent again after the reconnect.
      return;
    } else {
      // A PUBACK from an earlier connection still means the broker has the message.
      this.publishedUncounted += 1;
      this.ack(row);
      this.refusalAttempt = 0;
      const held = this.heldTopics.get(row.topic);
      if (held && held.probeId === row.id) this.releaseTopic(row.topic, row.id);
      else if (this.headAlone) this.headAlone = false;
    }
    // Refill once per event-loop turn: the PUBACKs of one socket read free slots together,
    // and their replacements leave in one write.
    this.refill ??= setImmediate(() => {
      this.refill = null;
      this.pump();
    });
  }

  /** 0x87, 0x90, 0x99: held with its topic; the other topics go on. */
  private refusedForGood(row: OutboxRow, reasonCode: number): void {
    this.counters.refused.inc({ reason_code: String(reasonCode), outcome: 'held' });
    this.lastPermanentRefusalMs = performance.now();
    this.refusedOnThisConnection = true;
    this.draining.delete(row.topic);
    const held = this.heldTopics.get(row.topic);
    if (!held || held.probeId === row.id) {
      this.deps.logger[held ? 'warn' : 'error'](
        { topic: row.topic, reasonCode, reason: describeReasonCode(reasonCode), retried: held !== undefined },
        'broker refused a message for good: it and the later messages of its topic are held (kept, not deleted) until retried after a reconnect or `metergate outbox retry`; `metergate doctor` says what to fix',
      );
    }
    // Retried by itself after a backoff that grows with each refusal in a row (and after a reconnect, no sooner).
    const attempt = held && held.probeId === row.id ? held.attempt + 1 : (held?.attempt ?? 0);
    const policy = this.deps.heldRetry ?? HELD_RETRY;
    const waitMs = reconnectDelayMs(policy, attempt, (this.deps.random ?? Math.random)());
    this.heldTopics.set(row.topic, { reasonCode, probeId: null, attempt, notBeforeMs: performance.now() + waitMs });
    this.retryLater(waitMs);
    this.hold({ row, reason: 'refused', reasonCode });
  }

  /** Any other code: the row stays in the outbox; sending pauses with jittered backoff, then starts again from the oldest row. */
  private refusedForNow(row: OutboxRow, reasonCode: number): void {
    this.counters.refused.inc({ reason_code: String(reasonCode), outcome: 'retried' });
    this.lastTransientCode = reasonCode;
    if (this.pauseTimer) return; // already pausing; the rewind at its end sends this row again
    const mq = this.deps.config.mqtt!;
    const delayMs = reconnectDelayMs({ minMs: mq.reconnect_min_ms, maxMs: mq.reconnect_max_ms }, this.refusalAttempt, (this.deps.random ?? Math.random)());
    this.refusalAttempt += 1;
    this.deps.logger.warn({ topic: row.topic, id: row.id, reasonCode, reason: describeReasonCode(reasonCode), delayMs, attempt: this.refusalAttempt }, 'broker refused a message for now: it stays in the outbox; sending again after a pause');
    this.pausedUntilMs = performance.now() + delayMs;
    this.pauseTimer = setTimeout(() => {
      this.pauseTimer = null;
      this.pausedUntilMs = null;
      this.rewind();
    }, delayMs);
  }

  /** The broker took a held topic's oldest message: the rest follows, oldest first. */
  private releaseTopic(topic: string, probeId: number): void {
    this.flushAcks();
    const reasonCode = this.heldTopics.get(topic)?.reasonCode ?? null;
    const { released, maxId } = this.deps.outbox.releaseTopic(topic, probeId);
    this.heldTopics.delete(topic);
    if (maxId !== null) this.draining.set(topic, { untilId: maxId, reasonCode, followers: false });
    this.deps.logger.info({ topic, released }, 'broker takes a held topic again: sending its held messages, oldest first');
    this.rewind();
  }

  /** Ends the drains whose old rows have all been sent; followers go out behind them (a rewind). */
  private endDrains(): void {
    let rewind = false;
    for (const [topic, d] of this.draining) {
      if (!this.backlog.exhausted && this.backlog.cursor < d.untilId) continue;
      if (!d.followers) {
        this.draining.delete(topic);
        continue;
      }
      this.flushAcks();
      const { maxId } = this.deps.outbox.releaseTopic(topic, null);
      if (maxId === null) this.draining.delete(topic);
      else {
        d.untilId = maxId;
        d.followers = false;
        rewind = true;
      }
    }
    if (rewind) this.rewind();
  }

  private hold(request: HoldRequest): void {
    this.toHold.push(request);
    this.ackFlush ??= setTimeout(() => this.flushAcks(), ACK_FLUSH_MS);
  }

  private ack(row: OutboxRow): void {
    this.acked.push(row);
    this.ackedIds.add(row.id);
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
    if (this.toHold.length > 0) {
      const holds = this.toHold;
      this.toHold = [];
      try {
        this.deps.outbox.hold(holds, this.deps.clock.now());
      } catch (err) {
        // The rows stay in the outbox and are looked at again after the next rewind or reconnect.
        this.deps.logger.error({ err, rows: holds.length }, 'could not move refused outbox rows to outbox_held');
      }
    }
    if (this.acked.length === 0) return;
    const batch = this.acked;
    this.acked = [];
    // Pages read before these PUBACKs (after a rewind) may still hold them: drop them there.
    const gone = this.ackedIds;
    for (const s of [this.backlog, this.fresh]) if (s.buffer.length > 0) s.buffer = s.buffer.filter((r) => !gone.has(r.id));
    gone.clear();
    this.deps.outbox.deferAcked(batch);
    if (this.deps.outbox.deferredCount >= ACK_DEFER_MAX_ROWS || !this.running) this.deleteDeferredAcks();
    else this.deferredAckTimer ??= setTimeout(() => this.deleteDeferredAcks(), ACK_DEFER_POLL_INTERVALS * this.deps.config.poll.interval_ms);
  }

  /** Deletes acknowledged rows no tick has taken along yet, in a commit of their own. */
  private deleteDeferredAcks(): void {
    if (this.deferredAckTimer) clearTimeout(this.deferredAckTimer);
    this.deferredAckTimer = null;
    try {
      this.deps.outbox.deleteDeferred();
    } catch (err) {
      // The rows stay and will be sent again after a restart: a duplicate, not a loss.
      this.deps.logger.error({ err, rows: this.deps.outbox.deferredCount }, 'could not delete acknowledged outbox rows');
      if (this.running) this.deferredAckTimer = setTimeout(() => this.deleteDeferredAcks(), ACK_DEFER_POLL_INTERVALS * this.deps.config.poll.interval_ms);
    }
  }
}
