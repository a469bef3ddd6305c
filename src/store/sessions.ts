// Charging sessions received from a charge-point operator, and what their price record
// needs to stay stable: a cdr id fixed at creation, and last_updated that moves only
// when the session's content or its computed price changes.
import { createHash, randomUUID } from 'node:crypto';
import type { Db } from './db.js';
import { MeterReadings } from './readings.js';

export type SessionStatus = 'active' | 'completed';

/** A cumulative energy reading as a session keeps it (the shape pricing/session-cost.ts prices). */
export interface StoredReading {
  readonly timestampMs: number;
  readonly energyKwh: number;
}

/** What a PUT carries, after validation. */
export interface SessionInput {
  readonly cpoTransactionId: string;
  readonly marketArea: string;
  readonly status: SessionStatus;
  readonly startMs: number;
  readonly endMs: number | null;
  /** Nanoseconds below the millisecond of start and end as sent (0..999999); none is 0. */
  readonly startSubMsNs?: number;
  readonly endSubMsNs?: number;
  /**
   * At most one of resourceId and readings is set. Neither: the session's readings are
   * appended one at a time (appendReading, session_readings: a charger session's).
   */
  readonly resourceId: string | null;
  readonly readings: readonly StoredReading[] | null;
}

export interface SessionRecord extends SessionInput {
  readonly startSubMsNs: number;
  readonly endSubMsNs: number;
  readonly cdrId: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  readonly lastUpdatedMs: number;
  readonly totalCostExclVat: number | null;
  readonly currency: string | null;
  readonly readingCount: number | null;
}

interface Row {
  cpo_transaction_id: string;
  cdr_id: string;
  market_area: string;
  status: SessionStatus;
  start_ms: number;
  end_ms: number | null;
  start_sub_ms_ns: number;
  end_sub_ms_ns: number;
  resource_id: string | null;
  readings_json: string | null;
  content_sha256: string;
  created_at_ms: number;
  updated_at_ms: number;
  total_cost_excl_vat: number | null;
  currency: string | null;
  last_updated_ms: number;
  reading_count: number | null;
}

export type UpsertOutcome = 'created' | 'updated' | 'unchanged';

function readingsJson(readings: readonly StoredReading[] | null): string | null {
  return readings === null ? null : JSON.stringify(readings.map((r) => [r.timestampMs, r.energyKwh]));
}

function contentHash(s: SessionInput, json: string | null): string {
  const fields: unknown[] = [s.marketArea, s.status, s.startMs, s.endMs, s.resourceId];
  // Only when present, so sessions stored before these digits were kept hash as they did.
  const startSubMsNs = s.startSubMsNs ?? 0;
  const endSubMsNs = s.endSubMsNs ?? 0;
  if (startSubMsNs !== 0 || endSubMsNs !== 0) fields.push(startSubMsNs, endSubMsNs);
  return createHash('sha256')
    .update(JSON.stringify(fields))
    .update('\n')
    .update(json ?? '')
    .digest('hex');
}

/** `appended`: the session's rows of session_readings, when it keeps its readings there and they were asked for. */
function toRecord(row: Row, withReadings: boolean, appended: readonly StoredReading[] | null = null): SessionRecord {
  const parsed = withReadings && row.readings_json !== null ? (JSON.parse(row.readings_json) as Array<[number, number]>) : null;
  return {
    cpoTransactionId: row.cpo_transaction_id,
    cdrId: row.cdr_id,
    marketArea: row.market_area,
    status: row.status,
    startMs: row.start_ms,
    endMs: row.end_ms,
    startSubMsNs: row.start_sub_ms_ns,
    endSubMsNs: row.end_sub_ms_ns,
    resourceId: row.resource_id,
    readings: appended ?? (parsed ? parsed.map(([t, e]) => ({ timestampMs: t, energyKwh: e })) : null),
    readingCount: row.reading_count,
    createdAtMs: row.created_at_ms,
    updatedAtMs: row.updated_at_ms,
    lastUpdatedMs: row.last_updated_ms,
    totalCostExclVat: row.total_cost_excl_vat,
    currency: row.currency,
  };
}

export class SessionStore {
  private readonly stmts;
  private readonly meterReadings: MeterReadings;

