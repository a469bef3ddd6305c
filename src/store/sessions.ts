// Charging sessions received from a charge-point operator, and what their price record
// needs to stay stable: a cdr id fixed at creation, and last_updated that moves only
// when the session's content or its computed price changes.
import { createHash, randomUUID } from 'node:crypto';
import type { EnergyReading } from '../pricing/session-cost.js';
import type { Db } from './db.js';

export type SessionStatus = 'active' | 'completed';

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
  /** Exactly one of resourceId and readings is set. */
  readonly resourceId: string | null;
  readonly readings: readonly EnergyReading[] | null;
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

interface LocalReadingRow {
  sampled_at_ms: number;
  energy_import_wh: number;
}

export type UpsertOutcome = 'created' | 'updated' | 'unchanged';

function readingsJson(readings: readonly EnergyReading[] | null): string | null {
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

function toRecord(row: Row, withReadings: boolean): SessionRecord {
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
    readings: parsed ? parsed.map(([t, e]) => ({ timestampMs: t, energyKwh: e })) : null,
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

  constructor(private readonly db: Db) {
    this.stmts = {
      get: db.prepare<[string], Row>('SELECT *, json_array_length(readings_json) AS reading_count FROM sessions WHERE cpo_transaction_id = ?'),
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
      price: db.prepare('UPDATE sessions SET total_cost_excl_vat = ?, currency = ?, last_updated_ms = ? WHERE cpo_transaction_id = ?'),
      // The readings inside the window, and the nearest one before its start and after its
      // end (the edges are interpolated from them): three range scans on the primary key.
      readingBefore: db.prepare<[string, number], LocalReadingRow>(
        'SELECT sampled_at_ms, energy_import_wh FROM readings WHERE resource_id = ? AND sampled_at_ms < ? AND energy_import_wh IS NOT NULL ORDER BY sampled_at_ms DESC LIMIT 1',
      ),
      readingsBetween: db.prepare<[string, number, number], LocalReadingRow>(
        'SELECT sampled_at_ms, energy_import_wh FROM readings WHERE resource_id = ? AND sampled_at_ms >= ? AND sampled_at_ms <= ? AND energy_import_wh IS NOT NULL ORDER BY sampled_at_ms',
      ),
      readingAfter: db.prepare<[string, number], LocalReadingRow>(
        'SELECT sampled_at_ms, energy_import_wh FROM readings WHERE resource_id = ? AND sampled_at_ms > ? AND energy_import_wh IS NOT NULL ORDER BY sampled_at_ms LIMIT 1',
      ),
    };
  }

  /** The session, with its readings when `withReadings`. */
  get(cpoTransactionId: string, withReadings = false): SessionRecord | undefined {
    const row = this.stmts.get.get(cpoTransactionId);
    return row ? toRecord(row, withReadings) : undefined;
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

  /** Stores a computed price; last_updated moves only if the price differs from the stored one. */
  recordPrice(cpoTransactionId: string, totalCostExclVat: number, currency: string, nowMs: number): number {
    return this.db.transaction(() => {
      const row = this.stmts.get.get(cpoTransactionId)!;
      if (row.total_cost_excl_vat === totalCostExclVat && row.currency === currency) return row.last_updated_ms;
      // The first price of a session is not a change of the record the client has seen.
      const moved = row.total_cost_excl_vat === null ? row.last_updated_ms : Math.max(nowMs, row.last_updated_ms);
      this.stmts.price.run(totalCostExclVat, currency, moved, cpoTransactionId);
      return moved;
    })();
  }

  /**
   * Readings a local meter stored between start and end (inclusive), and the nearest one
   * before the start and after the end however far, as cumulative kWh, oldest first.
   */
  localMeterReadingsAround(resourceId: string, startMs: number, endMs: number): EnergyReading[] {
    const rows = this.db.transaction(() => {
      const before = this.stmts.readingBefore.get(resourceId, startMs);
      const inside = this.stmts.readingsBetween.all(resourceId, startMs, endMs);
      const after = this.stmts.readingAfter.get(resourceId, endMs);
      return [...(before ? [before] : []), ...inside, ...(after ? [after] : [])];
    })();
    return rows.map((r) => ({ timestampMs: r.sampled_at_ms, energyKwh: r.energy_import_wh / 1000 }));
  }
}
