// The command line as an installer uses it: `config check` (exit 78 with every problem as
// `path: message`) and `token create | list | revoke` against a real data directory, with
// the created token used over real HTTP.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createContext } from '../../src/daemon.js';
import { HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log.js';
import { databasePath, openDatabase } from '../../src/store/db.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { encoding: 'utf8', env: { ...process.env, METERGATE_LOG_LEVEL: 'warn' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('metergate CLI', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-cli-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('config check: exit 78 listing every problem as path: message; exit 0 on a good file', () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      [
        'organization_id: not-a-uuid',
        'buses:',
        '  - { name: a, type: rtu }',
        'meters:',
        `  - { resource_id: ${ORG}, bus: a, unit_id: 300, profile: sdm630 }`,
        "mqtt: { url: 'mqtt://broker:1883' }",
        'bogus: 1',
        '',
      ].join('\n'),
    );
    const r = cli('config', 'check', bad);
    expect(r.status).toBe(78);
    const lines = r.stderr.split('\n').map((l) => l.trim());
    for (const p of [
      'organization_id: must match format "uuid"',
      'buses[0].port: is required',
      'meters[0].unit_id: must be <= 247',
      'mqtt.url: must start with mqtts:// (TLS is mandatory; plain mqtt:// is refused)',
      'bogus: is not a known setting',
    ]) {
      expect(lines, r.stderr).toContain(p);
    }
    expect(r.stdout).toBe('');

    const good = join(dir, 'good.yaml');
    writeFileSync(good, `organization_id: ${ORG}\ndata_dir: ${join(dir, 'data')}\n`);
    const ok = cli('config', 'check', good);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/OK/);
    // --config as with run and doctor
    expect(cli('config', 'check', '--config', good).stdout).toContain(`${good}: OK`);
    expect(cli('config', 'check', '--config', bad).status).toBe(78);

    // `run` refuses the bad file the same way, before starting anything.
    expect(cli('run', '--config', bad).status).toBe(78);
  });

  it('token create prints the token once; list never shows it; revoke stops it working over HTTP', async () => {
    const dataDir = join(dir, 'tokens');
    const config = join(dir, 'tokens.yaml');
    writeFileSync(config, `organization_id: ${ORG}\ndata_dir: ${dataDir}\n`);

    const created = cli('token', 'create', '--type', 'cdrs', '--name', 'charger platform', '--config', config);
    expect(created.status, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^mg_[a-z0-9]{10}_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toMatch(/shown only now/);
    const id = /^mg_([a-z0-9]{10})_/.exec(token)![1];

    const list = cli('token', 'list', '--json', '--config', config);
    expect(list.status).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([{ id, name: 'charger platform', type: 'cdrs', created_at: expect.any(String), revoked_at: null }]);
    expect(list.stdout + list.stderr).not.toContain(token.slice(-43));
    // Stored hashed: the secret part is nowhere in the database file.
    expect(readFileSync(databasePath(dataDir)).includes(Buffer.from(token.slice(-43)))).toBe(false);

    const status = async () => {
      const cfg = validateConfig({ organization_id: ORG, data_dir: dataDir, http: { port: 0 }, prices: { source: 'none' } }, 'test', {});
      const ctx = createContext(cfg, { db: openDatabase(databasePath(dataDir)), logger: createLogger('silent') });
      const server = new HttpServer(ctx);
      await server.start();
      try {
        return (await fetch(`${server.url()}/api/v1/cdrs/TX-unknown`, { headers: { authorization: `Token ${token}` } })).status;
      } finally {
        await server.stop();
        ctx.db.close();
      }
    };
    expect(await status()).toBe(404); // authenticated: the session is merely unknown

    const revoked = cli('token', 'revoke', id, '--config', config);
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stdout).toMatch(/revoked 1 token/);
    expect(await status()).toBe(401);
    expect(cli('token', 'revoke', id, '--config', config).status).toBe(1); // nothing active left to revoke
  });
});
