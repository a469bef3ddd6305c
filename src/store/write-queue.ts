// The store's policy for writes it cannot take right now (disk full, I/O error, locked by
// another process: storage-errors.ts), for writers that are not the meter recorder: what
// was to be written waits in a bounded queue in memory, in order, and is tried again every
// second until the store takes writes (docs/faults.md, docs/chargers.md "When the store
// refuses writes"). The recorder (uplink/recorder.ts) batches its readings into one
// durable transaction per tick and keeps its own queue; both use the same busy timeout,
// retry interval, bound (store.write_queue_max_entries) and failure counters.
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { StoreView } from '../ops/observability/views.js';
import type { Db } from './db.js';
import { isStorageUnavailable, primaryCode, storageErrorReason, STORE_RETRY_EVERY_MS, withWriteBusyTimeout, type StorageError } from './storage-errors.js';

const DROP_LOG_EVERY_MS = 60_000;

/** The counter of writes the store refused, shared by every writer that retries (one series per SQLite code). */
export function storeWriteFailures(registry: Registry): Counter<'code'> {
  const name = 'metergate_store_write_failures_total';
  return (registry.getSingleMetric(name) as Counter<'code'> | undefined) ?? new Counter({ name, help: 'Write transactions the store refused (disk full, I/O error, locked), by SQLite code; the data waits in memory', labelNames: ['code'] as const, registers: [registry] });
}

/** The counter of writes dropped from a full queue, by kind, shared by every writer that retries. */
export function storePendingDropped(registry: Registry): Counter<'kind'> {
  const name = 'metergate_store_pending_dropped_total';
  return (registry.getSingleMetric(name) as Counter<'kind'> | undefined) ?? new Counter({ name, help: 'Writes dropped, oldest first, because the in-memory queue for a store that refuses writes was full', labelNames: ['kind'] as const, registers: [registry] });
}

/** What a writer that queues for a refusing store shows (/healthz, /metrics, the status page): the write queue's and the recorder's alike. */
export function storeView(failure: { readonly reason: string; readonly sinceMs: number } | null, queue: { readonly pending: number; readonly max: number; readonly droppedTotal: number }): StoreView {
  return {
    writable: failure === null,
    reason: failure?.reason ?? null,
    failingSinceMs: failure?.sinceMs ?? null,
    pendingWrites: queue.pending,
    maxPendingWrites: queue.max,
    pendingDroppedTotal: queue.droppedTotal,
  };
}

/** A write that will not happen: dropped from a full queue, or still waiting when the module stopped. */
export class StoreWriteDropped extends Error {}

interface Entry {
  readonly work: () => unknown;
  readonly what: string;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export interface StoreWriteQueueDeps {
  readonly db: Db;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics: Registry;
  /** store.write_queue_max_entries */
  readonly maxEntries: number;
  /** The dropped counter's kind label and the log's subject, e.g. 'ocpp'. */
  readonly kind: string;
}

export class StoreWriteQueue {
  private pending: Entry[] = [];
  private failure: { reason: string; sinceMs: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private flushing = false;
  private running = true;
  private dropped = 0;
  private droppedSinceLog = 0;
  private lastDropLogMs = Number.NEGATIVE_INFINITY;
  private readonly failures: Counter<'code'>;
  private readonly droppedTotal: Counter<'kind'>;

  constructor(private readonly deps: StoreWriteQueueDeps) {
    this.failures = storeWriteFailures(deps.metrics);
    this.droppedTotal = storePendingDropped(deps.metrics);
  }

  /**
   * Runs `work` (its reads and writes, one unit) now when nothing waits and the store takes
   * writes, else after what waits, and while the store refuses writes again every second.
   * Called from inside a unit being run (an event that unit emitted), it runs at once too:
   * it belongs to that unit's moment (what the unit's caller reads next); refused, it waits
   * after the others. Resolves with its result once it ran; rejects with its error when it
   * failed for a reason other than the storage (not tried again), or with StoreWriteDropped.
   */
  run<T>(what: string, work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (!this.running) {
        reject(new StoreWriteDropped(`${what}: not written, the ${this.deps.kind} module has stopped`));
        return;
      }
      const entry: Entry = { work, what, resolve: resolve as (v: unknown) => void, reject };
      if (this.flushing) {
        this.runNested(entry);
        return;
      }
      this.pending.push(entry);
      this.bound();
      // While the store refuses writes the timer tries (once a second), not every new write.
      if (this.failure === null) this.flush();
    });
  }

