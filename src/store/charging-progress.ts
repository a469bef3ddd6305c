// How much energy a connector's open transaction has delivered, from the charger's stored
// energy register values (ocpp_meter_values, migration 090): what planning counts against
// a target (docs/planning.md "Following the plan"). Reads only.
import { ENERGY_REGISTER, registerReadings } from '../ocpp/register-readings.js';
import { registerAtWh } from '../planning/progress.js';
import type { Db } from './db.js';

export interface Delivery {
  readonly transactionId: number;
  readonly startedAtMs: number;
  /** Energy delivered from max(start, sinceMs) to measuredAtMs. */
  readonly deliveredWh: number;
  /** The newest register reading (the transaction's start while there is none). */
  readonly measuredAtMs: number;
  /** The register as Wh at each reading, oldest first (meterStart first). */
  readonly readings: ReadonlyArray<{ readonly atMs: number; readonly wh: number }>;
}

interface TxRow {
  transaction_id: number;
  started_at_ms: number;
  meter_start_wh: number;
}

export class ChargingProgressStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      open: db.prepare<[string, number], TxRow>(
        'SELECT transaction_id, started_at_ms, meter_start_wh FROM ocpp_transactions WHERE charge_point_id = ? AND connector_id = ? AND stopped_at_ms IS NULL ORDER BY transaction_id DESC LIMIT 1',
      ),
      register: db.prepare<[number, string], { sampled_at_ms: number; phase: string; location: string; value: number; unit: string }>(
        'SELECT sampled_at_ms, phase, location, value, unit FROM ocpp_meter_values WHERE transaction_id = ? AND measurand = ? ORDER BY sampled_at_ms',
      ),
    };
  }

  /** The connector's open transaction's delivery since sinceMs (its start when later), or null without an open transaction. */
  delivery(chargePointId: string, connectorId: number, sinceMs: number): Delivery | null {
    const tx = this.stmts.open.get(chargePointId, connectorId);
    if (!tx) return null;
    const values = this.stmts.register.all(tx.transaction_id, ENERGY_REGISTER).map((r) => ({ sampledAtMs: r.sampled_at_ms, phase: r.phase, location: r.location, value: r.value, unit: r.unit }));
    const readings = registerReadings({ startedAtMs: tx.started_at_ms, meterStartWh: tx.meter_start_wh, stoppedAtMs: null, meterStopWh: null }, values)
      // A register value stamped before the start is another transaction's or a clock glitch.
      .filter((r) => r.timestampMs >= tx.started_at_ms)
      .map((r) => ({ atMs: r.timestampMs, wh: r.energyKwh * 1000 }));
    const newest = readings[readings.length - 1]!;
    const fromWh = registerAtWh(readings, Math.max(sinceMs, tx.started_at_ms))!;
    return { transactionId: tx.transaction_id, startedAtMs: tx.started_at_ms, deliveredWh: Math.max(0, newest.wh - fromWh), measuredAtMs: newest.atMs, readings };
  }
}
