// The last charging profile sent for each connector's plan and the charger's answer
// (migration 120): written by the OCPP central system, read by the plan's GET.
import type { Db } from './db.js';

export interface SentChargingProfile {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly purpose: 'TxProfile' | 'TxDefaultProfile';
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
  purpose: 'TxProfile' | 'TxDefaultProfile';
  transaction_id: number | null;
  charging_profile_id: number;
  planned_at_ms: number;
  sent_at_ms: number;
  status: string;
  error: string | null;
  periods: number;
  request_json: string;
}

export class ChargingProfileStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      put: db.prepare(
        `INSERT OR REPLACE INTO ocpp_charging_profiles (charge_point_id, connector_id, purpose, transaction_id, charging_profile_id, planned_at_ms, sent_at_ms, status, error, periods, request_json)
         VALUES (@charge_point_id, @connector_id, @purpose, @transaction_id, @charging_profile_id, @planned_at_ms, @sent_at_ms, @status, @error, @periods, @request_json)`,
      ),
      get: db.prepare<[string, number], Row>('SELECT * FROM ocpp_charging_profiles WHERE charge_point_id = ? AND connector_id = ?'),
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
}
