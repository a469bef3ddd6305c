import type { Command } from 'commander';
import { ConfigError, loadConfig, loadConfigWithSources, type LoadedConfig } from '../config/load.js';
import { redactUrl } from '../uplink/broker-nodes.js';

export { DEFAULT_CONFIG_PATH } from '../config/missing-file.js';
import { DEFAULT_CONFIG_PATH } from '../config/missing-file.js';

/** Loads the config or exits 78 with every problem listed; for commands that need one. */
export function loadConfigOrExit(path: string): ReturnType<typeof loadConfig> {
  return loadWithSourcesOrExit(path).config;
}

function loadWithSourcesOrExit(path: string): LoadedConfig {
  try {
    return loadConfigWithSources(path);
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
      const { config: cfg, env } = loadWithSourcesOrExit(file);
      const http = cfg.http.enabled ? `, HTTP on ${cfg.http.host}:${cfg.http.port}` : ', HTTP off';
      process.stdout.write(
        `${file}: OK (${cfg.meters.length} meter(s) on ${cfg.buses.length} bus(es)${cfg.mqtt ? `, broker ${cfg.mqtt.urls.length > 1 ? `nodes ${cfg.mqtt.urls.map(redactUrl).join(', ')}` : redactUrl(cfg.mqtt.url)}` : ', no broker'}${http}). Next: \`metergate doctor${file === DEFAULT_CONFIG_PATH ? '' : ` --config ${file}`}\`\n`,
      );
      // Names only, never values: a variable may hold a password or a token.
      for (const [setting, name] of env.setBy) {
        const replaced = env.replaced.filter((r) => r.by === name).map((r) => `; replaces ${r.path} of the file`);
        process.stdout.write(`  ${setting} from ${name}${replaced.join('')}\n`);
      }
    });
}
