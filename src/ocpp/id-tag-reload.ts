// Pure: what a config file read again on SIGHUP changes of the chargers' authorization
// (docs/chargers.md "Local authorization list"): only `auth` (the id tags, or accept_all, and
// their groups) and `id_token_type` (the type 2.0.1 stations are sent them with) of chargers
// configured now; a charger added or removed in the file needs a restart (its
// connection, password and plans are set up at start) and is only named.
import type { ChargerConfig } from '../config/types.js';

export interface AuthChanges {
  /** Chargers whose auth differs from the one in force, with the new one. */
  readonly changed: ReadonlyArray<{
    readonly chargePointId: string;
    readonly auth: ChargerConfig['auth'];
    readonly idTokenType: ChargerConfig['id_token_type'];
    /**
     * The type or the groups changed: what the station holds differs in more than its tags,
     * which a Differential update (the tags added and removed) cannot carry: a Full list.
     */
    readonly fullList: boolean;
  }>;
  /** In the file, not configured now (a restart adds them). */
  readonly added: readonly string[];
  /** Configured now, not in the file (a restart removes them; until then their auth stays). */
  readonly removed: readonly string[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const parents = (auth: ChargerConfig['auth']) => (auth === 'accept_all' ? null : (auth.parent_id_tags ?? null));

export function authChanges(inForce: ReadonlyMap<string, ChargerConfig>, fromFile: readonly ChargerConfig[]): AuthChanges {
  const byId = new Map(fromFile.map((c) => [c.id, c]));
  const changed: Array<AuthChanges['changed'][number]> = [];
  const removed: string[] = [];
  for (const [id, charger] of inForce) {
    const next = byId.get(id);
    if (!next) removed.push(id);
    else if (!same(charger.auth, next.auth) || charger.id_token_type !== next.id_token_type) {
      const fullList = charger.id_token_type !== next.id_token_type || !same(parents(charger.auth), parents(next.auth));
      changed.push({ chargePointId: id, auth: next.auth, idTokenType: next.id_token_type, fullList });
    }
  }
  return { changed, added: fromFile.filter((c) => !inForce.has(c.id)).map((c) => c.id), removed };
}

/**
 * Whether the new auth refuses a tag the old one accepted: a charger's authorization cache
 * (OCPP 1.6 3.5.2) may then still accept it offline, so it gets a ClearCache.
 */
export function removesIdTags(before: ChargerConfig['auth'], after: ChargerConfig['auth']): boolean {
  if (after === 'accept_all') return false;
  if (before === 'accept_all') return true;
  const kept = new Set(after.id_tags.map((t) => t.toLowerCase()));
  return before.id_tags.some((t) => !kept.has(t.toLowerCase()));
}
