// doctor: messages the broker refused or held for a future timestamp.
import { existsSync } from 'node:fs';
import { databasePath } from '../../store/db.js';
import { withReadOnlyDb } from './read-only-db.js';
import { describeReasonCode, readHeldGroups } from '../../store/outbox-held.js';
import { refusalFix } from '../../uplink/refusals.js';
import { errorMessage, fail, pass, skip, warn, type CheckResult, type DoctorCheck } from './types.js';

/**
 * Messages the broker refused for good (held per topic, never deleted) and messages
 * quarantined for a timestamp ahead of the clock: one FAIL line per topic with the fix.
 * Read-only, safe while the daemon runs.
 */
export const outboxCheck: DoctorCheck = {
  name: 'outbox',
  needsConfig: true,
  async run(env) {
    const config = env.config!;
    const path = databasePath(config.data_dir);
    if (!existsSync(path)) return [skip('outbox', 'no database yet')];
    try {
      return await withReadOnlyDb(path, ({ db, hasTable }) => {
        if (!hasTable('outbox_held')) return [pass('outbox', 'no held messages (the daemon has not run this version yet)')];
        const groups = readHeldGroups(db);
        if (groups.length === 0) return [pass('outbox', 'no held messages: nothing refused by the broker, nothing quarantined')];
        return groups.map((g): CheckResult => {
          const since = new Date(g.sinceMs).toISOString();
          if (g.reason === 'refused') {
            return fail('outbox held', `${g.count} message(s) for ${g.topic} held since ${since}: the broker refused them (${describeReasonCode(g.reasonCode)})`, refusalFix(g.reasonCode, g.topic, config.mqtt?.username));
          }
          return fail(
            'outbox clock',
            `${g.count} message(s) for ${g.topic} quarantined since ${since}: stamped ahead of the trusted clock after it stepped back (docs/clock-safety.md)`,
            'check the clock line and `journalctl -u metergate | grep "wall clock stepped"`; if their timestamps are right, `metergate outbox retry --clock` sends them once the clock has passed them',
          );
        });
      });
    } catch (err) {
      return [warn('outbox', `${path}: ${errorMessage(err)}`, 'see the database line')];
    }
  },
};
