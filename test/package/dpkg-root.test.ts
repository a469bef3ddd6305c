// The amd64 package installed with dpkg into a temporary root (dpkg --root with
// --force-script-chrootless: the maintainer scripts run on this machine with DPKG_ROOT set,
// as for chrootless bootstrapping): install, upgrade over it with no terminal (stdin
// closed, no --force-conf*: what a fleet tool does), a downgrade refused by the database,
// remove, purge; the installed units pass systemd-analyze verify; and a gateway installed
// with the conffile-era package (0.1.0 shipped /etc/metergate/config.yaml as a conffile)
// upgrades without a prompt after firstboot rewrote its configuration.
// The same temporary root is used with CI set: installing onto the CI machine itself would
// leave a user and files behind for later runs.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRoot, systemdAnalyzeFound } from '../helpers/peers.js';
import { verifyUnit } from '../helpers/unit-file.js';
import { BUNDLED_NODE, debPath, hasDeb, PACKAGE_NODE, VERSION } from './deb.js';

const hasSystemdAnalyze = systemdAnalyzeFound();
const ready = [hasDeb('amd64'), isRoot, hasSystemdAnalyze].every(Boolean);
const NEWER = `${VERSION}+upgrade1`;
const OLDER = `${VERSION}~conffile`;
const PROBE_MIGRATION = 997;

/** Like existsSync, but true for a link that points into the root's /lib (dangling from here). */
const lexists = (p: string) => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

/** A Debian-like root with just what dpkg and useradd need. */
function makeRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'mg-dpkg-root-'));
  for (const d of ['etc', 'var/lib/dpkg/info', 'var/lib/dpkg/updates', 'var/log', 'usr/bin', 'boot/firmware']) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'var/lib/dpkg/status'), '');
  writeFileSync(join(root, 'var/lib/dpkg/available'), '');
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\ndialout:x:20:\n');
  writeFileSync(join(root, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o640 });
  writeFileSync(join(root, 'etc/gshadow'), 'root:*::\ndialout:*::\n', { mode: 0o640 });
  return root;
}

/**
 * The next release, built by scripts/package --version from these sources (so the test
 * sees the version stamped into the program), plus one more migration, so the upgrade has
 * a schema change to apply.
 */
