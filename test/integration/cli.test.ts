// The command line as an installer uses it: `config check` (exit 78 with every problem as
// `path: message`) and `token create | list | revoke` against a real data directory, with
// the created token used over real HTTP.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EX_CONFIG, validateConfig } from '../../src/config/load.js';
import { createContext } from '../../src/daemon.js';
import { buildChargingServices } from '../../src/planning/charging-services.js';
import { HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log.js';
import { databasePath, openDatabase } from '../../src/store/db.js';
import { EXIT_INSTANCE_LOCKED } from '../../src/cli/run.js';
import { UNCAUGHT_EXIT_CODE } from '../../src/ops/process-faults.js';
import { unitSettings } from '../helpers/unit-file.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

function cli(...args: string[]) {
  return cliWithEnv({}, ...args);
}

function cliWithEnv(env: NodeJS.ProcessEnv, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { encoding: 'utf8', env: { ...process.env, METERGATE_LOG_LEVEL: 'warn', ...env } });
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

  it('a missing config file says so and how to give one with -c, naming the default (issue 31 point 6)', () => {
    const missing = join(dir, 'no-such.yaml');
    for (const args of [['token', 'list', '-c', missing], ['run', '--config', missing], ['config', 'check', missing]]) {
      const r = cli(...args);
      expect(r.status, args.join(' ')).toBe(78);
      expect(r.stderr).toBe(
        `${missing}: no config file there\n  (file): no such file (ENOENT)\n  hint: check the path given with -c (a relative path is read from the current directory; without -c the default is /etc/metergate/config.yaml); to start one: copy config/example.yaml (in a clone) or /opt/metergate/config/example.yaml, or try \`metergate demo\`\n`,
      );
    }
    // Without -c: the default is named and -c offered (only where this machine has no /etc/metergate/config.yaml).
    if (!existsSync('/etc/metergate/config.yaml')) {
      const r = cli('token', 'list');
      expect(r.status).toBe(78);
      expect(r.stderr).toContain('/etc/metergate/config.yaml: no config file there');
      expect(r.stderr).toContain('hint: without -c every command reads /etc/metergate/config.yaml: give your config file with -c FILE (--config FILE)');
    }
  });

  it('run --help lists every exit status the daemon uses, each with its meaning (issue 31 point 11)', () => {
    const r = cli('run', '--help');
    expect(r.status, r.stderr).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith('Exit status: '));
    expect(line, r.stdout).toBeDefined();
    const statuses = new Map([...line!.slice('Exit status: '.length).split('; ')].map((entry) => {
      const m = /^(\d+) (.+?)\.?$/.exec(entry);
      expect(m, entry).not.toBeNull();
      return [Number(m![1]), m![2]!] as const;
    }));
    // The codes as the code defines them, not copied: a new one or a changed one shows here.
    expect([...statuses.keys()]).toEqual([0, 1, UNCAUGHT_EXIT_CODE, EXIT_INSTANCE_LOCKED, EX_CONFIG]);
    expect(statuses.get(EX_CONFIG)).toMatch(/config invalid.*systemd does not restart it/);
    expect(statuses.get(EXIT_INSTANCE_LOCKED)).toMatch(/another metergate run holds the data directory/);
    // What the help says systemd does not restart is what the unit keeps it from restarting.
    const unit = readFileSync('systemd/metergate.service', 'utf8');
    const prevented = [...statuses].filter(([, meaning]) => meaning.includes('does not restart')).map(([code]) => String(code));
    expect(unitSettings(unit, 'RestartPreventExitStatus').flatMap((v) => v.split(/\s+/))).toEqual(prevented);
  });

  it('in a clone after the build, `npx metergate COMMAND` and `node dist/cli.js COMMAND` run the CLI (as the README says)', () => {
    expect(existsSync('dist/cli.js'), 'npm run build first').toBe(true);
    const npx = spawnSync('npx', ['--no', 'metergate', 'config', 'check', 'config/demo.yaml'], { encoding: 'utf8' });
    expect(npx.status, npx.stderr).toBe(0);
    expect(npx.stdout).toMatch(/^config\/demo\.yaml: OK/);
    const node = spawnSync(process.execPath, ['dist/cli.js', 'config', 'check', 'config/demo.yaml'], { encoding: 'utf8' });
    expect(node.status, node.stderr).toBe(0);
    expect(node.stdout).toBe(npx.stdout);
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
    ]) {
      expect(lines, r.stderr).toContain(p);
    }
    expect(r.stderr).toMatch(/^ {2}bogus: is not a known setting \(known here: organization_id, .*\)$/m);
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

  it('config check: every layer at once, with "did you mean" for keys and variables and the environment named', () => {
    const bad = join(dir, 'layers.yaml');
    writeFileSync(
      bad,
      [
        `organization_id: ${ORG}`,
        'pol: { interval_ms: 1000 }', // typo of poll
        'buses:',
        '  - { name: a, type: tcp, host: 127.0.0.1 }',
        'meters:',
        `  - { resource_id: ${ORG}, bus: b, unit_id: 300, profile: sdm630 }`, // schema and cross check on one meter
        "mqtt: { url: 'mqtts://broker:8883', usrname: gw, username: gw }", // typo, and a username without a password
        '',
      ].join('\n'),
    );
    const r = cliWithEnv({ METERGATE_MQTT__PASWORD: 'pw-secret', METERGATE_HTTP__PORT: 'eighty' }, 'config', 'check', bad);
    expect(r.status, r.stderr).toBe(78);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toContain('pw-secret');
    const lines = r.stderr.split('\n').slice(1).map((l) => l.trim()).filter(Boolean);
    expect(lines).toEqual([
      'METERGATE_MQTT__PASWORD: names no setting; did you mean METERGATE_MQTT__PASSWORD?',
      'pol: is not a known setting; did you mean poll?',
      'meters[0].unit_id: must be <= 247',
      'mqtt.usrname: is not a known setting; did you mean username?',
      'http.port: must be integer (from the environment: METERGATE_HTTP__PORT)',
      'meters[0].bus: no bus named "b" (known: a)',
      'mqtt.username: has no password: set mqtt.password_file (or mqtt.password, or METERGATE_MQTT__PASSWORD in the environment)',
    ]);
  });

  it("config check: the README's environment example works with the shipped config/example.yaml", () => {
    const example = 'config/example.yaml';
    const readme = { METERGATE_MQTT__PASSWORD: 'pw-secret', METERGATE_HTTP__PORT: '9090' };
    // The password replaces the shipped password_file line; the ENTSO-E token file is still missing here.
    const partly = cliWithEnv(readme, 'config', 'check', example);
    expect(partly.status).toBe(78);
    expect(partly.stderr.split('\n').slice(1).filter(Boolean).map((l) => l.trim())).toEqual([
      'prices.entsoe.security_token_file: /etc/metergate/entsoe-token does not exist (write your ENTSO-E Transparency Platform API token into it, or set prices.source: none)',
    ]);
    const ok = cliWithEnv({ ...readme, METERGATE_PRICES__ENTSOE__SECURITY_TOKEN: 'token-secret' }, 'config', 'check', example);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`${example}: OK (1 meter(s) on 1 bus(es), broker mqtts://mqtt.example.com:8883, HTTP on 127.0.0.1:9090)`);
    expect(ok.stdout).toContain('  mqtt.password from METERGATE_MQTT__PASSWORD; replaces mqtt.password_file of the file');
    expect(ok.stdout).toContain('  http.port from METERGATE_HTTP__PORT');
    expect(ok.stdout).not.toMatch(/pw-secret|token-secret/);
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
    // The table a person reads: a header naming the columns, then the token under them (issue 31 point 11).
    const second = cli('token', 'create', '--type', 'price_forecast', '--name', 'tariff app', '--config', config);
    expect(second.status, second.stderr).toBe(0);
    const secondId = /^mg_([a-z0-9]{10})_/.exec(second.stdout)![1]!;
    const table = cli('token', 'list', '--config', config);
    expect(table.status, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ID +TYPE +CREATED \(UTC\) +STATE +NAME$/);
    const at = (header: string) => lines[0]!.indexOf(header);
    const cells = (line: string) => ({ id: line.slice(0, at('TYPE')).trim(), type: line.slice(at('TYPE'), at('CREATED')).trim(), created: line.slice(at('CREATED'), at('STATE')).trim(), state: line.slice(at('STATE'), at('NAME')).trim(), name: line.slice(at('NAME')) });
    expect(lines.slice(1).map(cells).sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { id, type: 'cdrs', created: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/), state: 'active', name: 'charger platform' },
      { id: secondId, type: 'price_forecast', created: expect.stringMatching(/Z$/), state: 'active', name: 'tariff app' },
    ]);
    expect(table.stdout).not.toContain(token.slice(-43));
    expect(cli('token', 'revoke', secondId, '--config', config).status).toBe(0);
    // Stored hashed: the secret part is nowhere in the database file.
    expect(readFileSync(databasePath(dataDir)).includes(Buffer.from(token.slice(-43)))).toBe(false);

    const status = async () => {
      const cfg = validateConfig({ organization_id: ORG, data_dir: dataDir, http: { port: 0 }, prices: { source: 'none' } }, 'test', {});
      const ctx = createContext(cfg, { db: openDatabase(databasePath(dataDir)), logger: createLogger('silent') });
      const server = new HttpServer({ ...ctx, charging: buildChargingServices(ctx) });
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
