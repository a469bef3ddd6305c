import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readlinkSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRoot, peer } from '../helpers/peers.js';

const INSTALL = resolve('scripts/install.sh');
const hasBuild = peer('a build in dist/', existsSync(resolve('dist/cli.js')), 'npm run build');
const hasSystemctl = peer('systemctl', spawnSync('systemctl', ['--version']).status === 0);
const hasUseradd = peer('useradd', spawnSync('sh', ['-c', 'command -v useradd']).status === 0);
const skip = !isRoot || !hasBuild || !hasSystemctl || !hasUseradd;

/** A minimal Debian-like root file system: just the account databases useradd edits. */
function makeRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'mg-root-'));
  mkdirSync(join(root, 'etc'));
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\ndialout:x:20:\n');
  writeFileSync(join(root, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o640 });
  writeFileSync(join(root, 'etc/gshadow'), 'root:*::\ndialout:*::\n', { mode: 0o640 });
  return root;
}

function install(root: string, ...args: string[]) {
  const r = spawnSync('bash', [INSTALL, '--root', root, '--no-npm', ...args], { encoding: 'utf8' });
  return { ...r, output: r.stdout + r.stderr };
}

/** Like existsSync, but true for a dangling symlink (enable links point into the target root's /etc). */
const lexists = (p: string) => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};
const mode = (p: string) => (statSync(p).mode & 0o7777).toString(8);

describe.skipIf(skip)('scripts/install.sh into a temporary root', () => {
  let root = '';
  beforeAll(() => {
    root = makeRoot();
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const at = (p: string) => join(root, p);

  it('installs user, program, config, data directory and an enabled service', () => {
    const r = install(root);
    expect(r.status, r.output).toBe(0);
    const passwd = readFileSync(at('etc/passwd'), 'utf8');
    const user = passwd.split('\n').find((l) => l.startsWith('metergate:'))!.split(':');
    expect(user[6]).toBe('/usr/sbin/nologin');
    expect(readFileSync(at('etc/group'), 'utf8')).toMatch(/^dialout:x:20:metergate$/m);

    expect(existsSync(at('opt/metergate/dist/cli.js'))).toBe(true);
    expect(readFileSync(at('etc/metergate/config.yaml'), 'utf8')).toBe(readFileSync('config/example.yaml', 'utf8'));
    expect(mode(at('etc/metergate/config.yaml'))).toBe('640');
    expect(statSync(at('etc/metergate/config.yaml')).gid).toBe(Number(user[3]));
    expect(mode(at('var/lib/metergate'))).toBe('750');
    expect(statSync(at('var/lib/metergate')).uid).toBe(Number(user[2]));

    const unit = readFileSync(at('etc/systemd/system/metergate.service'), 'utf8');
    expect(unit).toMatch(/^ExecStart=\S*node (--\S+ )*\/opt\/metergate\/dist\/cli\.js run --config \/etc\/metergate\/config\.yaml$/m);
    // --max-opt=2 caps V8 at Maglev, which a Node before 22 does not enable (the unit says why): the unit names it only for a Node that has it.
    expect(unit.includes(' --max-opt=2 ')).toBe(Number(process.versions.node.split('.')[0]) >= 22);
    expect(readlinkSync(at('etc/systemd/system/multi-user.target.wants/metergate.service'))).toBe('/etc/systemd/system/metergate.service');
    expect(readFileSync(at('usr/local/bin/metergate'), 'utf8')).toContain('/opt/metergate/dist/cli.js');
  });

  it('runs from where it was installed', () => {
    symlinkSync(resolve('node_modules'), at('opt/metergate/node_modules'));
    const r = spawnSync(process.execPath, [at('opt/metergate/dist/cli.js'), '--version'], { encoding: 'utf8' });
    expect(r.stdout.split('\n')[0]).toBe(`metergate ${JSON.parse(readFileSync('package.json', 'utf8')).version}`);
  });

  it('is idempotent and never overwrites an edited config', () => {
    writeFileSync(at('etc/metergate/config.yaml'), '# edited by the installer\n');
    writeFileSync(at('var/lib/metergate/metergate.db'), 'data');
    const passwdBefore = readFileSync(at('etc/passwd'), 'utf8');
    const r = install(root);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('kept existing');
    expect(readFileSync(at('etc/metergate/config.yaml'), 'utf8')).toBe('# edited by the installer\n');
    expect(readFileSync(at('etc/passwd'), 'utf8')).toBe(passwdBefore);
    expect(readFileSync(at('etc/group'), 'utf8').match(/metergate/g)!.length).toBe(2); // own group + dialout member
    expect(readFileSync(at('var/lib/metergate/metergate.db'), 'utf8')).toBe('data');
    // --no-npm keeps the node_modules that was there
    expect(existsSync(at('opt/metergate/node_modules'))).toBe(true);
  });

  it('--uninstall removes program and service but keeps config, data and user', () => {
    const r = install(root, '--uninstall');
    expect(r.status, r.output).toBe(0);
    expect(existsSync(at('opt/metergate'))).toBe(false);
    expect(existsSync(at('etc/systemd/system/metergate.service'))).toBe(false);
    expect(lexists(at('etc/systemd/system/multi-user.target.wants/metergate.service'))).toBe(false);
    expect(existsSync(at('usr/local/bin/metergate'))).toBe(false);
    expect(readFileSync(at('etc/metergate/config.yaml'), 'utf8')).toBe('# edited by the installer\n');
    expect(readFileSync(at('var/lib/metergate/metergate.db'), 'utf8')).toBe('data');
    expect(readFileSync(at('etc/passwd'), 'utf8')).toContain('metergate:');
  });

  it('reinstalls over kept data, then --uninstall --purge removes everything', () => {
    expect(install(root).status).toBe(0);
    expect(readFileSync(at('etc/metergate/config.yaml'), 'utf8')).toBe('# edited by the installer\n');
    const r = install(root, '--uninstall', '--purge');
    expect(r.status, r.output).toBe(0);
    for (const p of ['opt/metergate', 'etc/metergate', 'var/lib/metergate', 'etc/systemd/system/metergate.service']) {
      expect(lexists(at(p)), p).toBe(false);
    }
    expect(readFileSync(at('etc/passwd'), 'utf8')).not.toContain('metergate');
  });

  it('refuses a Node.js older than 20, saying which one it found', () => {
    const bin = mkdtempSync(join(tmpdir(), 'mg-oldnode-'));
    try {
      writeFileSync(join(bin, 'node'), '#!/bin/sh\necho 18\n', { mode: 0o755 });
      const r = spawnSync('bash', [INSTALL, '--root', root, '--no-npm'], { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('Node.js 18 is too old: metergate needs 20 or newer');
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('refuses unknown options and --purge without --uninstall', () => {
    expect(install(root, '--bogus').status).toBe(64);
    expect(install(root, '--purge').status).toBe(64);
  });
});
