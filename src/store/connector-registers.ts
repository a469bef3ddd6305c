// A connector's open transaction and the values of one measurand its charger stored
// (ocpp_transactions, ocpp_meter_values, migration 090), for what the charger delivered
// (ocpp/connector-delivery.ts applies the register rule). Reads only, and only the values
// around the instants asked about (through the (transaction, measurand, time) index), so the
// cost per MeterValues does not grow with the session's length.
import type { Db } from './db.js';

export interface OpenTransactionRow {
  readonly transactionId: number;
  readonly startedAtMs: number;
  readonly meterStartWh: number;
}

/** One stored sampled value of a measurand. */
export interface StoredValueRow {
  readonly sampledAtMs: number;
  readonly phase: string;
  readonly location: string;
  readonly value: number;
  readonly unit: string;
}

interface TxRow {
  transaction_id: number;
  started_at_ms: number;
  meter_start_wh: number;
}

export class ConnectorRegisterStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      open: db.prepare<[string, number], TxRow>(
        'SELECT transaction_id, started_at_ms, meter_start_wh FROM ocpp_transactions WHERE charge_point_id = ? AND connector_id = ? AND stopped_at_ms IS NULL ORDER BY transaction_id DESC LIMIT 1',
      ),
      // The earliest of the few instants at or before atMs / the latest of the few at or after it.
      fromBefore: db
        .prepare<{ tx: number; measurand: string; at: number; n: number }, number | null>(
          `SELECT min(sampled_at_ms) FROM (SELECT DISTINCT sampled_at_ms FROM ocpp_meter_values
           WHERE transaction_id = @tx AND measurand = @measurand AND sampled_at_ms <= @at ORDER BY sampled_at_ms DESC LIMIT @n)`,
        )
        .pluck(),
      toAfter: db
        .prepare<{ tx: number; measurand: string; at: number; n: number }, number | null>(
          `SELECT max(sampled_at_ms) FROM (SELECT DISTINCT sampled_at_ms FROM ocpp_meter_values
           WHERE transaction_id = @tx AND measurand = @measurand AND sampled_at_ms >= @at ORDER BY sampled_at_ms LIMIT @n)`,
        )
        .pluck(),
      values: db.prepare<[number, string, number, number], { sampled_at_ms: number; phase: string; location: string; value: number; unit: string }>(
        'SELECT sampled_at_ms, phase, location, value, unit FROM ocpp_meter_values WHERE transaction_id = ? AND measurand = ? AND sampled_at_ms BETWEEN ? AND ? ORDER BY sampled_at_ms',
      ),
    };
  }

  /** The connector's open transaction (the newest when several are), or null. */
  openTransaction(chargePointId: string, connectorId: number): OpenTransactionRow | null {
    const tx = this.stmts.open.get(chargePointId, connectorId);
    return tx ? { transactionId: tx.transaction_id, startedAtMs: tx.started_at_ms, meterStartWh: tx.meter_start_wh } : null;
  }

  /**
   * Every value of `measurand` of the `instantsEachSide` instants on each side of each of
   * atMs (whole instants: all their phases and locations), oldest first.
   */
  valuesAround(transactionId: number, measurand: string, atMs: readonly number[], instantsEachSide: number): StoredValueRow[] {
    const ranges: Array<[number, number]> = [];
    for (const at of atMs) {
      const q = { tx: transactionId, measurand, at, n: instantsEachSide };
      const lo = this.stmts.fromBefore.get(q) ?? at;
      const hi = this.stmts.toAfter.get(q) ?? at;
      ranges.push([lo, hi]);
    }
    ranges.sort((a, b) => a[0] - b[0]);
    const merged: Array<[number, number]> = [];
    for (const r of ranges) {
      const last = merged[merged.length - 1];
      if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
      else merged.push([r[0], r[1]]);
    }
    return merged.flatMap(([lo, hi]) =>
      this.stmts.values.all(transactionId, measurand, lo, hi).map((r) => ({ sampledAtMs: r.sampled_at_ms, phase: r.phase, location: r.location, value: r.value, unit: r.unit })),
    );
  }
}
