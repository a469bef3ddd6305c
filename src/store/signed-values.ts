// The signed meter values chargers send (migration 240, issue 32): kept raw with their
// transaction as long as it is kept, at most MAX_SIGNED_PER_TRANSACTION per transaction
// (the begin and end always find room: periodic ones beyond the bound are dropped and
// counted by the caller). Persistence only; what they prove is signed-meter/.
import type { Db } from './db.js';
import type { SignedValue } from '../signed-meter/session-verification.js';

export interface SignedValueRow {
  readonly sampledAtMs: number;
  /** OCPP ReadingContext ('' when none). */
  readonly context: string;
  readonly measurand: string;
  readonly value: string;
  /** The key the station sent with it (2.0.1 SignedMeterValueType.publicKey, as sent), never used to verify; absent or null: none. */
  readonly stationPublicKey?: string | null;
}

/** Per transaction; a charger signing every 15 min fills it after ~2 days of one session. */
export const MAX_SIGNED_PER_TRANSACTION = 200;
const EDGE_CONTEXTS = new Set(['Transaction.Begin', 'Transaction.End']);

export class SignedValueStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      insert: db.prepare(
        `INSERT OR IGNORE INTO ocpp_signed_values (charge_point_id, connector_id, transaction_id, sampled_at_ms, context, measurand, value, received_at_ms, after_cut_off, station_public_key)
         VALUES (@chargePointId, @connectorId, @transactionId, @sampledAtMs, @context, @measurand, @value, @now, @afterCutOff, @stationPublicKey)`,
      ),
      count: db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM ocpp_signed_values WHERE transaction_id = ?'),
      ofTransaction: db.prepare<[number], { context: string; sampled_at_ms: number; value: string; station_public_key: string | null }>(
        'SELECT context, sampled_at_ms, value, station_public_key FROM ocpp_signed_values WHERE transaction_id = ? AND after_cut_off = 0 ORDER BY rowid',
      ),
      lastStopped: db.prepare<[string], { transaction_id: number }>(
        'SELECT transaction_id FROM ocpp_transactions WHERE charge_point_id = ? AND stopped_at_ms IS NOT NULL ORDER BY stop_received_at_ms DESC, transaction_id DESC LIMIT 1',
      ),
    };
  }

  /**
   * Stores the values (a repeat adds nothing). `afterCutOff`: received past the late-value
   * cut-off, kept but not carried. Returns how many were new and how many found no room.
   */
  insert(chargePointId: string, connectorId: number, transactionId: number | null, rows: readonly SignedValueRow[], nowMs: number, afterCutOff = false): { stored: number; dropped: number } {
    let stored = 0;
    let dropped = 0;
    for (const r of rows) {
      if (transactionId !== null && !EDGE_CONTEXTS.has(r.context) && this.stmts.count.get(transactionId)!.n >= MAX_SIGNED_PER_TRANSACTION) {
        dropped++;
        continue;
      }
      stored += this.stmts.insert.run({ chargePointId, connectorId, transactionId, ...r, stationPublicKey: r.stationPublicKey ?? null, now: nowMs, afterCutOff: afterCutOff ? 1 : 0 }).changes;
    }
    return { stored, dropped };
  }

  /** The transaction's values the cdr carries, in the order received. */
  ofTransaction(transactionId: number): SignedValue[] {
    return this.stmts.ofTransaction.all(transactionId).map((r) => ({ context: r.context, sampledAtMs: r.sampled_at_ms, value: r.value, stationPublicKey: r.station_public_key }));
  }

  /** The charger's most recently stopped transaction (by when its stop was stored), or null. */
  lastStoppedTransaction(chargePointId: string): number | null {
    return this.stmts.lastStopped.get(chargePointId)?.transaction_id ?? null;
  }
}
