import type { Command } from 'commander';
import { databasePath, openDatabase } from '../store/db.js';
import { describeReasonCode, readHeldGroups, requestRetry } from '../store/outbox-held.js';
import { DEFAULT_CONFIG_PATH, loadConfigOrExit } from './config.js';

/**
 * `metergate outbox retry`: after the broker's ACL (or the config) is fixed, the messages
 * it refused go out again without waiting for the next reconnect. The running daemon takes
 * the request from the database within a few seconds; without a running daemon it is
 * taken at the next start (which retries after connecting anyway).
 */
export function registerOutboxCommands(program: Command): void {
  const outbox = program.command('outbox').description('Messages waiting for the broker');
  outbox
    .command('retry')
    .description('Send the messages the broker refused (held) again, oldest first per topic; they are held again if it still refuses')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG_PATH)
    .option('--clock', 'also release messages quarantined because their timestamp lay ahead of the clock after a clock step (docs/clock-safety.md); they are sent once the clock has passed their time')
    .action((opts: { config: string; clock?: boolean }) => {
      const config = loadConfigOrExit(opts.config);
      const db = openDatabase(databasePath(config.data_dir));
      try {
        const groups = readHeldGroups(db);
        for (const g of groups) {
          const why = g.reason === 'refused' ? `refused (${describeReasonCode(g.reasonCode)})` : 'quarantined (timestamp ahead of the clock)';
          process.stdout.write(`${String(g.count).padStart(7)}  ${g.topic}  ${why} since ${new Date(g.sinceMs).toISOString()}\n`);
        }
        const refused = groups.filter((g) => g.reason === 'refused').reduce((n, g) => n + g.count, 0);
        const clock = groups.filter((g) => g.reason === 'clock').reduce((n, g) => n + g.count, 0);
        if (refused === 0 && (clock === 0 || !opts.clock)) {
          process.stdout.write(clock > 0 ? `nothing refused is held; ${clock} message(s) are quarantined for their timestamp: add --clock to release them\n` : 'no held messages\n');
          return;
        }
        requestRetry(db, Date.now(), opts.clock === true);
        process.stdout.write(
          `retry requested for ${refused} refused${opts.clock ? ` and ${clock} quarantined` : ''} message(s): the running daemon sends the oldest of each topic within a few seconds and, once the broker takes it, the rest (held again if the broker still refuses; see /healthz or \`metergate doctor\`)\n`,
        );
      } finally {
        db.close();
      }
    });
}
