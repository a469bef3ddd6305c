// What clients asked each connector to charge (migration 100): one row per connector,
// replaced by each new request, kept across restarts. A target ends when the transaction
// on its connector stops (migration 131): it is planned no more until a new request.
import type { Db } from './db.js';

export type TargetSource = 'client' | 'default' | 'ev';

export interface ChargingTarget {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly marketArea: string;
  readonly departureMs: number;
  readonly energyWh: number;
  readonly maxCurrentA: number;
  readonly minCurrentA: number;
  readonly phases: number;
  readonly voltageV: number;
  readonly siteLimitA: number | null;
  readonly siteOtherLoadA: number | null;
  readonly updatedAtMs: number;
  /** When the transaction it was for stopped; null while it is in force. */
  readonly endedAtMs?: number | null;
  /**
   * A client's (PUT …/plan; the default when absent), the connector's configured default
   * target (migration 133), or the car's own needs through ISO 15118 (NotifyEVChargingNeeds,
   * migration 275).
   */
  readonly source?: TargetSource;
}

interface Row {
  charge_point_id: string;
  connector_id: number;
  market_area: string;
  departure_ms: number;
  energy_wh: number;
  max_current_a: number;
  min_current_a: number;
  phases: number;
  voltage_v: number;
  site_limit_a: number | null;
  site_other_load_a: number | null;
  updated_at_ms: number;
  ended_at_ms: number | null;
  source: TargetSource;
}

const toTarget = (r: Row): ChargingTarget => ({
  chargePointId: r.charge_point_id,
  connectorId: r.connector_id,
  marketArea: r.market_area,
  departureMs: r.departure_ms,
  energyWh: r.energy_wh,
  maxCurrentA: r.max_current_a,
  minCurrentA: r.min_current_a,
  phases: r.phases,
  voltageV: r.voltage_v,
  siteLimitA: r.site_limit_a,
  siteOtherLoadA: r.site_other_load_a,
  updatedAtMs: r.updated_at_ms,
  endedAtMs: r.ended_at_ms,
  source: r.source,
});

export class ChargingTargetStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      upsert: db.prepare(
        `INSERT INTO charging_targets (charge_point_id, connector_id, market_area, departure_ms, energy_wh, max_current_a, min_current_a, phases, voltage_v, site_limit_a, site_other_load_a, updated_at_ms, source)
         VALUES (@charge_point_id, @connector_id, @market_area, @departure_ms, @energy_wh, @max_current_a, @min_current_a, @phases, @voltage_v, @site_limit_a, @site_other_load_a, @updated_at_ms, @source)
         ON CONFLICT (charge_point_id, connector_id) DO UPDATE SET market_area = excluded.market_area, departure_ms = excluded.departure_ms, energy_wh = excluded.energy_wh,
           max_current_a = excluded.max_current_a, min_current_a = excluded.min_current_a, phases = excluded.phases, voltage_v = excluded.voltage_v,
           site_limit_a = excluded.site_limit_a, site_other_load_a = excluded.site_other_load_a, updated_at_ms = excluded.updated_at_ms, ended_at_ms = NULL, source = excluded.source`,
      ),
      get: db.prepare<[string, number], Row>('SELECT * FROM charging_targets WHERE charge_point_id = ? AND connector_id = ?'),
      upcoming: db.prepare<[number], Row>('SELECT * FROM charging_targets WHERE departure_ms > ? AND ended_at_ms IS NULL ORDER BY charge_point_id, connector_id'),
      delete: db.prepare<[string, number]>('DELETE FROM charging_targets WHERE charge_point_id = ? AND connector_id = ?'),
      end: db.prepare<[number, string, number, number]>('UPDATE charging_targets SET ended_at_ms = ? WHERE charge_point_id = ? AND connector_id = ? AND ended_at_ms IS NULL AND updated_at_ms <= ?'),
    };
  }

  /** Stores the target, replacing the connector's previous one. */
  put(t: ChargingTarget): void {
    this.stmts.upsert.run({
      charge_point_id: t.chargePointId,
      connector_id: t.connectorId,
      market_area: t.marketArea,
      departure_ms: t.departureMs,
      energy_wh: t.energyWh,
      max_current_a: t.maxCurrentA,
      min_current_a: t.minCurrentA,
      phases: t.phases,
      voltage_v: t.voltageV,
      site_limit_a: t.siteLimitA,
      site_other_load_a: t.siteOtherLoadA,
      updated_at_ms: t.updatedAtMs,
      source: t.source ?? 'client',
    });
  }

  get(chargePointId: string, connectorId: number): ChargingTarget | undefined {
    const row = this.stmts.get.get(chargePointId, connectorId);
    return row ? toTarget(row) : undefined;
  }

  /** Removes the connector's target; false when there was none. */
  delete(chargePointId: string, connectorId: number): boolean {
    return this.stmts.delete.run(chargePointId, connectorId).changes > 0;
  }

  /** Ends the connector's target in force that was set before endedAtMs; false when there was none. */
  end(chargePointId: string, connectorId: number, endedAtMs: number): boolean {
    return this.stmts.end.run(endedAtMs, chargePointId, connectorId, endedAtMs).changes > 0;
  }

  /** Targets in force whose departure is after nowMs: the ones worth planning again. */
  upcoming(nowMs: number): ChargingTarget[] {
    return this.stmts.upcoming.all(nowMs).map(toTarget);
  }
}
