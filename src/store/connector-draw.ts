// What a connector draws now, from its charger's latest measured Current.Import (or
// Power.Active.Import) of its open transaction (ocpp_meter_values, migration 090): taken off
// the site meter's reading when the site meter measures the chargers too (planning/site-load.ts).
import type { DrawSample } from '../planning/car-draw.js';
import type { ConnectorDraw } from '../planning/site-load.js';
import type { Db } from './db.js';

interface ValueRow {
  sampled_at_ms: number;
  measurand: string;
  phase: string;
  value: number;
  unit: string;
}

const PHASES = ['L1', 'L2', 'L3'] as const;

export class ConnectorDrawStore {
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

  /**
   * What the transaction drew at each instant from fromMs to toMs: Current.Import per phase
   * (a phase not given is 0) and Power.Active.Import (the total, else the sum of its phases).
   */
  samples(transactionId: number, fromMs: number, toMs: number): DrawSample[] {
    const byInstant = new Map<number, ValueRow[]>();
    for (const r of this.stmts.range.all(transactionId, fromMs, toMs)) {
      const list = byInstant.get(r.sampled_at_ms) ?? [];
      list.push(r);
      byInstant.set(r.sampled_at_ms, list);
    }
    return [...byInstant].map(([atMs, rows]) => {
      const currents = rows.filter((r) => r.measurand === 'Current.Import');
      const phase = (p: string) => currents.find((r) => r.phase === p || r.phase === `${p}-N`)?.value;
      const perPhase = PHASES.map(phase);
      const powers = rows.filter((r) => r.measurand === 'Power.Active.Import').map((r) => ({ ...r, w: r.unit === 'kW' ? r.value * 1000 : r.value }));
      const totalW = powers.find((r) => r.phase === '')?.w ?? (powers.length > 0 ? powers.reduce((t, r) => t + r.w, 0) : null);
      return {
        atMs,
        currentsA: perPhase.some((a) => a !== undefined) ? (perPhase.map((a) => a ?? 0) as [number, number, number]) : null,
        powerW: totalW,
      };
    });
  }

  /** Every connector with an open transaction (a car plugged in), with its newest one. */
  openConnectors(): Array<{ chargePointId: string; connectorId: number; transactionId: number }> {
    return this.stmts.openAll.all().map((r) => ({ chargePointId: r.charge_point_id, connectorId: r.connector_id, transactionId: r.transaction_id }));
  }

  /** The connector's open transaction (a car plugged in), or null. */
  openTransactionId(chargePointId: string, connectorId: number): number | null {
    return this.stmts.open.get(chargePointId, connectorId)?.transaction_id ?? null;
  }

  /**
   * Current per phase the connector draws, or null without an open transaction or values.
   * Current.Import wins over power; a value without a phase is taken as each used phase's;
   * power is turned into current at `voltageV` (a total over `phases`).
   */
  latest(chargePointId: string, connectorId: number, phases: number, voltageV: number): ConnectorDraw | null {
    const rows = this.stmts.latest.all(chargePointId, connectorId);
    if (rows.length === 0) return null;
    const used = phases >= 3 ? 3 : 1;
    const fromRows = (measurand: string, toA: (r: ValueRow, perPhase: boolean) => number): [number, number, number] | null => {
      const of = rows.filter((r) => r.measurand === measurand);
      if (of.length === 0) return null;
      const byPhase = PHASES.map((p) => of.find((r) => r.phase === p || r.phase === `${p}-N`));
      if (byPhase.some((r) => r !== undefined)) return byPhase.map((r) => (r ? toA(r, true) : 0)) as [number, number, number];
      const total = of.find((r) => r.phase === '');
      if (!total) return null;
      const a = toA(total, false);
      return [a, used === 3 ? a : 0, used === 3 ? a : 0];
    };
    const currents =
      fromRows('Current.Import', (r) => r.value) ??
      fromRows('Power.Active.Import', (r, perPhase) => {
        const w = r.unit === 'kW' ? r.value * 1000 : r.value;
        return perPhase ? w / voltageV : w / (used * voltageV);
      });
    return currents ? { sampledAtMs: rows[0].sampled_at_ms, currentsA: currents } : null;
  }
}
