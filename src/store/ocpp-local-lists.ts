// The local authorization list each charger holds (migration 210): written when a charger
// accepted a SendLocalList, read to build the next (differential) update.
import type { Db } from './db.js';

export interface HeldLocalList {
  readonly listVersion: number;
  readonly idTags: readonly string[];
  readonly updatedAtMs: number;
}

export class LocalListStore {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      put: db.prepare(
        `INSERT OR REPLACE INTO ocpp_local_auth_lists (charge_point_id, list_version, id_tags_json, updated_at_ms) VALUES (@chargePointId, @listVersion, @idTagsJson, @updatedAtMs)`,
      ),
      get: db.prepare<[string], { list_version: number; id_tags_json: string; updated_at_ms: number }>('SELECT list_version, id_tags_json, updated_at_ms FROM ocpp_local_auth_lists WHERE charge_point_id = ?'),
    };
  }

  put(chargePointId: string, list: HeldLocalList): void {
    this.stmts.put.run({ chargePointId, listVersion: list.listVersion, idTagsJson: JSON.stringify(list.idTags), updatedAtMs: list.updatedAtMs });
  }

  /** The list the charger last accepted, or undefined when it never accepted one from us. */
  get(chargePointId: string): HeldLocalList | undefined {
    const r = this.stmts.get.get(chargePointId);
    return r ? { listVersion: r.list_version, idTags: JSON.parse(r.id_tags_json) as string[], updatedAtMs: r.updated_at_ms } : undefined;
  }
}
