// The deletes behind the retention of sessions and charger data (ops/retention): each
// step removes at most `limit` rows of one kind and says how many went. Which cut-offs
// apply is the caller's (config); this only persists.
import type { Db } from './db.js';

export interface RetentionCutoffs {
  /** Raw charger values of transactions whose stop was stored before this (their session is final). */
  readonly settledStopBeforeMs: number;
  /** Raw charger values of no transaction received before this. */
  readonly looseValuesBeforeMs: number;
  /** Completed sessions and stopped transactions that ended (and last changed) before this. */
  readonly endedBeforeMs: number;
}

export class SessionRetentionStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      // Transactions whose session is final and that still have raw values (index ocpp_transactions_stopped, then ocpp_meter_values_tx).
      settled: db.prepare<[number, number], { transaction_id: number }>(
        `SELECT transaction_id FROM ocpp_transactions t WHERE stopped_at_ms IS NOT NULL AND stop_received_at_ms < ?
           AND EXISTS (SELECT 1 FROM ocpp_meter_values v WHERE v.transaction_id = t.transaction_id) LIMIT ?`,
      ),
      valuesOf: db.prepare<[number, number]>('DELETE FROM ocpp_meter_values WHERE rowid IN (SELECT rowid FROM ocpp_meter_values WHERE transaction_id = ? LIMIT ?)'),
      loose: db.prepare<[number, number]>('DELETE FROM ocpp_meter_values WHERE rowid IN (SELECT rowid FROM ocpp_meter_values WHERE transaction_id IS NULL AND received_at_ms < ? LIMIT ?)'),
      // Signed values of no transaction go as their unsigned neighbours do (index ocpp_signed_values_loose).
      looseSigned: db.prepare<[number, number]>('DELETE FROM ocpp_signed_values WHERE rowid IN (SELECT rowid FROM ocpp_signed_values WHERE transaction_id IS NULL AND received_at_ms < ? LIMIT ?)'),
      endedSessions: db.prepare<[number, number, number], { cpo_transaction_id: string }>(
        "SELECT cpo_transaction_id FROM sessions WHERE status = 'completed' AND end_ms < ? AND last_updated_ms < ? LIMIT ?",
      ),
      sessionReadings: db.prepare<[string]>('DELETE FROM session_readings WHERE cpo_transaction_id = ?'),
      sessionMoves: db.prepare<[string]>('DELETE FROM session_id_moves WHERE new_id = ?'),
      session: db.prepare<[string]>('DELETE FROM sessions WHERE cpo_transaction_id = ?'),
      endedTransactions: db.prepare<[number, number, number], { transaction_id: number }>(
        'SELECT transaction_id FROM ocpp_transactions WHERE stopped_at_ms IS NOT NULL AND stop_received_at_ms < ? AND stopped_at_ms < ? LIMIT ?',
      ),
      unthinned: db.prepare<[number, number], { transaction_id: number; charge_point_id: string }>(
        'SELECT transaction_id, charge_point_id FROM ocpp_transactions WHERE stopped_at_ms IS NOT NULL AND stop_received_at_ms < ? AND readings_thinned = 0 LIMIT ?',
      ),
      thinned: db.prepare<[number]>('UPDATE ocpp_transactions SET readings_thinned = 1 WHERE transaction_id = ?'),
      outcome: db.prepare<[number]>('DELETE FROM ocpp_session_outcomes WHERE transaction_id = ?'),
      plan: db.prepare<[number]>('DELETE FROM ocpp_transaction_plans WHERE transaction_id = ?'),
      transactionValues: db.prepare<[number]>('DELETE FROM ocpp_meter_values WHERE transaction_id = ?'),
      // Signed values stay as long as their transaction (billing disputes), then go with it.
      transactionSigned: db.prepare<[number]>('DELETE FROM ocpp_signed_values WHERE transaction_id = ?'),
      transaction: db.prepare<[number]>('DELETE FROM ocpp_transactions WHERE transaction_id = ?'),
      // Security events go as the sessions of their time do (index ocpp_security_events_received).
      securityEvents: db.prepare<[number, number]>('DELETE FROM ocpp_security_events WHERE rowid IN (SELECT rowid FROM ocpp_security_events WHERE received_at_ms < ? LIMIT ?)'),
    };
  }

  /** Raw values of settled transactions; rows deleted. */
  purgeSettledValues(c: RetentionCutoffs, limit: number): number {
    return this.db.transaction(() => {
      let n = 0;
      for (const { transaction_id } of this.stmts.settled.all(c.settledStopBeforeMs, limit)) {
        n += this.stmts.valuesOf.run(transaction_id, limit - n).changes;
        if (n >= limit) break;
      }
      return n;
    })();
  }

  /** Settled charger transactions whose session readings were not thinned yet. */
  unthinned(c: RetentionCutoffs, limit: number): Array<{ transactionId: number; chargePointId: string }> {
    return this.stmts.unthinned.all(c.settledStopBeforeMs, limit).map((r) => ({ transactionId: r.transaction_id, chargePointId: r.charge_point_id }));
  }

  markThinned(transactionId: number): void {
    this.stmts.thinned.run(transactionId);
  }

  /** Runs `work` in one transaction. */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  /** Raw values of no transaction; rows deleted. */
  purgeLooseValues(c: RetentionCutoffs, limit: number): number {
    const n = this.stmts.loose.run(c.looseValuesBeforeMs, limit).changes;
    return n + (n < limit ? this.stmts.looseSigned.run(c.looseValuesBeforeMs, limit - n).changes : 0);
  }

  /** Completed sessions past the retention, with their readings; sessions deleted. */
  purgeEndedSessions(c: RetentionCutoffs, limit: number): number {
    return this.db.transaction(() => {
      const ended = this.stmts.endedSessions.all(c.endedBeforeMs, c.endedBeforeMs, limit);
      for (const { cpo_transaction_id: id } of ended) {
        this.stmts.sessionReadings.run(id);
        this.stmts.sessionMoves.run(id);
        this.stmts.session.run(id);
      }
      return ended.length;
    })();
  }

  /** Stopped transactions past the retention, with what was recorded of them; transactions deleted. */
  purgeEndedTransactions(c: RetentionCutoffs, limit: number): number {
    return this.db.transaction(() => {
      const ended = this.stmts.endedTransactions.all(c.endedBeforeMs, c.endedBeforeMs, limit);
      for (const { transaction_id: id } of ended) {
        this.stmts.outcome.run(id);
        this.stmts.plan.run(id);
        this.stmts.transactionValues.run(id);
        this.stmts.transactionSigned.run(id);
        this.stmts.transaction.run(id);
      }
      return ended.length;
    })();
  }

  /** Security events stored before the sessions' retention (store/security-events.ts); rows deleted. */
  purgeSecurityEvents(c: RetentionCutoffs, limit: number): number {
    return this.stmts.securityEvents.run(c.endedBeforeMs, limit).changes;
  }
}
