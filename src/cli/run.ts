import type { Command } from 'commander';
import { runDaemon } from '../daemon.js';
import { DEFAULT_CONFIG_PATH, loadConfigOrExit } from './config.js';

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('Run the gateway daemon')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG_PATH)
    .action(async (opts: { config: string }) => {
      const config = loadConfigOrExit(opts.config);
      await runDaemon(config);
    });
}
