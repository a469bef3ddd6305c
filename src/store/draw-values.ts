// The current and power values a connector's charger measured (Current.Import,
// Power.Active.Import at the outlet) of its open transaction (ocpp_meter_values, migration
// 090), as stored rows: planning/draw-values.ts turns them into what a car draws and what a
// connector draws now (planning/connector-draws.ts composes the two).
import type { Db } from './db.js';

/** One stored current or power value. */
export interface DrawValueRow {
  readonly sampledAtMs: number;
  readonly measurand: string;
  readonly phase: string;
  readonly value: number;
  readonly unit: string;
}

interface ValueRow {
  sampled_at_ms: number;
  measurand: string;
  phase: string;
  value: number;
  unit: string;
}

const toRow = (r: ValueRow): DrawValueRow => ({ sampledAtMs: r.sampled_at_ms, measurand: r.measurand, phase: r.phase, value: r.value, unit: r.unit });

export class DrawValueStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      // A transaction's current and power values in a time range, by instant (index ocpp_meter_values_tx).
      range: db.prepare<[number, number, number], ValueRow>(
        `SELECT sampled_at_ms, measurand, phase, value, unit FROM ocpp_meter_values
         WHERE transaction_id = ? AND measurand IN ('Current.Import', 'Power.Active.Import') AND sampled_at_ms >= ? AND sampled_at_ms <= ? AND location IN ('', 'Outlet')
         ORDER BY sampled_at_ms`,
      ),
      openAll: db.prepare<[], { charge_point_id: string; connector_id: number; transaction_id: number }>('SELECT charge_point_id, connector_id, max(transaction_id) AS transaction_id FROM ocpp_transactions WHERE stopped_at_ms IS NULL GROUP BY charge_point_id, connector_id'),
      open: db.prepare<[string, number], { transaction_id: number }>('SELECT transaction_id FROM ocpp_transactions WHERE charge_point_id = ? AND connector_id = ? AND stopped_at_ms IS NULL ORDER BY transaction_id DESC LIMIT 1'),
      // The newest instant with a current or power value of the connector's open transaction, then its values (index ocpp_meter_values_tx).
      latest: db.prepare<[string, number], ValueRow>(
        `WITH tx AS (SELECT transaction_id FROM ocpp_transactions WHERE charge_point_id = ? AND connector_id = ? AND stopped_at_ms IS NULL ORDER BY transaction_id DESC LIMIT 1),
              newest AS (SELECT max(v.sampled_at_ms) AS at FROM ocpp_meter_values v, tx
                         WHERE v.transaction_id = tx.transaction_id AND v.measurand IN ('Current.Import', 'Power.Active.Import') AND v.location IN ('', 'Outlet'))
         SELECT v.sampled_at_ms, v.measurand, v.phase, v.value, v.unit FROM ocpp_meter_values v, tx, newest
         WHERE v.transaction_id = tx.transaction_id AND v.sampled_at_ms = newest.at AND v.measurand IN ('Current.Import', 'Power.Active.Import') AND v.location IN ('', 'Outlet')`,
      ),
    };
  }

  /** The transaction's current and power values from fromMs to toMs, oldest first. */
  valuesBetween(transactionId: number, fromMs: number, toMs: number): DrawValueRow[] {
    return this.stmts.range.all(transactionId, fromMs, toMs).map(toRow);
  }

  /** The current and power values of the newest instant that has any, of the connector's open transaction (none without one). */
  newestValues(chargePointId: string, connectorId: number): DrawValueRow[] {
    return this.stmts.latest.all(chargePointId, connectorId).map(toRow);
  }

  /** Every connector with an open transaction (a car plugged in), with its newest one. */
  openConnectors(): Array<{ chargePointId: string; connectorId: number; transactionId: number }> {
    return this.stmts.openAll.all().map((r) => ({ chargePointId: r.charge_point_id, connectorId: r.connector_id, transactionId: r.transaction_id }));
  }

  /** The connector's open transaction (a car plugged in), or null. */
  openTransactionId(chargePointId: string, connectorId: number): number | null {
    return this.stmts.open.get(chargePointId, connectorId)?.transaction_id ?? null;
  }
}