  constructor(private readonly db: Db) {
    this.meterReadings = new MeterReadings(db);
    this.stmts = {
      get: db.prepare<[string], Row>(
        `SELECT *, CASE WHEN readings_json IS NOT NULL THEN json_array_length(readings_json)
                        WHEN resource_id IS NULL THEN (SELECT count(*) FROM session_readings r WHERE r.cpo_transaction_id = sessions.cpo_transaction_id) END AS reading_count
         FROM sessions WHERE cpo_transaction_id = ?`,
      ),
      appended: db.prepare<[string], { sampled_at_ms: number; energy_kwh: number }>('SELECT sampled_at_ms, energy_kwh FROM session_readings WHERE cpo_transaction_id = ? ORDER BY sampled_at_ms'),
      // Only a new instant or a different value counts as a change.
      append: db.prepare(
        `INSERT INTO session_readings (cpo_transaction_id, sampled_at_ms, energy_kwh) VALUES (?, ?, ?)
         ON CONFLICT (cpo_transaction_id, sampled_at_ms) DO UPDATE SET energy_kwh = excluded.energy_kwh WHERE energy_kwh <> excluded.energy_kwh`,
      ),
      deleteReading: db.prepare('DELETE FROM session_readings WHERE cpo_transaction_id = ? AND sampled_at_ms = ?'),
      // As an update of the content: the price goes, last_updated moves (never backwards).
      touch: db.prepare(
        `UPDATE sessions SET updated_at_ms = @now, last_updated_ms = max(@now, last_updated_ms), total_cost_excl_vat = NULL, currency = NULL
         WHERE cpo_transaction_id = @id`,
      ),
      insert: db.prepare(
        `INSERT INTO sessions (cpo_transaction_id, cdr_id, market_area, status, start_ms, end_ms, start_sub_ms_ns, end_sub_ms_ns, resource_id, readings_json, content_sha256, created_at_ms, updated_at_ms, last_updated_ms)
         VALUES (@id, @cdr, @market, @status, @start, @end, @startSubMsNs, @endSubMsNs, @resource, @readings, @hash, @now, @now, @now)`,
      ),
      // The stored price goes with the old content: the next pricing of the new content is
      // then its first, so it does not move last_updated past what this PUT answered.
      update: db.prepare(
        `UPDATE sessions SET market_area = @market, status = @status, start_ms = @start, end_ms = @end, start_sub_ms_ns = @startSubMsNs,
           end_sub_ms_ns = @endSubMsNs, resource_id = @resource, readings_json = @readings, content_sha256 = @hash, updated_at_ms = @now,
           last_updated_ms = @now, total_cost_excl_vat = NULL, currency = NULL
         WHERE cpo_transaction_id = @id`,
      ),
      movedTo: db.prepare<[string], { new_id: string }>('SELECT new_id FROM session_id_moves WHERE old_id = ?'),
      pricesChanged: db.prepare(
        `UPDATE sessions SET last_updated_ms = max(@now, last_updated_ms)
         WHERE market_area = @market AND start_ms < @to AND coalesce(end_ms, start_ms) >= @from AND last_updated_ms < @now`,
      ),
    };
  }

  /** The session, with its readings when `withReadings`. */
  get(cpoTransactionId: string, withReadings = false): SessionRecord | undefined {
    const row = this.stmts.get.get(cpoTransactionId);
    if (!row) return undefined;
    const appended = withReadings && row.readings_json === null && row.resource_id === null
      ? this.stmts.appended.all(cpoTransactionId).map((r) => ({ timestampMs: r.sampled_at_ms, energyKwh: r.energy_kwh }))
      : null;
    return toRecord(row, withReadings, appended);
  }

  /**
   * Sets the session's reading at one instant (a session stored with neither readings nor
   * resource_id). Returns whether it changed anything: a new instant or another value.
   * The caller touches the session once per message (touch) when something changed.
   */
  appendReading(cpoTransactionId: string, reading: StoredReading): boolean {
    return this.stmts.append.run(cpoTransactionId, reading.timestampMs, reading.energyKwh).changes > 0;
  }

  /** Removes the session's reading at one instant; whether there was one. The caller touches the session. */
  deleteReading(cpoTransactionId: string, timestampMs: number): boolean {
    return this.stmts.deleteReading.run(cpoTransactionId, timestampMs).changes > 0;
  }

  /** The session's readings changed: its stored price goes and last_updated moves, as an upsert with new content does. */
  touch(cpoTransactionId: string, nowMs: number): void {
    this.stmts.touch.run({ id: cpoTransactionId, now: nowMs });
  }

  /** Idempotent: the same content again changes nothing (not even last_updated). */
  upsert(input: SessionInput, nowMs: number): { outcome: UpsertOutcome; record: SessionRecord } {
    return this.db.transaction(() => {
      const json = readingsJson(input.readings);
      const hash = contentHash(input, json);
      const existing = this.stmts.get.get(input.cpoTransactionId);
      const params = {
        id: input.cpoTransactionId,
        market: input.marketArea,
        status: input.status,
        start: input.startMs,
        end: input.endMs,
        startSubMsNs: input.startSubMsNs ?? 0,
        endSubMsNs: input.endSubMsNs ?? 0,
        resource: input.resourceId,
        readings: json,
        hash,
        now: nowMs,
      };
      let outcome: UpsertOutcome;
      if (!existing) {
        this.stmts.insert.run({ ...params, cdr: randomUUID() });
        outcome = 'created';
      } else if (existing.content_sha256 === hash) {
        outcome = 'unchanged';
      } else {
        // last_updated never goes backwards, even if the clock did.
        this.stmts.update.run({ ...params, now: Math.max(nowMs, existing.last_updated_ms) });
        outcome = 'updated';
      }
      return { outcome, record: toRecord(this.stmts.get.get(input.cpoTransactionId)!, false) };
    })();
  }

  /** Where a charger session stored under an old id went (migration 150), or undefined. */
  movedTo(oldId: string): string | undefined {
    return this.stmts.movedTo.get(oldId)?.new_id;
  }

  /**
   * Prices of `marketArea` over [fromMs, toMs) changed (a correction or replacement): the
   * price record of every session over them is another now, so its last_updated moves
   * (never backwards). Runs in the merge's transaction.
   */
  pricesChanged(marketArea: string, fromMs: number, toMs: number, nowMs: number): number {
    return this.stmts.pricesChanged.run({ market: marketArea, from: fromMs, to: toMs, now: nowMs }).changes;
  }

  /**
   * Readings a local meter stored between start and end (inclusive), and the nearest one
   * before the start and after the end however far, as cumulative kWh, oldest first.
   */
  localMeterReadingsAround(resourceId: string, startMs: number, endMs: number): StoredReading[] {
    const rows = this.db.transaction(() => {
      const before = this.meterReadings.energyBefore(resourceId, startMs);
      const inside = this.meterReadings.energyBetween(resourceId, startMs, endMs);
      const after = this.meterReadings.energyAfter(resourceId, endMs);
      return [...(before ? [before] : []), ...inside, ...(after ? [after] : [])];
    })();
    return rows.map((r) => ({ timestampMs: r.sampledAtMs, energyKwh: r.energyImportWh / 1000 }));
  }
}
