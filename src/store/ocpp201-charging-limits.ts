// The limits a 2.0.1 station reports (migration 270): external charging limits
// (NotifyChargingLimit / ClearedChargingLimit) and the profiles it reports
// (ReportChargingProfiles). Persistence only, run inside the handler's unit.
import type { Db } from './db.js';

/** Reports kept per station (the newest): a station that reports in a loop cannot fill the disk. */
export const MAX_REPORTS_PER_CHARGER = 200;

export interface ExternalLimitRecord {
  readonly chargePointId: string;
  /** 0: the whole station. */
  readonly evseId: number;
  readonly source: string;
  readonly gridCritical: boolean | null;
  /** The chargingSchedule array as sent, null when none came. */
  readonly schedules: readonly unknown[] | null;
  readonly receivedAtMs: number;
}

export interface ReportedProfiles {
  readonly requestId: number;
  readonly evseId: number;
  readonly source: string;
  readonly profiles: readonly unknown[];
  readonly receivedAtMs: number;
}

interface ExternalRow {
  charge_point_id: string;
  evse_id: number;
  source: string;
  grid_critical: number | null;
  schedule_json: string | null;
  received_at_ms: number;
}

export class Ocpp201ChargingLimitStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      put: db.prepare(
        `INSERT INTO ocpp201_external_limits (charge_point_id, evse_id, source, grid_critical, schedule_json, received_at_ms) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (charge_point_id, evse_id, source) DO UPDATE SET grid_critical = excluded.grid_critical, schedule_json = excluded.schedule_json, received_at_ms = excluded.received_at_ms`,
      ),
      clearOne: db.prepare('DELETE FROM ocpp201_external_limits WHERE charge_point_id = ? AND evse_id = ? AND source = ?'),
      clearSource: db.prepare('DELETE FROM ocpp201_external_limits WHERE charge_point_id = ? AND source = ?'),
      all: db.prepare<[], ExternalRow>('SELECT charge_point_id, evse_id, source, grid_critical, schedule_json, received_at_ms FROM ocpp201_external_limits'),
      trim: db.prepare(`DELETE FROM ocpp201_reported_profiles WHERE charge_point_id = ? AND id <= (SELECT id FROM ocpp201_reported_profiles WHERE charge_point_id = ? ORDER BY id DESC LIMIT 1 OFFSET ${MAX_REPORTS_PER_CHARGER})`),
      report: db.prepare('INSERT INTO ocpp201_reported_profiles (charge_point_id, request_id, evse_id, source, profiles_json, received_at_ms) VALUES (?, ?, ?, ?, ?, ?)'),
      reported: db.prepare<[string, number], { request_id: number; evse_id: number; source: string; profiles_json: string; received_at_ms: number }>(
        'SELECT request_id, evse_id, source, profiles_json, received_at_ms FROM ocpp201_reported_profiles WHERE charge_point_id = ? AND request_id = ? ORDER BY id',
      ),
    };
  }

  putExternal(r: ExternalLimitRecord): void {
    this.stmts.put.run(r.chargePointId, r.evseId, r.source, r.gridCritical === null ? null : r.gridCritical ? 1 : 0, r.schedules === null ? null : JSON.stringify(r.schedules), r.receivedAtMs);
  }

  /** Removes the source's limit on the EVSE, or on every EVSE of the station when evseId is null; how many were removed. */
  clearExternal(chargePointId: string, source: string, evseId: number | null): number {
    return (evseId === null ? this.stmts.clearSource.run(chargePointId, source) : this.stmts.clearOne.run(chargePointId, evseId, source)).changes;
  }

  allExternal(): ExternalLimitRecord[] {
    return this.stmts.all.all().map((r) => ({
      chargePointId: r.charge_point_id,
      evseId: r.evse_id,
      source: r.source,
      gridCritical: r.grid_critical === null ? null : r.grid_critical === 1,
      schedules: r.schedule_json === null ? null : (JSON.parse(r.schedule_json) as unknown[]),
      receivedAtMs: r.received_at_ms,
    }));
  }

  putReport(chargePointId: string, r: ReportedProfiles): void {
    this.stmts.report.run(chargePointId, r.requestId, r.evseId, r.source, JSON.stringify(r.profiles), r.receivedAtMs);
    this.stmts.trim.run(chargePointId, chargePointId);
  }

  /** The station's reports for one GetChargingProfiles request, in the order received. */
  reports(chargePointId: string, requestId: number): ReportedProfiles[] {
    return this.stmts.reported.all(chargePointId, requestId).map((r) => ({ requestId: r.request_id, evseId: r.evse_id, source: r.source, profiles: JSON.parse(r.profiles_json) as unknown[], receivedAtMs: r.received_at_ms }));
  }
}
