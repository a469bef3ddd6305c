// What each 2.0.1 EVSE's car said last through ISO 15118 (migration 275): its charging needs
// with the gateway's answer and what became of them, and the schedule the car says it will
// follow. One row per EVSE and message, replaced by the next; shown in the plan view
// (GET …/plan ev). The target made from the needs is a charging target (charging-targets.ts).
import type { Db } from './db.js';

export type EvNeedsStatus = 'Accepted' | 'Rejected' | 'Processing';
/** target: the connector's target is the car's; client-target: a client's target in force was kept; none: not planned (see the reason). */
export type EvNeedsOutcome = 'target' | 'client-target' | 'none';

export interface EvChargingNeedsRecord {
  readonly chargePointId: string;
  readonly evseId: number;
  readonly receivedAtMs: number;
  /** The NotifyEVChargingNeedsRequest as sent (schema-checked). */
  readonly request: unknown;
  readonly status: EvNeedsStatus;
  readonly reasonCode: string | null;
  readonly additionalInfo: string | null;
  readonly outcome: EvNeedsOutcome;
}

export interface EvChargingScheduleRecord {
  readonly chargePointId: string;
  readonly evseId: number;
  readonly receivedAtMs: number;
  readonly timeBaseMs: number;
  /** chargingSchedule as sent: periods in seconds from timeBaseMs. */
  readonly schedule: unknown;
}

interface NeedsRow {
  charge_point_id: string;
  evse_id: number;
  received_at_ms: number;
  needs_json: string;
  status: EvNeedsStatus;
  reason_code: string | null;
  additional_info: string | null;
  outcome: EvNeedsOutcome;
}

interface ScheduleRow {
  charge_point_id: string;
  evse_id: number;
  received_at_ms: number;
  time_base_ms: number;
  schedule_json: string;
}

export class EvChargingStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      putNeeds: db.prepare(
        `INSERT OR REPLACE INTO ocpp201_ev_charging_needs (charge_point_id, evse_id, received_at_ms, needs_json, status, reason_code, additional_info, outcome)
         VALUES (@charge_point_id, @evse_id, @received_at_ms, @needs_json, @status, @reason_code, @additional_info, @outcome)`,
      ),
      needs: db.prepare<[string, number], NeedsRow>('SELECT * FROM ocpp201_ev_charging_needs WHERE charge_point_id = ? AND evse_id = ?'),
      putSchedule: db.prepare(
        `INSERT OR REPLACE INTO ocpp201_ev_charging_schedules (charge_point_id, evse_id, received_at_ms, time_base_ms, schedule_json)
         VALUES (@charge_point_id, @evse_id, @received_at_ms, @time_base_ms, @schedule_json)`,
      ),
      schedule: db.prepare<[string, number], ScheduleRow>('SELECT * FROM ocpp201_ev_charging_schedules WHERE charge_point_id = ? AND evse_id = ?'),
    };
  }

  putNeeds(r: EvChargingNeedsRecord): void {
    this.stmts.putNeeds.run({
      charge_point_id: r.chargePointId,
      evse_id: r.evseId,
      received_at_ms: r.receivedAtMs,
      needs_json: JSON.stringify(r.request),
      status: r.status,
      reason_code: r.reasonCode,
      additional_info: r.additionalInfo,
      outcome: r.outcome,
    });
  }

  needs(chargePointId: string, evseId: number): EvChargingNeedsRecord | undefined {
    const r = this.stmts.needs.get(chargePointId, evseId);
    if (!r) return undefined;
    return { chargePointId: r.charge_point_id, evseId: r.evse_id, receivedAtMs: r.received_at_ms, request: JSON.parse(r.needs_json) as unknown, status: r.status, reasonCode: r.reason_code, additionalInfo: r.additional_info, outcome: r.outcome };
  }

  /**
   * The most periods the EVSE's car takes per schedule (NotifyEVChargingNeeds
   * maxScheduleTuples), for the profiles sent to it: from the needs received since sinceMs
   * (the car's transaction began), null when none came since or they did not say.
   */
  maxScheduleTuples(chargePointId: string, evseId: number, sinceMs: number): number | null {
    const needs = this.needs(chargePointId, evseId);
    if (!needs || needs.receivedAtMs < sinceMs) return null;
    const request = needs.request as { maxScheduleTuples?: number };
    return typeof request.maxScheduleTuples === 'number' ? request.maxScheduleTuples : null;
  }

  putSchedule(r: EvChargingScheduleRecord): void {
    this.stmts.putSchedule.run({ charge_point_id: r.chargePointId, evse_id: r.evseId, received_at_ms: r.receivedAtMs, time_base_ms: r.timeBaseMs, schedule_json: JSON.stringify(r.schedule) });
  }

  schedule(chargePointId: string, evseId: number): EvChargingScheduleRecord | undefined {
    const r = this.stmts.schedule.get(chargePointId, evseId);
    if (!r) return undefined;
    return { chargePointId: r.charge_point_id, evseId: r.evse_id, receivedAtMs: r.received_at_ms, timeBaseMs: r.time_base_ms, schedule: JSON.parse(r.schedule_json) as unknown };
  }
}
