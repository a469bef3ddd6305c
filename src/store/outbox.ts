// The outbox: messages committed to SQLite before any publish, deleted only after the
// broker's PUBACK. Bounded by rows and bytes; when a bound is hit the oldest rows go
// first (counted, and reported to the caller for the log). Never loaded into memory as
// a whole: the publisher pages through it by id.
import { randomUUID } from 'node:crypto';
import type { Db } from './db.js';
import { MetricSets } from './metric-sets.js';
import { METER_SLOTS } from './readings.js';
import { heldStatements, toHeldGroup, type HeldGroup, type HoldReason } from './outbox-held.js';

export interface OutboxMessage {
  readonly topic: string;
  readonly payload: string;
  readonly qos: 0 | 1;
  readonly retain: boolean;
  /** The message's own timestamp (sampled_at, booted_at, scanned_at), for the clock check before it leaves. */
  readonly stampedAtMs: number;
  /**
   * A measurement whose metrics are those of a reading committed in the same transaction
   * (resource, stampedAtMs): `metricsJson` is their JSON as it appears in the payload. They
   * are not stored twice (SD-card wear): the row keeps `[]` in their place, and they are read
   * back from the reading when the row is read.
   */
  readonly reading?: { readonly resourceId: string; readonly metricsJson: string };
}

export interface OutboxRow extends OutboxMessage {
  readonly id: number;
  readonly messageId: string;
  readonly bytes: number;
  readonly createdAtMs: number;
}

export interface OutboxLimits {
  readonly maxRows: number;
  readonly maxBytes: number;
}

export interface OutboxStats {
  readonly depth: number;
  readonly bytes: number;
  readonly oldestCreatedAtMs: number | null;
  /** Rows dropped (oldest first) because a bound was hit, since this process opened the outbox. */
  readonly droppedTotal: number;
  /** A bound made it drop rows and no acknowledged row was deleted since: every new message drops an old one. */
  readonly full: boolean;
  /** Messages held out of the sending order (table outbox_held); they count towards the bound. */
  readonly held: number;
}

/** A message to take out of the sending order, and why. */
export interface HoldRequest {
  readonly row: OutboxRow;
  readonly reason: HoldReason;
  readonly reasonCode: number | null;
}

/** Totals taken before a transaction, given back to `Outbox.restore` when it rolls back. */
export interface OutboxMark {
  readonly rows: number;
  readonly bytes: number;
  readonly dropped: number;
  /** Held rows and bytes (the bound may have dropped held rows inside the transaction). */
  readonly heldRows: number;
  readonly heldBytes: number;
  /** Acknowledged rows whose delete waits for the next commit (see `deferAcked`). */
  readonly deferred: readonly { id: number; bytes: number }[];
}

/** id, message_id, topic, payload, bytes, qos, retain, stamped_at_ms, created_at_ms, metrics_at, the reading's metrics_json */
type RawRow = [number, string, string, string, number, number, number, number, number, number | null, string | null];

/** A run of consecutive acknowledged ids: how many distinct rows and their bytes. */
interface Run {
  readonly from: number;
  readonly to: number;
  readonly rows: number;
  readonly bytes: number;
}

class RowsAlreadyGone extends Error {}

/** Sorts acknowledged rows into runs of consecutive ids (an id acknowledged twice counts once). */
function toRuns(acked: readonly { id: number; bytes: number }[]): Run[] {
  const sorted = [...acked].sort((a, b) => a.id - b.id);
  const runs: Run[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    let rows = 1;
    let bytes = sorted[i].bytes;
    while (j + 1 < sorted.length && sorted[j + 1].id <= sorted[j].id + 1) {
      j++;
      if (sorted[j].id !== sorted[j - 1].id) {
        rows++;
        bytes += sorted[j].bytes;
      }
    }
    runs.push({ from: sorted[i].id, to: sorted[j].id, rows, bytes });
    i = j + 1;
  }
  return runs;
}

export const messageBytes = (m: Pick<OutboxMessage, 'topic' | 'payload'>): number => Buffer.byteLength(m.payload) + Buffer.byteLength(m.topic);

export class Outbox {
  private rows: number;
  private totalBytes: number;
  private dropped = 0;
  /** Set when a bound made it drop rows, cleared when an acknowledged row is deleted. */
  private full = false;
  private heldRows: number;
  private heldBytes: number;
  private heldGroupsCache: HeldGroup[] | null = null;
  /** The lowest id the next row may take (ids never come back while the process runs: the publisher's cursors rely on it). */
  private nextId: number;
  private readonly held;
  private readonly stmts;
  private readonly metricSets: MetricSets;
  private readonly deleteMany: (ids: readonly { id: number; bytes: number }[]) => number;
  /** Acknowledged rows not deleted yet (deferAcked): no longer counted, never handed out again. */
  private deferred: { id: number; bytes: number }[] = [];
  private deferredIds = new Set<number>();