  /** Whether the store refused the last try (writes wait in memory). */
  get refusing(): boolean {
    return this.failure !== null;
  }

  view(): StoreView {
    return storeView(this.failure, { pending: this.pending.length, max: this.deps.maxEntries, droppedTotal: this.dropped });
  }

  /** One last try; what still waits is dropped, said in the log. */
  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length > 0) this.flush();
    const lost = this.pending.splice(0);
    if (lost.length === 0) return;
    this.deps.logger.error({ kind: this.deps.kind, pending: lost.length, reason: this.failure?.reason, writes: [...new Set(lost.map((e) => e.what))] }, 'stopping while the store refuses writes: these writes are lost');
    for (const e of lost) e.reject(new StoreWriteDropped(`${e.what}: not written before stopping (${this.failure?.reason ?? 'store refused writes'})`));
  }

  /** Runs what waits, in order, until it is done or the store refuses. */
  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const entry = this.pending[0]!;
        let result: unknown;
        try {
          result = withWriteBusyTimeout(this.deps.db, entry.work);
        } catch (err) {
          if (isStorageUnavailable(err)) {
            this.refused(err);
            return;
          }
          // This write is wrong, not the store: it fails alone (its caller says why), the rest goes on.
          this.settled(entry);
          entry.reject(err);
          continue;
        }
        this.settled(entry);
        this.recovered();
        entry.resolve(result);
      }
    } finally {
      this.flushing = false;
    }
  }

  /**
   * Takes the entry that has just run off the queue: the head, which bound() never drops
   * while it runs. By identity, not shift(): what its work queued meanwhile stays queued.
   */
  private settled(entry: Entry): void {
    const at = this.pending.indexOf(entry);
    if (at >= 0) this.pending.splice(at, 1);
  }

  private runNested(entry: Entry): void {
    let result: unknown;
    try {
      result = withWriteBusyTimeout(this.deps.db, entry.work);
    } catch (err) {
      if (!isStorageUnavailable(err)) {
        entry.reject(err);
        return;
      }
      // The flush under way tries it again after the others (and says so when the store refuses).
      this.pending.push(entry);
      this.bound();
      return;
    }
    entry.resolve(result);
  }

  private bound(): void {
    const max = this.deps.maxEntries;
    // During a flush the head is running (a nested write of its unit got here): it neither
    // counts (it leaves the queue when its unit returns) nor is dropped (its caller would
    // hear "dropped" of a unit that commits). The oldest waiting after it go first.
    const running = this.flushing && this.pending.length > 0 ? 1 : 0;
    if (this.pending.length - running <= max) return;
    const gone = this.pending.splice(running, this.pending.length - running - max);
    this.droppedTotal.inc({ kind: this.deps.kind }, gone.length);
    this.dropped += gone.length;
    this.droppedSinceLog += gone.length;
    for (const e of gone) e.reject(new StoreWriteDropped(`${e.what}: dropped, the queue of writes waiting for the store is full`));
    const now = this.deps.clock.now();
    if (now - this.lastDropLogMs >= DROP_LOG_EVERY_MS || now < this.lastDropLogMs) {
      this.deps.logger.error({ kind: this.deps.kind, dropped: this.droppedSinceLog, max, reason: this.failure?.reason }, 'store still refuses writes and the queue in memory is full: dropped the oldest writes');
      this.droppedSinceLog = 0;
      this.lastDropLogMs = now;
    }
  }

  private refused(err: StorageError): void {
    this.failures.inc({ code: primaryCode(err.code) });
    const reason = storageErrorReason(err);
    if (this.failure === null) {
      this.failure = { reason, sinceMs: this.deps.clock.now() };
      this.deps.logger.error({ kind: this.deps.kind, reason, pending: this.pending.length, max: this.deps.maxEntries }, 'store refuses writes: they wait in memory and are written when it takes writes again');
    } else this.failure.reason = reason;
    if (this.running) this.timer = setTimeout(() => this.flush(), STORE_RETRY_EVERY_MS);
  }

  private recovered(): void {
    if (this.failure === null) return;
    this.deps.logger.info({ kind: this.deps.kind, reason: this.failure.reason, failedForMs: this.deps.clock.now() - this.failure.sinceMs, dropped: this.dropped }, 'store takes writes again: waiting writes written');
    this.failure = null;
  }
}
