// doctor: whether each configured charger has been heard, and transactions left open.
import { existsSync } from 'node:fs';
import { databasePath } from '../../store/db.js';
import { withReadOnlyDb } from './read-only-db.js';
import { errorMessage, pass, warn, type CheckResult, type DoctorCheck } from './types.js';

/** A transaction open longer than this most likely lost its StopTransaction. */
const OPEN_TOO_LONG_MS = 24 * 3_600_000;

/**
 * One line per configured charge point: when it was last heard (boot, heartbeat, status
 * or meter values, from the database; read-only, safe while the daemon runs), a WARN with
 * the wiring when never or not within three heartbeat intervals, and a WARN for
 * transactions open more than a day.
 */
export const chargersCheck: DoctorCheck = {
  name: 'chargers',
  needsConfig: true,
  async run(env) {
    const config = env.config!;
    // No line at all without chargers: most gateways have none.
    if (config.chargers.length === 0) return [];
    const path = databasePath(config.data_dir);
    const url = `ws://<gateway address>:${config.ocpp.port}/<id>`;
    const wiring = (id: string) => `set the charger's central system URL to ws://<gateway address>:${config.ocpp.port}/ (charge point id ${id}, OCPP 1.6J, basic auth with its password; docs/chargers.md) and check it reaches the gateway (firewall, same network)`;
    if (!existsSync(path)) return config.chargers.map((c) => warn(`charger ${c.id}`, 'never heard (no database yet)', wiring(c.id)));
    try {
      return await withReadOnlyDb(path, ({ db, hasTable }) => {
        if (!hasTable('ocpp_charge_points')) return config.chargers.map((c) => warn(`charger ${c.id}`, 'never heard (the daemon has not run this version yet)', wiring(c.id)));
        const lastHeard = db.prepare<[{ id: string }], { ms: number | null }>(
          `SELECT max(coalesce((SELECT last_heartbeat_ms FROM ocpp_charge_points WHERE charge_point_id = @id), 0),
                      coalesce((SELECT max(received_at_ms) FROM ocpp_connector_status WHERE charge_point_id = @id), 0),
                      coalesce((SELECT max(received_at_ms) FROM ocpp_meter_values WHERE charge_point_id = @id), 0)) AS ms`,
        );
        const open = db.prepare<[string, number], { n: number; oldest: number | null }>('SELECT count(*) AS n, min(started_at_ms) AS oldest FROM ocpp_transactions WHERE charge_point_id = ? AND stopped_at_ms IS NULL AND started_at_ms < ?');
        const results: CheckResult[] = [];
        const staleMs = 3 * config.ocpp.heartbeat_interval_s * 1000;
        const now = env.now();
        for (const c of config.chargers) {
          const heard = lastHeard.get({ id: c.id })?.ms ?? 0;
          const name = `charger ${c.id}`;
          if (!heard) results.push(warn(name, `never heard at ${url.replace('<id>', c.id)}`, wiring(c.id)));
          else if (now - heard > staleMs) results.push(warn(name, `last heard ${new Date(heard).toISOString()}, more than three heartbeat intervals ago`, `check the charger is on and online; ${wiring(c.id)}`));
          else results.push(pass(name, `heard ${Math.round((now - heard) / 1000)} s ago`));
          const stale = open.get(c.id, now - OPEN_TOO_LONG_MS);
          if (stale && stale.n > 0) {
            results.push(
              warn(`charger ${c.id} tx`, `${stale.n} transaction(s) open for more than a day (oldest started ${new Date(stale.oldest!).toISOString()}): their sessions stay active (409) until the charger sends StopTransaction`, "check the charger's transaction log; a charger that lost a StopTransaction sends it again once it reconnects"),
            );
          }
        }
        return results;
      });
    } catch (err) {
      return [warn('chargers', `${path}: ${errorMessage(err)}`, 'see the database line')];
    }
  },
};
