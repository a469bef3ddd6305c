// The last charging profile sent for each connector's plan and the charger's answer
// (migration 120), and the clears of the profiles the gateway set (migration 132):
// written by the OCPP central system, read by the plan's GET.
import type { Db } from './db.js';

export interface SentChargingProfile {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly purpose: 'TxProfile' | 'TxDefaultProfile' | 'ChargePointMaxProfile';
  readonly transactionId: number | null;
  readonly chargingProfileId: number;
  readonly plannedAtMs: number;
  readonly sentAtMs: number;
  /** The charger's answer (Accepted, Rejected, NotSupported), or 'error' when none came. */
  readonly status: string;
  readonly error: string | null;
  readonly periods: number;
  readonly requestJson: string;
}

interface Row {
  charge_point_id: string;
  connector_id: number;
  purpose: 'TxProfile' | 'TxDefaultProfile' | 'ChargePointMaxProfile';
  transaction_id: number | null;
  charging_profile_id: number;
  planned_at_ms: number;
  sent_at_ms: number;
  status: string;
  error: string | null;
  periods: number;
  request_json: string;
}

/** A charger transaction that ran under a plan its charger accepted (migration 121). */
export interface TransactionPlan {
  readonly transactionId: number;
  readonly plannedAtMs: number;
  readonly energyNeededWh: number;
  readonly plannedEnergyWh: number;
  readonly expectedCost: number;
  readonly immediateCost: number;
}

export interface PlannedSession extends TransactionPlan {
  readonly connectorId: number;
  readonly startedAtMs: number;
  readonly stoppedAtMs: number | null;
}

interface TransactionPlanRow {
  transaction_id: number;
  planned_at_ms: number;
  energy_needed_wh: number;
  planned_energy_wh: number;
  expected_cost: number;
  immediate_cost: number;
}

const toTransactionPlan = (r: TransactionPlanRow): TransactionPlan => ({
  transactionId: r.transaction_id,
  plannedAtMs: r.planned_at_ms,
  energyNeededWh: r.energy_needed_wh,
  plannedEnergyWh: r.planned_energy_wh,
  expectedCost: r.expected_cost,
  immediateCost: r.immediate_cost,
});

/** A ClearChargingProfile for a profile id the gateway used on a connector, and the charger's answer. */
export interface ProfileClear {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly chargingProfileId: number;
  readonly reason: 'target-deleted' | 'transaction-stopped';
  readonly requestedAtMs: number;
  /** null while pending (the charger was not connected). */
  readonly sentAtMs: number | null;
  /** pending, Accepted, Unknown, or error (no answer). */
  readonly status: string;
  readonly error: string | null;
}

interface ClearRow {
  charge_point_id: string;
  connector_id: number;
  charging_profile_id: number;
  reason: ProfileClear['reason'];
  requested_at_ms: number;
  sent_at_ms: number | null;
  status: string;
  error: string | null;
}

const toClear = (r: ClearRow): ProfileClear => ({
  chargePointId: r.charge_point_id,
  connectorId: r.connector_id,
  chargingProfileId: r.charging_profile_id,
  reason: r.reason,
  requestedAtMs: r.requested_at_ms,
  sentAtMs: r.sent_at_ms,
  status: r.status,
  error: r.error,
});

