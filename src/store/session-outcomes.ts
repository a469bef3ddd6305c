// A completed charger session's outcome (migration 136): written with its StopTransaction
// (ocpp/session-outcomes.ts), read by GET /api/v1/chargers/{cp}/transactions/{id}, the
// status page and /metrics.
import type { Db } from './db.js';

export interface SessionOutcome {
  readonly transactionId: number;
  readonly recordedAtMs: number;
  readonly pricedAtMs: number | null;
  readonly currency: string | null;
  readonly energyWh: number | null;
  readonly actualCost: number | null;
  readonly immediateCost: number | null;
  readonly immediateMaxPowerW: number;
  readonly immediatePowerSource: 'charging-target' | 'connector-config' | 'default';
  readonly immediateEndMs: number | null;
  readonly unpricedReason: string | null;
  readonly planned: boolean;
  readonly planPlannedAtMs: number | null;
  readonly planExpectedCost: number | null;
  readonly planImmediateCost: number | null;
  readonly planEnergyNeededWh: number | null;
}

interface Row {
  transaction_id: number;
  recorded_at_ms: number;
  priced_at_ms: number | null;
  currency: string | null;
  energy_wh: number | null;
  actual_cost: number | null;
  immediate_cost: number | null;
  immediate_max_power_w: number;
  immediate_power_source: 'charging-target' | 'connector-config' | 'default';
  immediate_end_ms: number | null;
  unpriced_reason: string | null;
  planned: number;
  plan_planned_at_ms: number | null;
  plan_expected_cost: number | null;
  plan_immediate_cost: number | null;
  plan_energy_needed_wh: number | null;
}

const toOutcome = (r: Row): SessionOutcome => ({
  transactionId: r.transaction_id,
  recordedAtMs: r.recorded_at_ms,
  pricedAtMs: r.priced_at_ms,
  currency: r.currency,
  energyWh: r.energy_wh,
  actualCost: r.actual_cost,
  immediateCost: r.immediate_cost,
  immediateMaxPowerW: r.immediate_max_power_w,
  immediatePowerSource: r.immediate_power_source,
  immediateEndMs: r.immediate_end_ms,
  unpricedReason: r.unpriced_reason,
  planned: r.planned === 1,
  planPlannedAtMs: r.plan_planned_at_ms,
  planExpectedCost: r.plan_expected_cost,
  planImmediateCost: r.plan_immediate_cost,
  planEnergyNeededWh: r.plan_energy_needed_wh,
});

export interface OutcomeTotals {
  readonly planned: boolean;
  readonly currency: string;
  readonly sessions: number;
  readonly energyWh: number;
  readonly actualCost: number;
  readonly immediateCost: number;
}

export class SessionOutcomeStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      put: db.prepare(
        `INSERT OR REPLACE INTO ocpp_session_outcomes (transaction_id, recorded_at_ms, priced_at_ms, currency, energy_wh, actual_cost, immediate_cost, immediate_max_power_w,
           immediate_power_source, immediate_end_ms, unpriced_reason, planned, plan_planned_at_ms, plan_expected_cost, plan_immediate_cost, plan_energy_needed_wh)
         VALUES (@transaction_id, @recorded_at_ms, @priced_at_ms, @currency, @energy_wh, @actual_cost, @immediate_cost, @immediate_max_power_w,
           @immediate_power_source, @immediate_end_ms, @unpriced_reason, @planned, @plan_planned_at_ms, @plan_expected_cost, @plan_immediate_cost, @plan_energy_needed_wh)`,
      ),
      get: db.prepare<[number], Row>('SELECT * FROM ocpp_session_outcomes WHERE transaction_id = ?'),
      unpriced: db.prepare<[number, number], Row>('SELECT * FROM ocpp_session_outcomes WHERE priced_at_ms IS NULL AND transaction_id > ? ORDER BY transaction_id LIMIT ?'),
      lastOfCharger: db.prepare<[string], Row>(
        `SELECT o.* FROM ocpp_session_outcomes o JOIN ocpp_transactions t USING (transaction_id) WHERE t.charge_point_id = ? ORDER BY t.stopped_at_ms DESC, o.transaction_id DESC LIMIT 1`,
      ),
      totals: db.prepare<[], { planned: number; currency: string; sessions: number; energy_wh: number; actual_cost: number; immediate_cost: number }>(
        `SELECT planned, currency, count(*) AS sessions, sum(energy_wh) AS energy_wh, sum(actual_cost) AS actual_cost, sum(immediate_cost) AS immediate_cost
         FROM ocpp_session_outcomes WHERE actual_cost IS NOT NULL GROUP BY planned, currency`,
      ),
    };
  }

  put(o: SessionOutcome): void {
    this.stmts.put.run({
      transaction_id: o.transactionId,
      recorded_at_ms: o.recordedAtMs,
      priced_at_ms: o.pricedAtMs,
      currency: o.currency,
      energy_wh: o.energyWh,
      actual_cost: o.actualCost,
      immediate_cost: o.immediateCost,
      immediate_max_power_w: o.immediateMaxPowerW,
      immediate_power_source: o.immediatePowerSource,
      immediate_end_ms: o.immediateEndMs,
      unpriced_reason: o.unpricedReason,
      planned: o.planned ? 1 : 0,
      plan_planned_at_ms: o.planPlannedAtMs,
      plan_expected_cost: o.planExpectedCost,
      plan_immediate_cost: o.planImmediateCost,
      plan_energy_needed_wh: o.planEnergyNeededWh,
    });
  }

  get(transactionId: number): SessionOutcome | undefined {
    const r = this.stmts.get.get(transactionId);
    return r ? toOutcome(r) : undefined;
  }

  /**
   * Outcomes whose costs could not be computed yet, oldest first, a page at a time: those
   * after transaction `afterTransactionId` (keyset; pass the last one of the previous page,
   * 0 for the first). Outcomes that can never be priced stay unpriced and would fill every
   * first page: a reader pages past them.
   */
  unpriced(afterTransactionId: number, limit: number): SessionOutcome[] {
    return this.stmts.unpriced.all(afterTransactionId, limit).map(toOutcome);
  }

  /** The outcome of the charger's most recently stopped session. */
  lastOfCharger(chargePointId: string): SessionOutcome | undefined {
    const r = this.stmts.lastOfCharger.get(chargePointId);
    return r ? toOutcome(r) : undefined;
  }

  /** Sums over every priced outcome, by planned or not and currency (for /metrics). */
  totals(): OutcomeTotals[] {
    return this.stmts.totals.all().map((r) => ({ planned: r.planned === 1, currency: r.currency, sessions: r.sessions, energyWh: r.energy_wh, actualCost: r.actual_cost, immediateCost: r.immediate_cost }));
  }
}