function newerPackage(dir: string): string {
  const built = join(dir, 'built');
  const r = spawnSync('bash', ['scripts/package', '--arch', 'amd64', '--version', NEWER, '--no-lint', '--gzip', '--out', built], { encoding: 'utf8', timeout: 1_200_000 });
  if (r.status !== 0) throw new Error(`scripts/package --version ${NEWER} failed:\n${r.stderr}`);
  const raw = join(dir, 'raw');
  execFileSync('dpkg-deb', ['-R', join(built, `metergate_${NEWER}_amd64.deb`), raw]);
  writeFileSync(join(raw, `opt/metergate/dist/store/migrations/${PROBE_MIGRATION}_upgrade_probe.sql`), 'CREATE TABLE upgrade_probe (id INTEGER PRIMARY KEY);\n');
  const out = join(dir, `metergate_${NEWER}_amd64.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-b', raw, out], { stdio: 'ignore' });
  rmSync(raw, { recursive: true, force: true });
  return out;
}

/**
 * The package as 0.1.0 laid it out, made from this one: /etc/metergate/config.yaml shipped
 * (the example) and listed in conffiles, at a lower version than this one.
 */
function conffileEraPackage(dir: string): string {
  const raw = join(dir, 'raw-old');
  execFileSync('dpkg-deb', ['-R', debPath('amd64'), raw]);
  const control = join(raw, 'DEBIAN/control');
  writeFileSync(control, readFileSync(control, 'utf8').replace(/^Version: .*$/m, `Version: ${OLDER}`));
  mkdirSync(join(raw, 'etc/metergate'), { recursive: true });
  writeFileSync(join(raw, 'etc/metergate/config.yaml'), readFileSync('config/example.yaml'));
  writeFileSync(join(raw, 'DEBIAN/conffiles'), '/etc/metergate/config.yaml\n');
  const out = join(dir, `metergate_${OLDER}_amd64.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-b', raw, out], { stdio: 'ignore' });
  rmSync(raw, { recursive: true, force: true });
  return out;
}

const FIRSTBOOT_YAML = `organization_id: 3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11\nmqtt: { url: 'mqtts://broker.example:8883', username: gw, password_file: /etc/metergate/mqtt-password }\nprices: { source: none }\n`;

/** dpkg on a temporary root, as a fleet tool runs it: no terminal, stdin closed, no --force-conf*. */
function dpkgOn(root: string, ...args: string[]) {
  const r = spawnSync('dpkg', [`--root=${root}`, '--force-script-chrootless', '--force-depends', '--force-not-root', `--log=${join(root, 'var/log/dpkg.log')}`, ...args], {
    encoding: 'utf8',
    timeout: 300_000,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return { status: r.status, output: r.stdout + r.stderr };
}

describe.skipIf(!ready)('the amd64 package in a temporary root', () => {
  let root = '';
  let work = '';
  const at = (p: string) => join(root, p);
  const dpkg = (...args: string[]) => dpkgOn(root, ...args);
  /** Runs a module of the installed program with the installed Node (the package's own). */
  const installedNode = (script: string) => spawnSync(at(PACKAGE_NODE), ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
  const installedCli = (...args: string[]) => spawnSync(at(PACKAGE_NODE), [at('opt/metergate/dist/cli.js'), ...args], { encoding: 'utf8', timeout: 120_000 });
  const openInstalledDb = () =>
    installedNode(
      `import { openDatabase } from '${at('opt/metergate/dist/store/db.js')}';
       const db = openDatabase('${at('var/lib/metergate/metergate.db')}');
       console.log(JSON.stringify(db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()));
       db.close();`,
    );

  beforeAll(() => {
    root = makeRoot();
    work = mkdtempSync(join(tmpdir(), 'mg-dpkg-work-'));
  });
  afterAll(() => {
    for (const d of [root, work]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('installs: user in dialout, program, its Node, CLI, unit enabled, config from the example root:metergate 0640, data directory', () => {
    const r = dpkg('-i', debPath('amd64'));
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('metergate: wrote /etc/metergate/config.yaml from /opt/metergate/config/example.yaml');
    expect(readFileSync(at('etc/metergate/config.yaml'), 'utf8')).toBe(readFileSync('config/example.yaml', 'utf8'));
    // Not a conffile: dpkg has no claim on it, so no upgrade asks about it.
    const status = readFileSync(at('var/lib/dpkg/status'), 'utf8');
    expect(status).not.toMatch(/^Conffiles:/m);
    const version = installedCli('--version');
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.split('\n').slice(0, 2)).toEqual([`metergate ${VERSION}`, expect.stringMatching(new RegExp(`^node ${BUNDLED_NODE.replace(/\./g, '\\.')} `))]);
    const user = readFileSync(at('etc/passwd'), 'utf8').split('\n').find((l) => l.startsWith('metergate:'))!.split(':');
    expect(user[6]).toBe('/usr/sbin/nologin');
    expect(readFileSync(at('etc/group'), 'utf8')).toMatch(/^dialout:x:20:metergate$/m);
    expect(existsSync(at('opt/metergate/dist/cli.js'))).toBe(true);
    expect(readFileSync(at('usr/bin/metergate'), 'utf8')).toContain('/opt/metergate/dist/cli.js');
    for (const unit of ['metergate.service', 'metergate-firstboot.service']) {
      expect(readlinkSync(at(`etc/systemd/system/multi-user.target.wants/${unit}`))).toBe(`/usr/lib/systemd/system/${unit}`);
    }
    const config = statSync(at('etc/metergate/config.yaml'));
    expect((config.mode & 0o777).toString(8)).toBe('640');
    expect([config.uid, config.gid]).toEqual([0, Number(user[3])]);
    const data = statSync(at('var/lib/metergate'));
    expect((data.mode & 0o777).toString(8)).toBe('750');
    expect(data.uid).toBe(Number(user[2]));
  });

  it('its units pass systemd-analyze verify (with the installed Node as the program they run)', () => {
    for (const unit of ['metergate.service', 'metergate-firstboot.service']) {
      const r = verifyUnit(at(`usr/lib/systemd/system/${unit}`), at(PACKAGE_NODE));
      expect(r.complaints, unit).toEqual([]);
      expect(r.status, r.stderr).toBe(0);
    }
  });

  it('takes metergate.yaml from the boot partition with the installed program (first boot)', () => {
    const yaml = FIRSTBOOT_YAML;
    writeFileSync(at('boot/firmware/metergate.yaml'), yaml);
    writeFileSync(at('boot/firmware/mqtt-password'), 'site secret\n');
    const r = installedCli('firstboot', '--root', root);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(at('etc/metergate/config.yaml'), 'utf8')).toBe(yaml);
    const gid = Number(readFileSync(at('etc/group'), 'utf8').split('\n').find((l) => l.startsWith('metergate:'))!.split(':')[2]);
    expect(statSync(at('etc/metergate/mqtt-password')).gid).toBe(gid);
    expect(existsSync(at('boot/firmware/mqtt-password'))).toBe(false);
  });

  it('upgrades with no terminal: keeps the edited config and the data, reports the new version, and migrates the database', { timeout: 1_500_000 }, () => {
    const edited = `${readFileSync(at('etc/metergate/config.yaml'), 'utf8')}\n# edited on site\n`;
    writeFileSync(at('etc/metergate/config.yaml'), edited);
    const before = openInstalledDb();
    expect(before.status, before.stderr).toBe(0);
    expect(JSON.parse(before.stdout)).not.toContain(PROBE_MIGRATION);

    const r = dpkg('-i', newerPackage(work));
    expect(r.status, r.output).toBe(0);
    expect(readFileSync(at('etc/metergate/config.yaml'), 'utf8')).toBe(edited);
    expect(readFileSync(at('etc/metergate/mqtt-password'), 'utf8')).toBe('site secret\n');
    expect(JSON.parse(readFileSync(at('opt/metergate/package.json'), 'utf8')).version).toBe(NEWER);
    // What boot_notification's software_version and --version report (src/version.ts).
    const version = installedCli('--version');
    expect(version.stdout.split('\n')[0], version.stderr).toBe(`metergate ${NEWER}`);
    const after = openInstalledDb();
    expect(after.status, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toEqual([...JSON.parse(before.stdout), PROBE_MIGRATION].sort((a: number, b: number) => a - b));
  });

  it('downgraded, the older program refuses the newer database instead of writing to it', () => {
    const r = dpkg('-i', debPath('amd64'));
    expect(r.status, r.output).toBe(0);
    const open = openInstalledDb();
    expect(open.status).not.toBe(0);
    expect(open.stderr).toContain(`schema migration ${PROBE_MIGRATION} unknown to this version`);
  });

  it('remove keeps config and data; purge deletes them', () => {
    const removed = dpkg('-r', 'metergate');
    expect(removed.status, removed.output).toBe(0);
    expect(existsSync(at('opt/metergate/dist'))).toBe(false);
    expect(existsSync(at('usr/bin/metergate'))).toBe(false);
    expect(existsSync(at('etc/metergate/config.yaml'))).toBe(true);
    expect(existsSync(at('etc/metergate/mqtt-password'))).toBe(true);
    expect(existsSync(at('var/lib/metergate/metergate.db'))).toBe(true);

    const purged = dpkg('-P', 'metergate');
    expect(purged.status, purged.output).toBe(0);
    expect(existsSync(at('etc/metergate'))).toBe(false);
    expect(existsSync(at('var/lib/metergate'))).toBe(false);
    expect(lexists(at('etc/systemd/system/multi-user.target.wants/metergate.service'))).toBe(false);
    expect(lexists(at('etc/systemd/system/multi-user.target.wants/metergate-firstboot.service'))).toBe(false);
  });
});

describe.skipIf(!ready)('a gateway installed with the conffile-era package', () => {
  let root = '';
  let work = '';
  const at = (p: string) => join(root, p);
  beforeAll(() => {
    root = makeRoot();
    work = mkdtempSync(join(tmpdir(), 'mg-dpkg-work-'));
  });
  afterAll(() => {
    for (const d of [root, work]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('upgrades with no terminal after firstboot rewrote the config, keeping it; purge still removes it', () => {
    const old = dpkgOn(root, '-i', conffileEraPackage(work));
    expect(old.status, old.output).toBe(0);
    expect(readFileSync(at('var/lib/dpkg/status'), 'utf8')).toMatch(/^Conffiles:\n \/etc\/metergate\/config\.yaml [0-9a-f]{32}$/m);
    writeFileSync(at('boot/firmware/metergate.yaml'), FIRSTBOOT_YAML);
    writeFileSync(at('boot/firmware/mqtt-password'), 'site secret\n');
    const fb = spawnSync(at(PACKAGE_NODE), [at('opt/metergate/dist/cli.js'), 'firstboot', '--root', root], { encoding: 'utf8', timeout: 120_000 });
    expect(fb.status, fb.stdout + fb.stderr).toBe(0);

    const up = dpkgOn(root, '-i', debPath('amd64'));
    expect(up.status, up.output).toBe(0);
    expect(up.output).not.toMatch(/Configuration file|conffile prompt|end of file on stdin/i);
    expect(readFileSync(at('etc/metergate/config.yaml'), 'utf8')).toBe(FIRSTBOOT_YAML);
    expect((statSync(at('etc/metergate/config.yaml')).mode & 0o777).toString(8)).toBe('640');
    // dpkg keeps the file as an obsolete conffile of the old layout; nothing else claims it.
    expect(readFileSync(at('var/lib/dpkg/status'), 'utf8')).toMatch(/^ \/etc\/metergate\/config\.yaml [0-9a-f]{32} obsolete$/m);

    const purged = dpkgOn(root, '-P', 'metergate');
    expect(purged.status, purged.output).toBe(0);
    expect(existsSync(at('etc/metergate'))).toBe(false);
  });
});
