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
