// How much energy a connector's open transaction has delivered, from the charger's stored
// energy register values (ocpp_meter_values, migration 090): what planning counts against
// a target (docs/planning.md "Following the plan"). Reads only, and only the register
// values around the instants asked about (through the (transaction, measurand, time) index),
// so the cost per MeterValues does not grow with the session's length.
import { ENERGY_REGISTER, registerReadings, type RegisterValue } from '../ocpp/register-readings.js';
import { registerAtWh } from '../planning/progress.js';
import type { Db } from './db.js';

export interface Delivery {
  readonly transactionId: number;
  readonly startedAtMs: number;
  /** Energy delivered from max(start, sinceMs) to measuredAtMs. */
  readonly deliveredWh: number;
  /** The newest register reading (the transaction's start while there is none). */
  readonly measuredAtMs: number;
  /**
   * The register as Wh, oldest first: meterStart and the readings around sinceMs, around
   * each of `around`, and the newest — enough for registerAtWh at those instants.
   */
  readonly readings: ReadonlyArray<{ readonly atMs: number; readonly wh: number }>;
}

interface TxRow {
  transaction_id: number;
  started_at_ms: number;
  meter_start_wh: number;
}

/** Instants read on each side of an instant asked about: a few, in case the nearest has no outlet value. */
const INSTANTS_EACH_SIDE = 4;

export class ChargingProgressStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      open: db.prepare<[string, number], TxRow>(
        'SELECT transaction_id, started_at_ms, meter_start_wh FROM ocpp_transactions WHERE charge_point_id = ? AND connector_id = ? AND stopped_at_ms IS NULL ORDER BY transaction_id DESC LIMIT 1',
      ),
      // The earliest of the few instants at or before atMs / the latest of the few at or after it.
      fromBefore: db
        .prepare<{ tx: number; measurand: string; at: number; n: number }, number | null>(
          `SELECT min(sampled_at_ms) FROM (SELECT DISTINCT sampled_at_ms FROM ocpp_meter_values
           WHERE transaction_id = @tx AND measurand = @measurand AND sampled_at_ms <= @at ORDER BY sampled_at_ms DESC LIMIT @n)`,
        )
        .pluck(),
      toAfter: db
        .prepare<{ tx: number; measurand: string; at: number; n: number }, number | null>(
          `SELECT max(sampled_at_ms) FROM (SELECT DISTINCT sampled_at_ms FROM ocpp_meter_values
           WHERE transaction_id = @tx AND measurand = @measurand AND sampled_at_ms >= @at ORDER BY sampled_at_ms LIMIT @n)`,
        )
        .pluck(),
      values: db.prepare<[number, string, number, number], { sampled_at_ms: number; phase: string; location: string; value: number; unit: string }>(
        'SELECT sampled_at_ms, phase, location, value, unit FROM ocpp_meter_values WHERE transaction_id = ? AND measurand = ? AND sampled_at_ms BETWEEN ? AND ? ORDER BY sampled_at_ms',
      ),
    };
  }

  /**
   * The connector's open transaction's delivery since sinceMs (its start when later), or
   * null without an open transaction. `around`: more instants the readings must cover.
   */
  delivery(chargePointId: string, connectorId: number, sinceMs: number, around: readonly number[] = []): Delivery | null {
    const tx = this.stmts.open.get(chargePointId, connectorId);
    if (!tx) return null;
    const fromMs = Math.max(sinceMs, tx.started_at_ms);
    const values = this.valuesAround(tx.transaction_id, [fromMs, ...around, Number.MAX_SAFE_INTEGER]);
    const readings = registerReadings({ startedAtMs: tx.started_at_ms, meterStartWh: tx.meter_start_wh, stoppedAtMs: null, meterStopWh: null }, values)
      // A register value stamped before the start is another transaction's or a clock glitch.
      .filter((r) => r.timestampMs >= tx.started_at_ms)
      .map((r) => ({ atMs: r.timestampMs, wh: r.energyKwh * 1000 }));
    const newest = readings[readings.length - 1]!;
    const fromWh = registerAtWh(readings, fromMs)!;
    return { transactionId: tx.transaction_id, startedAtMs: tx.started_at_ms, deliveredWh: Math.max(0, newest.wh - fromWh), measuredAtMs: newest.atMs, readings };
  }

  /** Every register value of the few instants on each side of each of atMs (whole instants: all their phases). */
  private valuesAround(transactionId: number, atMs: readonly number[]): RegisterValue[] {
    const ranges: Array<[number, number]> = [];
    for (const at of atMs) {
      const q = { tx: transactionId, measurand: ENERGY_REGISTER, at, n: INSTANTS_EACH_SIDE };
      const lo = this.stmts.fromBefore.get(q) ?? at;
      const hi = this.stmts.toAfter.get(q) ?? at;
      ranges.push([lo, hi]);
    }
    ranges.sort((a, b) => a[0] - b[0]);
    const merged: Array<[number, number]> = [];
    for (const r of ranges) {
      const last = merged[merged.length - 1];
      if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
      else merged.push([r[0], r[1]]);
    }
    return merged.flatMap(([lo, hi]) =>
      this.stmts.values.all(transactionId, ENERGY_REGISTER, lo, hi).map((r) => ({ sampledAtMs: r.sampled_at_ms, phase: r.phase, location: r.location, value: r.value, unit: r.unit })),
    );
  }
}
