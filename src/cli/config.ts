import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../config/load.js';

export const DEFAULT_CONFIG_PATH = '/etc/metergate/config.yaml';

/** Loads the config or exits 78 with every problem listed; for commands that need one. */
export function loadConfigOrExit(path: string): ReturnType<typeof loadConfig> {
  try {
    return loadConfig(path);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(err.exitCode);
    }
    throw err;
  }
}

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('Configuration tools');
  config
    .command('check')
    .description('Validate a config file without starting; lists every problem as path: message')
    .argument('[file]', 'config file', DEFAULT_CONFIG_PATH)
    // Same flag as run and doctor, so `metergate config check --config X` does what it says.
    .option('-c, --config <file>', 'config file (instead of the argument)')
    .action((fileArg: string, opts: { config?: string }) => {
      const file = opts.config ?? fileArg;
      const cfg = loadConfigOrExit(file);
      process.stdout.write(
        `${file}: OK (${cfg.meters.length} meter(s) on ${cfg.buses.length} bus(es)${cfg.mqtt ? `, broker ${cfg.mqtt.url}` : ', no broker'}). Next: \`metergate doctor${file === DEFAULT_CONFIG_PATH ? '' : ` --config ${file}`}\`\n`,
      );
    });
}
