// doctor: whether site.limit_a holds as a ceiling (docs/planning.md "The fuse controller"):
// a config that accepts chargers the site cannot count, and connectors the running daemon's
// fuse controller cannot bring within their share (from its own /status.json), whichever
// OCPP version their charger speaks (a 2.0.1 station's EVSEs are controlled as 1.6 connectors).
import { uncountedChargers } from '../../config/load.js';
import { fetchDaemonStatus } from './meters.js';
import { fail, pass, warn, type CheckResult, type DoctorCheck } from './types.js';

interface DaemonFuseConnector {
  readonly charge_point_id: string;
  readonly connector_id: number;
  readonly health: string;
  readonly why: string;
  readonly inoperative_by_fuse: boolean;
  readonly last_escalation: { readonly means: string; readonly at: string } | null;
}

export const fuseCheck: DoctorCheck = {
  name: 'fuse',
  needsConfig: true,
  async run(env) {
    const config = env.config!;
    if (config.site.limit_a === undefined || config.chargers.length === 0) return [];
    const results: CheckResult[] = [];
    // What the config check refuses unless told: warned here for as long as it is told.
    const uncounted = uncountedChargers({ ...config, site: { ...config.site, uncounted_chargers: 'refuse' } });
    for (const problem of uncounted) results.push(warn('fuse config', `site.uncounted_chargers is allow: ${problem.replace(/\. List each.*$/, '')}`, "list each connector under chargers[].connectors with its max_current_a, or set a site meter that measures the chargers, then remove site.uncounted_chargers"));
    const status = (await fetchDaemonStatus(config, env.timeoutMs)) as { fuse?: DaemonFuseConnector[] } | null;
    if (!status || !Array.isArray(status.fuse)) return results;
    const fix = (c: DaemonFuseConnector) =>
      c.inoperative_by_fuse
        ? `the charger did not confirm a lower limit and was set Inoperative: check its firmware and link (docs/chargers.md), then \`metergate charger change-availability ${c.charge_point_id} --connector ${c.connector_id} --type operative\``
        : `the charger does not confirm its limits: check its firmware and its link (Wi-Fi, cellular), lower its max_current_a, or stop its car at the charger; docs/planning.md#the-fuse-controller`;
    for (const c of status.fuse) {
      const name = `fuse ${c.charge_point_id}/${c.connector_id}`;
      if (c.health === 'uncontrollable' || c.inoperative_by_fuse) results.push(fail(name, c.inoperative_by_fuse ? 'set Inoperative by the fuse controller' : `cannot be brought within its share of site.limit_a: ${c.why}`, fix(c)));
      else if (c.health === 'escalating') results.push(warn(name, `lowering not confirmed, escalated${c.last_escalation ? ` to ${c.last_escalation.means} at ${c.last_escalation.at}` : ''}: ${c.why}`, fix(c)));
    }
    if (results.length === 0) results.push(pass('fuse', `${status.fuse.length} connector(s) under the fuse controller, each within its share of site.limit_a ${config.site.limit_a} A or on its way`));
    return results;
  },
};