export class ChargingProfileStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      put: db.prepare(
        `INSERT OR REPLACE INTO ocpp_charging_profiles (charge_point_id, connector_id, purpose, transaction_id, charging_profile_id, planned_at_ms, sent_at_ms, status, error, periods, request_json)
         VALUES (@charge_point_id, @connector_id, @purpose, @transaction_id, @charging_profile_id, @planned_at_ms, @sent_at_ms, @status, @error, @periods, @request_json)`,
      ),
      get: db.prepare<[string, number], Row>('SELECT * FROM ocpp_charging_profiles WHERE charge_point_id = ? AND connector_id = ?'),
      putTxPlan: db.prepare(
        `INSERT OR REPLACE INTO ocpp_transaction_plans (transaction_id, planned_at_ms, energy_needed_wh, planned_energy_wh, expected_cost, immediate_cost)
         VALUES (@transactionId, @plannedAtMs, @energyNeededWh, @plannedEnergyWh, @expectedCost, @immediateCost)`,
      ),
      txPlan: db.prepare<[number], TransactionPlanRow>(
        'SELECT * FROM ocpp_transaction_plans WHERE transaction_id = ?',
      ),
      planned: db.prepare<[string, number, number], TransactionPlanRow & { connector_id: number; started_at_ms: number; stopped_at_ms: number | null }>(
        `SELECT p.*, t.connector_id, t.started_at_ms, t.stopped_at_ms FROM ocpp_transaction_plans p JOIN ocpp_transactions t USING (transaction_id)
         WHERE t.charge_point_id = ? AND t.connector_id = ? ORDER BY t.transaction_id DESC LIMIT ?`,
      ),
      putClear: db.prepare(
        `INSERT OR REPLACE INTO ocpp_profile_clears (charge_point_id, connector_id, charging_profile_id, reason, requested_at_ms, sent_at_ms, status, error)
         VALUES (@chargePointId, @connectorId, @chargingProfileId, @reason, @requestedAtMs, @sentAtMs, @status, @error)`,
      ),
      // A clear that got no answer (the charger went away mid-call) is sent again.
      pendingClears: db.prepare<[string], ClearRow>("SELECT * FROM ocpp_profile_clears WHERE charge_point_id = ? AND status IN ('pending', 'error') ORDER BY connector_id, charging_profile_id"),
      clears: db.prepare<[string, number], ClearRow>('SELECT * FROM ocpp_profile_clears WHERE charge_point_id = ? AND connector_id = ? ORDER BY charging_profile_id'),
    };
  }

  put(p: SentChargingProfile): void {
    this.stmts.put.run({
      charge_point_id: p.chargePointId,
      connector_id: p.connectorId,
      purpose: p.purpose,
      transaction_id: p.transactionId,
      charging_profile_id: p.chargingProfileId,
      planned_at_ms: p.plannedAtMs,
      sent_at_ms: p.sentAtMs,
      status: p.status,
      error: p.error,
      periods: p.periods,
      request_json: p.requestJson,
    });
  }

  get(chargePointId: string, connectorId: number): SentChargingProfile | undefined {
    const r = this.stmts.get.get(chargePointId, connectorId);
    if (!r) return undefined;
    return {
      chargePointId: r.charge_point_id,
      connectorId: r.connector_id,
      purpose: r.purpose,
      transactionId: r.transaction_id,
      chargingProfileId: r.charging_profile_id,
      plannedAtMs: r.planned_at_ms,
      sentAtMs: r.sent_at_ms,
      status: r.status,
      error: r.error,
      periods: r.periods,
      requestJson: r.request_json,
    };
  }

  /** The transaction ran under this plan (the last one its charger accepted replaces an earlier one). */
  putTransactionPlan(p: TransactionPlan): void {
    this.stmts.putTxPlan.run(p);
  }

  /** The plan the transaction ran under (the last its charger accepted), if any. */
  transactionPlan(transactionId: number): TransactionPlan | undefined {
    const r = this.stmts.txPlan.get(transactionId);
    return r ? toTransactionPlan(r) : undefined;
  }

  /** The connector's transactions that ran under a plan, newest first. */
  plannedSessions(chargePointId: string, connectorId: number, limit: number): PlannedSession[] {
    return this.stmts.planned.all(chargePointId, connectorId, limit).map((r) => ({
      ...toTransactionPlan(r),
      connectorId: r.connector_id,
      startedAtMs: r.started_at_ms,
      stoppedAtMs: r.stopped_at_ms,
    }));
  }

  putClear(c: ProfileClear): void {
    this.stmts.putClear.run(c);
  }

  /** Clears not sent yet (the charger was not connected) or not answered, to send when it connects. */
  pendingClears(chargePointId: string): ProfileClear[] {
    return this.stmts.pendingClears.all(chargePointId).map(toClear);
  }

  /** The connector's clears, by profile id. */
  clears(chargePointId: string, connectorId: number): ProfileClear[] {
    return this.stmts.clears.all(chargePointId, connectorId).map(toClear);
  }
}
