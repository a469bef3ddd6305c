import { resolve } from 'node:path';
import type { Command } from 'commander';
import { runDaemon } from '../daemon.js';
import { createLogger } from '../log.js';
import { InstanceLockedError, takeInstanceLock } from '../ops/instance-lock.js';
import { startupFailureLine } from '../ops/startup-failure.js';
import { SchemaTooNewError } from '../store/db.js';
import { DEFAULT_CONFIG_PATH, loadConfigOrExit } from './config.js';

/** Exit status of a run refused because another one holds the data directory (EX_TEMPFAIL: it may be gone at the next try). */
export const EXIT_INSTANCE_LOCKED = 75;

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('Run the gateway daemon')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG_PATH)
    .addHelpText('after', '\nExit status: 0 stopped by SIGTERM/SIGINT; 1 start-up failed (one line on stderr says why); 70 stopped on an internal error; 75 another metergate run holds the data directory; 78 config invalid or database newer than this version (systemd does not restart it).')
    .action(async (opts: { config: string }) => {
      const config = loadConfigOrExit(opts.config);
      // Before the database, the meters, the broker and the listeners: a second daemon on
      // the same data directory is refused here, having touched nothing (ops/instance-lock.ts).
      try {
        takeInstanceLock(config.data_dir, { configPath: resolve(opts.config) });
      } catch (err) {
        if (err instanceof InstanceLockedError) {
          process.stderr.write(`metergate: ${err.message}\n`);
          process.exit(EXIT_INSTANCE_LOCKED);
        }
        process.stderr.write(`${startupFailureLine(err, config)}\n`);
        process.exit(1);
      }
      try {
        await runDaemon(config, { configPath: opts.config });
      } catch (err) {
        if (err instanceof SchemaTooNewError) {
          // Restarting cannot help (78 is in the unit's RestartPreventExitStatus): say what can.
          process.stderr.write(`metergate: ${config.data_dir}: ${err.message}\n`);
          process.exit(78);
        }
        // Failed before the daemon had a logger of its own (opening the database): the same log line and human line as a failed start.
        createLogger(config.log_level).fatal({ err }, 'start-up failed');
        process.stderr.write(`${startupFailureLine(err, config)}\n`);
        process.exit(1);
      }
    });
}

