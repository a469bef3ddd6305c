import type { Command } from 'commander';
import { runDaemon } from '../daemon.js';
import { SchemaTooNewError } from '../store/db.js';
import { DEFAULT_CONFIG_PATH, loadConfigOrExit } from './config.js';

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('Run the gateway daemon')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG_PATH)
    .action(async (opts: { config: string }) => {
      const config = loadConfigOrExit(opts.config);
      try {
        await runDaemon(config, { configPath: opts.config });
      } catch (err) {
        if (!(err instanceof SchemaTooNewError)) throw err;
        // Restarting cannot help (78 is in the unit's RestartPreventExitStatus): say what can.
        process.stderr.write(`metergate: ${config.data_dir}: ${err.message}\n`);
        process.exit(78);
      }
    });
}
