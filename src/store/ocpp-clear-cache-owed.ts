// The ClearCache owed to each charger (migration 231): written when a reload removes id tags,
// deleted when the charger answered one sent after that removal. Persistence only; when a
// ClearCache is owed and sent is ocpp/central-system.ts.
import type { Db } from './db.js';

export class ClearCacheOwedStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      owe: db.prepare('INSERT OR REPLACE INTO ocpp_clear_cache_owed (charge_point_id, owed_since_ms) VALUES (?, ?)'),
      get: db.prepare<[string], { owed_since_ms: number }>('SELECT owed_since_ms FROM ocpp_clear_cache_owed WHERE charge_point_id = ?'),
      paid: db.prepare('DELETE FROM ocpp_clear_cache_owed WHERE charge_point_id = ? AND owed_since_ms <= ?'),
      forgetAllBut: db.prepare<[string]>('DELETE FROM ocpp_clear_cache_owed WHERE charge_point_id NOT IN (SELECT value FROM json_each(?))'),
    };
  }

  /** Owes the charger a ClearCache from `sinceMs` on (a later removal moves it on). */
  owe(chargePointId: string, sinceMs: number): void {
    this.stmts.owe.run(chargePointId, sinceMs);
  }

  /** Since when a ClearCache is owed to the charger, or null. */
  owedSinceMs(chargePointId: string): number | null {
    return this.stmts.get.get(chargePointId)?.owed_since_ms ?? null;
  }

  /** Forgets what is owed to every charger but these (removed from the config, or on accept_all); how many. */
  forgetAllBut(chargePointIds: readonly string[]): number {
    return this.stmts.forgetAllBut.run(JSON.stringify(chargePointIds)).changes;
  }

  /** A ClearCache sent at `sentAtMs` was answered: paid, unless a removal read after it owes another. */
  paid(chargePointId: string, sentAtMs: number): void {
    this.stmts.paid.run(chargePointId, sentAtMs);
  }
}
