// What chargers refused and the charging strategy in force per connector (migration 220,
// docs/chargers.md "Chargers that say no"): written by the profile dispatcher, read by it,
// the plan follower (a pause is not the end of a target), the plan's GET and the views.
import type { Refusal, StrategyName } from '../ocpp/charging-strategy.js';
import type { Db } from './db.js';

export interface StrategyInForce {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly strategy: StrategyName;
  readonly reason: string;
  readonly chosenAtMs: number;
  /** The transaction the gateway stopped to pause the car (remote-start-stop), or null. */
  readonly pausedTransactionId: number | null;
}

interface StrategyRow {
  charge_point_id: string;
  connector_id: number;
  strategy: StrategyName;
  reason: string;
  chosen_at_ms: number;
  paused_transaction_id: number | null;
}

const fromRow = (r: StrategyRow): StrategyInForce => ({
  chargePointId: r.charge_point_id,
  connectorId: r.connector_id,
  strategy: r.strategy,
  reason: r.reason,
  chosenAtMs: r.chosen_at_ms,
  pausedTransactionId: r.paused_transaction_id,
});

export class ChargingStrategyStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      putRefusal: db.prepare('INSERT OR REPLACE INTO ocpp_charger_refusals (charge_point_id, strategy, answer, at_ms, firmware_version) VALUES (?, ?, ?, ?, ?)'),
      refusals: db.prepare<[string], { strategy: Refusal['strategy']; answer: string; at_ms: number; firmware_version: string | null }>(
        'SELECT strategy, answer, at_ms, firmware_version FROM ocpp_charger_refusals WHERE charge_point_id = ? ORDER BY at_ms',
      ),
      firmware: db.prepare<[string], { firmware_version: string | null; booted_at_ms: number | null }>('SELECT firmware_version, booted_at_ms FROM ocpp_charge_points WHERE charge_point_id = ?'),
      putStrategy: db.prepare(
        `INSERT INTO ocpp_charging_strategies (charge_point_id, connector_id, strategy, reason, chosen_at_ms, paused_transaction_id) VALUES (@chargePointId, @connectorId, @strategy, @reason, @chosenAtMs, NULL)
         ON CONFLICT (charge_point_id, connector_id) DO UPDATE SET strategy = excluded.strategy, reason = excluded.reason, chosen_at_ms = excluded.chosen_at_ms`,
      ),
      setPaused: db.prepare('UPDATE ocpp_charging_strategies SET paused_transaction_id = ? WHERE charge_point_id = ? AND connector_id = ?'),
      get: db.prepare<[string, number], StrategyRow>('SELECT * FROM ocpp_charging_strategies WHERE charge_point_id = ? AND connector_id = ?'),
      all: db.prepare<[], StrategyRow>('SELECT * FROM ocpp_charging_strategies ORDER BY charge_point_id, connector_id'),
    };
  }

  putRefusal(chargePointId: string, r: Refusal): void {
    this.stmts.putRefusal.run(chargePointId, r.strategy, r.answer, r.atMs, r.firmwareVersion ?? null);
  }

  /** Every refusal stored for the charger, under whatever firmware (charging-strategy.ts refusalsInForce picks those that count). */
  refusals(chargePointId: string): Refusal[] {
    return this.stmts.refusals.all(chargePointId).map((r) => ({ strategy: r.strategy, answer: r.answer, atMs: r.at_ms, firmwareVersion: r.firmware_version }));
  }

  /** The firmware the charger reported at its last BootNotification (null: none, or never booted). */
  firmwareOf(chargePointId: string): string | null {
    return this.stmts.firmware.get(chargePointId)?.firmware_version ?? null;
  }

  /** The firmware and boot time (gateway time) of the charger's last BootNotification (nulls: never booted). */
  lastBoot(chargePointId: string): { firmwareVersion: string | null; bootedAtMs: number | null } {
    const r = this.stmts.firmware.get(chargePointId);
    return { firmwareVersion: r?.firmware_version ?? null, bootedAtMs: r?.booted_at_ms ?? null };
  }

  /** Stores the strategy in force; the paused transaction stays as it was. */
  put(s: Omit<StrategyInForce, 'pausedTransactionId'>): void {
    this.stmts.putStrategy.run({ chargePointId: s.chargePointId, connectorId: s.connectorId, strategy: s.strategy, reason: s.reason, chosenAtMs: s.chosenAtMs });
  }

  setPaused(chargePointId: string, connectorId: number, transactionId: number | null): void {
    this.stmts.setPaused.run(transactionId, chargePointId, connectorId);
  }

  get(chargePointId: string, connectorId: number): StrategyInForce | undefined {
    const r = this.stmts.get.get(chargePointId, connectorId);
    return r ? fromRow(r) : undefined;
  }

  all(): StrategyInForce[] {
    return this.stmts.all.all().map(fromRow);
  }
}
