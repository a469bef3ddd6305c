import type { Command } from 'commander';
import { databasePath, openDatabase } from '../store/db.js';
import { isTokenType, TOKEN_TYPES, TokenStore } from '../store/tokens.js';
import { DEFAULT_CONFIG_PATH, loadConfigOrExit } from './config.js';
import { tokenTable } from './token-table.js';

function withStore<T>(configPath: string, fn: (store: TokenStore) => T): T {
  const config = loadConfigOrExit(configPath);
  const db = openDatabase(databasePath(config.data_dir));
  try {
    return fn(new TokenStore(db));
  } finally {
    db.close();
  }
}

export function registerTokenCommands(program: Command): void {
  const token = program.command('token').description('HTTP API tokens (stored hashed; a token is shown only when created)');
  token
    .command('create')
    .description('Create a token and print it once')
    .requiredOption('--type <type>', `token type: ${TOKEN_TYPES.join(' | ')}`)
    .requiredOption('--name <name>', 'who or what uses it, e.g. the platform name')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG_PATH)
    .action((opts: { type: string; name: string; config: string }) => {
      if (!isTokenType(opts.type)) {
        process.stderr.write(`--type must be one of ${TOKEN_TYPES.join(', ')}\n`);
        process.exit(64);
      }
      const name = opts.name.trim();
      if (name === '' || name.length > 200) {
        process.stderr.write('--name must be 1 to 200 characters\n');
        process.exit(64);
      }
      const type = opts.type;
      const { token: secret, info } = withStore(opts.config, (store) => store.create({ name, type, nowMs: Date.now() }));
      const scheme = type === 'price_forecast' ? 'Bearer' : 'Token';
      process.stdout.write(`${secret}\n`);
      process.stderr.write(`token ${info.id} (${info.type}, "${info.name}") created; it is shown only now. Send it as: Authorization: ${scheme} <token>\n`);
    });
  token
    .command('list')
    .description('List tokens (never their secrets)')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG_PATH)
    .option('--json', 'print JSON')
    .action((opts: { config: string; json?: boolean }) => {
      const tokens = withStore(opts.config, (store) => store.list());
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(tokens.map((t) => ({ id: t.id, name: t.name, type: t.type, created_at: new Date(t.createdAtMs).toISOString(), revoked_at: t.revokedAtMs === null ? null : new Date(t.revokedAtMs).toISOString() })), null, 2)}\n`);
        return;
      }
      if (tokens.length === 0) {
        process.stdout.write('no tokens; create one with: metergate token create --type cdrs --name NAME\n');
        return;
      }
      for (const line of tokenTable(tokens)) process.stdout.write(`${line}\n`);
    });
  token
    .command('revoke')
    .description('Revoke a token by its id (or every active token with that name)')
    .argument('<id-or-name>')
    .option('-c, --config <file>', 'config file', DEFAULT_CONFIG_PATH)
    .action((idOrName: string, opts: { config: string }) => {
      const n = withStore(opts.config, (store) => store.revoke(idOrName, Date.now()));
      if (n === 0) {
        process.stderr.write(`no active token with id or name "${idOrName}"\n`);
        process.exit(1);
      }
      process.stdout.write(`revoked ${n} token(s)\n`);
    });
}
