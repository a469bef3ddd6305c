// Configuration keys read from chargers with GetConfiguration (migration 130): written by
// the OCPP central system after a BootNotification, read when it builds a charging profile.
import type { Db } from './db.js';

export interface ChargerConfigurationKey {
  readonly key: string;
  /** null: the charger does not know the key. */
  readonly value: string | null;
  readonly readonly: boolean | null;
  readonly readAtMs: number;
}

export class OcppConfigurationStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      put: db.prepare(
        `INSERT OR REPLACE INTO ocpp_charger_configuration (charge_point_id, key, value, readonly, read_at_ms) VALUES (@chargePointId, @key, @value, @readonly, @readAtMs)`,
      ),
      get: db.prepare<[string, string], { key: string; value: string | null; readonly: number | null; read_at_ms: number }>(
        'SELECT key, value, readonly, read_at_ms FROM ocpp_charger_configuration WHERE charge_point_id = ? AND key = ?',
      ),
    };
  }

  put(chargePointId: string, k: ChargerConfigurationKey): void {
    this.stmts.put.run({ chargePointId, key: k.key, value: k.value, readonly: k.readonly === null ? null : k.readonly ? 1 : 0, readAtMs: k.readAtMs });
  }

  /** The key as last read, or undefined when it was never read. */
  get(chargePointId: string, key: string): ChargerConfigurationKey | undefined {
    const r = this.stmts.get.get(chargePointId, key);
    return r ? { key: r.key, value: r.value, readonly: r.readonly === null ? null : r.readonly === 1, readAtMs: r.read_at_ms } : undefined;
  }
}
