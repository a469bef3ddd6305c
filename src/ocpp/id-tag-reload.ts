// Pure: what a config file read again on SIGHUP changes of the chargers' authorization
// (docs/chargers.md "Local authorization list"): only `auth` (the id tags, or accept_all)
// of chargers configured now; a charger added or removed in the file needs a restart (its
// connection, password and plans are set up at start) and is only named.
import type { ChargerConfig } from '../config/types.js';

export interface AuthChanges {
  /** Chargers whose auth differs from the one in force, with the new one. */
  readonly changed: ReadonlyArray<{ readonly chargePointId: string; readonly auth: ChargerConfig['auth'] }>;
  /** In the file, not configured now (a restart adds them). */
  readonly added: readonly string[];
  /** Configured now, not in the file (a restart removes them; until then their auth stays). */
  readonly removed: readonly string[];
}

const same = (a: ChargerConfig['auth'], b: ChargerConfig['auth']) => JSON.stringify(a) === JSON.stringify(b);

export function authChanges(inForce: ReadonlyMap<string, ChargerConfig>, fromFile: readonly ChargerConfig[]): AuthChanges {
  const byId = new Map(fromFile.map((c) => [c.id, c]));
  const changed: Array<{ chargePointId: string; auth: ChargerConfig['auth'] }> = [];
  const removed: string[] = [];
  for (const [id, charger] of inForce) {
    const next = byId.get(id);
    if (!next) removed.push(id);
    else if (!same(charger.auth, next.auth)) changed.push({ chargePointId: id, auth: next.auth });
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
