// The map from an OCPP 2.0.1 station's transaction id (a string) to the integer id of its
// ocpp_transactions row (migration 260): persistence only, run inside the handler's unit.
import type { Db } from './db.js';

export interface Ocpp201TransactionRef {
  readonly transactionId: number;
  readonly evseId: number;
  readonly lastSeqNo: number;
  /** Its Started event had no energy register: meter_start_wh waits for the first value. */
  readonly meterStartPending: boolean;
}

export class Ocpp201TransactionStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      get: db.prepare<[string, string], { transaction_id: number; evse_id: number; last_seq_no: number; meter_start_pending: number }>(
        'SELECT transaction_id, evse_id, last_seq_no, meter_start_pending FROM ocpp201_transactions WHERE charge_point_id = ? AND charger_transaction_id = ?',
      ),
      byId: db.prepare<[number], { charger_transaction_id: string; charge_point_id: string }>('SELECT charger_transaction_id, charge_point_id FROM ocpp201_transactions WHERE transaction_id = ?'),
      insert: db.prepare('INSERT INTO ocpp201_transactions (charge_point_id, charger_transaction_id, transaction_id, evse_id, last_seq_no, meter_start_pending) VALUES (?, ?, ?, ?, ?, ?)'),
      meterStartKnown: db.prepare('UPDATE ocpp201_transactions SET meter_start_pending = 0 WHERE transaction_id = ?'),
      seqNo: db.prepare('UPDATE ocpp201_transactions SET last_seq_no = max(last_seq_no, ?) WHERE transaction_id = ?'),
      version: db.prepare(
        `INSERT INTO ocpp_charge_points (charge_point_id, ocpp_version) VALUES (?, ?)
         ON CONFLICT (charge_point_id) DO UPDATE SET ocpp_version = excluded.ocpp_version`,
      ),
      versionOf: db.prepare<[string], { ocpp_version: string | null }>('SELECT ocpp_version FROM ocpp_charge_points WHERE charge_point_id = ?'),
    };
  }

  get(chargePointId: string, chargerTransactionId: string): Ocpp201TransactionRef | null {
    const r = this.stmts.get.get(chargePointId, chargerTransactionId);
    return r ? { transactionId: r.transaction_id, evseId: r.evse_id, lastSeqNo: r.last_seq_no, meterStartPending: r.meter_start_pending === 1 } : null;
  }

  /** The station's own id of a transaction (null: a 1.6 transaction, or none). */
  chargerTransactionId(transactionId: number): string | null {
    return this.stmts.byId.get(transactionId)?.charger_transaction_id ?? null;
  }

  /** The station and its own id of a transaction of ours (null: a 1.6 transaction, or none). */
  chargerTransaction(transactionId: number): { readonly chargePointId: string; readonly chargerTransactionId: string } | null {
    const r = this.stmts.byId.get(transactionId);
    return r ? { chargePointId: r.charge_point_id, chargerTransactionId: r.charger_transaction_id } : null;
  }

  insert(chargePointId: string, chargerTransactionId: string, transactionId: number, evseId: number, seqNo: number, meterStartPending: boolean): void {
    this.stmts.insert.run(chargePointId, chargerTransactionId, transactionId, evseId, seqNo, meterStartPending ? 1 : 0);
  }

  meterStartKnown(transactionId: number): void {
    this.stmts.meterStartKnown.run(transactionId);
  }

  seenSeqNo(transactionId: number, seqNo: number): void {
    this.stmts.seqNo.run(seqNo, transactionId);
  }

  /** The subprotocol of the charger's last connection ('1.6', '2.0.1'). */
  recordVersion(chargePointId: string, version: '1.6' | '2.0.1'): void {
    this.stmts.version.run(chargePointId, version);
  }

  versionOf(chargePointId: string): '1.6' | '2.0.1' | null {
    const v = this.stmts.versionOf.get(chargePointId)?.ocpp_version;
    return v === '1.6' || v === '2.0.1' ? v : null;
  }
}