  constructor(
    private readonly db: Db,
    private readonly limits: OutboxLimits,
  ) {
    this.stmts = {
      // No AUTOINCREMENT (migration 161: its sqlite_sequence page was one more page written
      // per commit), so the id is chosen here: above every id this process has handed out,
      // and above what is in the table (the rightmost leaf, which the insert writes anyway).
      insert: db.prepare<[number, string, string, string, number, number, number, number, number, string | null, number | null]>(
        'INSERT INTO outbox (id, message_id, topic, payload, bytes, qos, retain, stamped_at_ms, created_at_ms, reading_resource_id, metrics_at) VALUES (MAX(?, (SELECT COALESCE(MAX(id), 0) + 1 FROM outbox)), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      // Raw rows (arrays), shaped into objects in JS: better-sqlite3 builds a row object
      // property by property through the V8 API, which cost twice as much per row (2.3 vs
      // 1.2 us) as an array plus an object literal here.
      page: db
        .prepare<[number, number, number], RawRow>(
          `SELECT o.id, o.message_id, o.topic, o.payload, o.bytes, o.qos, o.retain, o.stamped_at_ms, o.created_at_ms, o.metrics_at, COALESCE(r.metrics_json, l.metrics_json)
           FROM outbox o
           LEFT JOIN reading_meters m ON m.resource_id = o.reading_resource_id
           LEFT JOIN meter_readings r ON r.id = CAST(o.stamped_at_ms AS INTEGER) * ${METER_SLOTS} + m.id
           LEFT JOIN readings_by_meter l ON r.id IS NULL AND l.resource_id = o.reading_resource_id AND l.sampled_at_ms = o.stamped_at_ms
           WHERE o.id > ? AND o.id <= ? ORDER BY o.id LIMIT ?`,
        )
        .raw(),
      deleteRange: db.prepare<[number, number]>('DELETE FROM outbox WHERE id BETWEEN ? AND ? RETURNING bytes').pluck(),
      deleteRangeQuick: db.prepare<[number, number]>('DELETE FROM outbox WHERE id BETWEEN ? AND ?'),
      oldestIds: db.prepare<[number], { id: number; bytes: number }>('SELECT id, bytes FROM outbox ORDER BY id LIMIT ?'),
      deleteUpTo: db.prepare('DELETE FROM outbox WHERE id <= ?'),
      oldest: db.prepare<[], { id: number; created_at_ms: number }>('SELECT id, created_at_ms FROM outbox ORDER BY id LIMIT 1'),
      maxId: db.prepare('SELECT COALESCE(MAX(id), 0) FROM outbox').pluck(),
      totals: db.prepare<[], { n: number; b: number }>('SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS b FROM outbox'),
    };
    this.metricSets = new MetricSets(db);
    const totals = this.stmts.totals.get()!;
    this.rows = totals.n;
    this.totalBytes = totals.b;
    this.held = heldStatements(db);
    const heldTotals = this.held.totals.get()!;
    this.heldRows = heldTotals.n;
    this.heldBytes = heldTotals.b;
    // Held rows keep their outbox id and go back with it: a new row must never take one.
    this.nextId = Math.max(this.stmts.maxId.get() as number, this.held.maxId.get() as number) + 1;
    // Acknowledged ids arrive mostly as runs of consecutive integers (rows are sent in id
    // order): one range delete per run. A range holds only ids from the batch, so it can
    // never take a row that is not acknowledged. The plain delete is enough when every row
    // of a run was still there (the bytes are the batch's own); when one was already gone
    // (dropped by the bound, or acknowledged twice around a reconnect) the transaction is
    // rolled back and redone with RETURNING, which counts exactly what went.
    const quick = db.transaction((runs: readonly Run[]) => {
      let n = 0;
      let bytes = 0;
      for (const r of runs) {
        if (this.stmts.deleteRangeQuick.run(r.from, r.to).changes !== r.rows) throw new RowsAlreadyGone();
        n += r.rows;
        bytes += r.bytes;
      }
      return { n, bytes };
    });
    const exact = db.transaction((runs: readonly Run[]) => {
      let n = 0;
      let bytes = 0;
      for (const r of runs) {
        const gone = this.stmts.deleteRange.all(r.from, r.to) as number[];
        n += gone.length;
        for (const b of gone) bytes += b;
      }
      return { n, bytes };
    });
    this.deleteMany = (acked) => {
      const runs = toRuns(acked);
      let done: { n: number; bytes: number };
      try {
        done = quick(runs);
      } catch (err) {
        if (!(err instanceof RowsAlreadyGone)) throw err;
        done = exact(runs);
      }
      this.rows -= done.n;
      this.totalBytes -= done.bytes;
      if (done.n > 0) this.full = false;
      return done.n;
    };
  }

  /**
   * Appends a message; when that breaks a bound, drops the oldest rows until it holds.
   * Returns the new row's id and how many rows were dropped. Runs inside the caller's
   * transaction when there is one (readings + outbox commit together).
   */
  enqueue(message: OutboxMessage, nowMs: number): { id: number; dropped: number } {
    const bytes = messageBytes(message);
    const messageId = randomUUID();
    // The reading's metrics stay out of the row: `[]` in their place, and where.
    const at = message.reading ? message.payload.lastIndexOf(message.reading.metricsJson) : -1;
    const [payload, resourceId, metricsAt] =
      message.reading && at >= 0
        ? [`${message.payload.slice(0, at)}[]${message.payload.slice(at + message.reading.metricsJson.length)}`, message.reading.resourceId, at]
        : [message.payload, null, null];
    const info = this.stmts.insert.run(this.nextId, messageId, message.topic, payload, bytes, message.qos, message.retain ? 1 : 0, message.stampedAtMs, nowMs, resourceId, metricsAt);
    const id = Number(info.lastInsertRowid);
    this.nextId = id + 1;
    this.rows += 1;
    this.totalBytes += bytes;
    const dropped = this.overBound() ? this.evictOldest() : 0;
    return { id, dropped };
  }

  private overBound(): boolean {
    return this.rows + this.heldRows > this.limits.maxRows || this.totalBytes + this.heldBytes > this.limits.maxBytes;
  }

  /** Oldest first over the outbox and the held messages together (both ordered by the same ids). */
  private evictOldest(): number {
    let dropped = 0;
    while (this.overBound()) {
      const n = Math.min(1000, Math.max(1, this.rows + this.heldRows - this.limits.maxRows));
      const waiting = this.stmts.oldestIds.all(n).map((r) => ({ ...r, held: false }));
      const held = this.heldRows > 0 ? this.held.oldestIds.all(n).map((r) => ({ ...r, held: true })) : [];
      const batch = [...waiting, ...held].sort((a, b) => a.id - b.id).slice(0, n);
      if (batch.length === 0) break;
      let lastId = 0;
      let heldGone = false;
      for (const r of batch) {
        // Never evict the newest row (the one just written): the bound is for the backlog.
        if (this.rows + this.heldRows <= 1) break;
        if (!this.overBound()) break;
        lastId = r.id;
        // Delivered, its delete deferred: already counted out, goes with the others.
        if (!r.held && this.deferredIds.has(r.id)) continue;
        if (r.held) {
          this.heldRows -= 1;
          this.heldBytes -= r.bytes;
          heldGone = true;
        } else {
          this.rows -= 1;
          this.totalBytes -= r.bytes;
        }
        dropped += 1;
      }
      if (lastId === 0) break;
      this.stmts.deleteUpTo.run(lastId);
      if (heldGone) {
        this.held.deleteUpTo.run(lastId);
        this.heldGroupsCache = null;
      }
    }
    this.dropped += dropped;
    if (dropped > 0) this.full = true;
    return dropped;
  }

  /**
   * Up to `limit` rows with afterId < id <= upToId, oldest first, each with its whole payload.
   * A measurement whose reading is gone (deleted by hand: the retention purge keeps the
   * readings the outbox refers to) cannot be rebuilt and is left out.
   */
  page(afterId: number, limit: number, upToId = Number.MAX_SAFE_INTEGER): OutboxRow[] {
    const rows: OutboxRow[] = [];
    // A row left out (deferred delete, reading gone) is made up for by reading on: a short
    // page means the end of the range to the publisher's streams.
    for (let cursor = afterId; rows.length < limit; ) {
      const want = limit - rows.length;
      const raw = this.stmts.page.all(cursor, upToId, want) as unknown as RawRow[];
      for (let i = 0; i < raw.length; i++) {
        const r = raw[i];
        if (this.deferredIds.has(r[0])) continue; // delivered; its delete waits for the next commit
        let payload = r[3];
        const at = r[9];
        if (at !== null) {
          if (r[10] === null) continue;
          payload = `${payload.slice(0, at)}${this.metricSets.contractJson(r[10])}${payload.slice(at + 2)}`;
        }
        rows.push({ id: r[0], messageId: r[1], topic: r[2], payload, bytes: r[4], qos: r[5] === 0 ? 0 : 1, retain: r[6] === 1, stampedAtMs: r[7], createdAtMs: r[8] });
      }
      if (raw.length < want) break;
      cursor = raw[raw.length - 1][0];
    }
    return rows;
  }

  /** Deletes acknowledged rows (one transaction); rows already dropped are skipped. Returns how many went. */
  deleteAcked(acked: readonly { id: number; bytes: number }[]): number {
    return acked.length === 0 ? 0 : this.deleteMany(acked);
  }

  /**
   * Acknowledged rows whose delete rides along with the next commit that writes anyway (the
   * recorder's tick: `deleteDeferred` inside its transaction) instead of a commit of its own,
   * which would append the outbox page to the WAL once more per tick (SD-card wear,
   * docs/uplink.md). From now on they count as gone (depth, bytes) and `page` never hands
   * them out again; a crash before that commit leaves them in the table, and they are sent
   * again after the restart (a duplicate with the same message id, never a loss).
   */
  deferAcked(acked: readonly { id: number; bytes: number }[]): void {
    let n = 0;
    for (const a of acked) {
      if (this.deferredIds.has(a.id)) continue;
      this.deferredIds.add(a.id);
      this.deferred.push(a);
      this.rows -= 1;
      this.totalBytes -= a.bytes;
      n++;
    }
    if (n > 0) this.full = false;
  }

  /** Acknowledged rows waiting for their delete. */
  get deferredCount(): number {
    return this.deferred.length;
  }

  /**
   * Deletes the rows `deferAcked` kept, inside the caller's transaction when there is one
   * (rolled back with it: `restore(mark)` takes them back). Rows already gone (dropped by the
   * bound) are skipped; the totals counted them out already.
   */
  deleteDeferred(): number {
    if (this.deferred.length === 0) return 0;
    const [deferred, ids] = [this.deferred, this.deferredIds];
    this.deferred = [];
    this.deferredIds = new Set();
    try {
      return this.db.transaction(() => {
        let n = 0;
        for (const r of toRuns(deferred)) n += this.stmts.deleteRangeQuick.run(r.from, r.to).changes;
        return n;
      })();
    } catch (err) {
      [this.deferred, this.deferredIds] = [deferred, ids];
      throw err;
    }
  }

  /**
   * The in-memory totals as they are now. A transaction that wrote through `enqueue` and
   * then failed (disk full at commit, SQLITE_BUSY) is rolled back by SQLite, but not these
   * totals: `restore(mark)` takes them back too, so the depth never counts a row that was
   * never stored (a phantom backlog in /healthz and /metrics).
   */
  mark(): OutboxMark {
    return { rows: this.rows, bytes: this.totalBytes, dropped: this.dropped, heldRows: this.heldRows, heldBytes: this.heldBytes, deferred: this.deferred };
  }

  restore(mark: OutboxMark): void {
    if (mark.deferred !== this.deferred) {
      this.deferred = [...mark.deferred];
      this.deferredIds = new Set(this.deferred.map((d) => d.id));
    }
    this.rows = mark.rows;
    this.totalBytes = mark.bytes;
    this.dropped = mark.dropped;
    if (this.heldRows !== mark.heldRows) this.heldGroupsCache = null;
    this.heldRows = mark.heldRows;
    this.heldBytes = mark.heldBytes;
  }

  /** Highest id written so far (0 when empty). */
  maxId(): number {
    return this.stmts.maxId.get() as number;
  }

  get depth(): number {
    return this.rows;
  }

  stats(): OutboxStats {
    const oldest = this.rows > 0 ? this.stmts.oldest.get() : undefined;
    return { depth: this.rows, bytes: this.totalBytes, oldestCreatedAtMs: oldest?.created_at_ms ?? null, droppedTotal: this.dropped, full: this.full, held: this.heldRows };
  }

  /** Messages held out of the sending order. */
  get heldCount(): number {
    return this.heldRows;
  }

  /**
   * Takes rows out of the sending order into outbox_held (one transaction). A row that is no
   * longer in the outbox (dropped by the bound meanwhile) is skipped; a row held already (a
   * probe's copy) just leaves the outbox. Returns how many left the outbox.
   */
  hold(requests: readonly HoldRequest[], nowMs: number): number {
    if (requests.length === 0) return 0;
    const moved = this.db.transaction(() => {
      const m = { out: 0, outBytes: 0, in: 0, inBytes: 0 };
      for (const { row: r, reason, reasonCode } of requests) {
        if (this.stmts.deleteRangeQuick.run(r.id, r.id).changes !== 1) continue;
        m.out += 1;
        m.outBytes += r.bytes;
        const added = this.held.insert.run(r.id, r.messageId, r.topic, r.payload, r.bytes, r.qos, r.retain ? 1 : 0, r.stampedAtMs, r.createdAtMs, reason, reasonCode, nowMs).changes;
        m.in += added;
        m.inBytes += added * r.bytes;
      }
      return m;
    })();
    this.rows -= moved.out;
    this.totalBytes -= moved.outBytes;
    this.heldRows += moved.in;
    this.heldBytes += moved.inBytes;
    this.heldGroupsCache = null;
    return moved.out;
  }

  /**
   * Copies the oldest refused message of `topic` into the outbox (its own id), to see whether
   * the broker takes it now; it stays held until releaseTopic. Idempotent while the copy is
   * out. Returns its id, or null when nothing of the topic is held.
   */
  probe(topic: string): number | null {
    const r = this.held.oldestOfTopic.get(topic);
    if (!r) return null;
    const added = this.held.copyOne.run(r.id).changes;
    this.rows += added;
    this.totalBytes += added * r.bytes;
    return r.id;
  }

  /**
   * The broker took the probe (already acknowledged; null: no probe to forget): every other
   * refused message of `topic` goes back into the outbox. Returns how many and the highest id.
   */
  releaseTopic(topic: string, probeId: number | null): { released: number; maxId: number | null } {
    const moved = this.db.transaction(() => {
      this.deleteDeferred(); // so that a recount below counts only what waits
      const probeBytes = probeId === null ? undefined : (this.held.deleteOne.get(probeId) as number | undefined);
      const size = this.held.sizeOfTopic.get(topic)!;
      const added = this.held.releaseTopic.run(topic).changes;
      this.held.deleteTopic.run(topic);
      return { removed: size.n + (probeBytes === undefined ? 0 : 1), removedBytes: size.b + (probeBytes ?? 0), added, addedBytes: size.b, exact: added === size.n, maxId: size.maxId };
    })();
    this.afterRelease(moved);
    return { released: moved.added, maxId: moved.maxId };
  }

  /** Puts every message held for its timestamp back into the outbox (the clock gate looks at each again); returns how many. */
  releaseClockHeld(): number {
    const moved = this.db.transaction(() => {
      this.deleteDeferred(); // so that a recount below counts only what waits
      const size = this.held.sizeOfClock.get()!;
      const added = this.held.releaseClock.run().changes;
      this.held.deleteClock.run();
      return { removed: size.n, removedBytes: size.b, added, addedBytes: size.b, exact: added === size.n };
    })();
    this.afterRelease(moved);
    return moved.added;
  }

  private afterRelease(m: { removed: number; removedBytes: number; added: number; addedBytes: number; exact: boolean }): void {
    this.heldRows -= m.removed;
    this.heldBytes -= m.removedBytes;
    if (m.exact) {
      this.rows += m.added;
      this.totalBytes += m.addedBytes;
    } else {
      // A row was in both tables (not expected): count the outbox again.
      const totals = this.stmts.totals.get()!;
      this.rows = totals.n;
      this.totalBytes = totals.b;
    }
    this.heldGroupsCache = null;
  }

  /** Topics with refused messages held, each with its reason code (for a publisher that starts). */
  refusedTopics(): Array<{ topic: string; reasonCode: number | null }> {
    return this.held.refusedTopics.all().map((r) => ({ topic: r.topic, reasonCode: r.code }));
  }

  /** Held messages by reason, topic and code (cached until something moves). */
  heldGroups(): readonly HeldGroup[] {
    this.heldGroupsCache ??= this.held.summary.all().map(toHeldGroup);
    return this.heldGroupsCache;
  }

  /** A pending `metergate outbox retry`, taken (null when none). */
  takeRetryRequest(): { includeClock: boolean } | null {
    const taken = this.held.takeRetry.all();
    return taken.length === 0 ? null : { includeClock: taken.some((r) => r.include_clock === 1) };
  }
}
