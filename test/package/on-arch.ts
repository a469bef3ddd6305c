// What each package must do on its own architecture (point 2 of issue 12): unpacked, run
// with Node of that architecture (under qemu-user-static for arm64 and armhf), it reports
// its versions, checks a config, opens and migrates its database (the native better-sqlite3
// build), reads a simulated meter over a socat pty (the serialport binding) and publishes
// to a real mosquitto over TLS.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasMosquitto, startTlsBroker, type TlsBroker } from '../helpers/mosquitto.js';
import { hasSocat } from '../helpers/peers.js';
import { startSim, type SimProcess } from '../helpers/sim-process.js';
import { removeDir, startPtyPair, type PtyPair } from '../helpers/socat.js';
import { subscribe, type TestSubscriber } from '../helpers/subscriber.js';
import { BUNDLED_NODE, bundlesNode, canRun, controlField, debPath, hasDeb, nodeArchOf, PACKAGE_NODE, packageNode, unpack, VERSION, type DebArch } from './deb.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const METER = '4a6c8e0a-2b3c-4d5e-8f6a-7b8c9d0e1f2a';
const ELF: Record<DebArch, string> = { amd64: 'x86-64', arm64: 'ARM aarch64', armhf: 'ARM, EABI5' };
// Under qemu on a loaded 2-core machine Node starts in tens of seconds, not one.
const SLOW_MS = 600_000;

/** Paths a lockfile installs with `npm ci --omit=dev --omit=optional`. */
function productionPaths(): Set<string> {
  type Entry = { dev?: boolean; optional?: boolean; devOptional?: boolean; link?: boolean; resolved?: string };
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, Entry> };
  // A link entry (a `file:` dependency such as the dev-only test/shims/voltlog-io) carries no
  // dev flag of its own: its target's entry says what it is.
  const flagsOf = (e: Entry): Entry => (e.link && e.resolved !== undefined ? (lock.packages[e.resolved] ?? e) : e);
  return new Set(
    Object.entries(lock.packages)
      .filter(([p, e]) => p !== '' && !flagsOf(e).dev && !flagsOf(e).optional && !flagsOf(e).devOptional)
      .map(([p]) => p),
  );
}

/** Every package directory under a node_modules tree, as lockfile paths (node_modules/a/node_modules/@s/b). */
function installedPaths(base: string, prefix = 'node_modules'): string[] {
  const dir = join(base, prefix);
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.')) continue;
    const names = name.startsWith('@') ? readdirSync(join(dir, name)).map((n) => `${name}/${n}`) : [name];
    for (const n of names) {
      const p = `${prefix}/${n}`;
      out.push(p, ...installedPaths(base, `${p}/node_modules`));
    }
  }
  return out;
}

export function definePackageTests(arch: DebArch): void {
  const ready = [hasDeb(arch), canRun(arch), hasMosquitto, hasSocat].every(Boolean);

  describe.skipIf(!ready)(`metergate_${VERSION}_${arch}.deb`, () => {
    let root = '';
    let node: string[] = [];
    let app = '';
    const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => {
      const r = spawnSync(node[0], [...node.slice(1), join(app, 'dist/cli.js'), ...args], {
        encoding: 'utf8',
        timeout: SLOW_MS,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      });
      return { status: r.status, stdout: r.stdout, output: `${r.stdout}${r.stderr}${r.error ? String(r.error) : ''}` };
    };

    beforeAll(() => {
      root = unpack(arch);
      app = join(root, 'opt/metergate');
      node = packageNode(arch, root);
    }, SLOW_MS);
    afterAll(() => {
      if (root) rmSync(root, { recursive: true, force: true });
    });

    it('is a package for its architecture with its Node, units under /usr/lib, and no conffile', () => {
      expect(controlField(arch, 'Package')).toBe('metergate');
      expect(controlField(arch, 'Version')).toBe(VERSION);
      expect(controlField(arch, 'Architecture')).toBe(arch);
      const depends = controlField(arch, 'Depends');
      if (bundlesNode(arch)) {
        // Installs on Debian 12 (nodejs 18) and 13 alike: nothing but the C and C++ runtime.
        expect(depends).not.toMatch(/nodejs/);
        expect(depends).toMatch(/(^|, )libc6 \(>= 2\.\d+\)(,|$)/);
      } else {
        expect(depends).toMatch(/(^|, )nodejs \(>= 20\.11\), nodejs \(<< 21\)(,|$)/);
      }
      // The installer's configuration is not the package's: no conffile to prompt about.
      expect(execFileSync('dpkg-deb', ['--info', debPath(arch)], { encoding: 'utf8' })).not.toMatch(/\bconffiles\b/);
      expect(existsSync(join(root, 'etc'))).toBe(false);
      expect(existsSync(join(root, 'lib')), 'nothing under /lib (Debian 13 purges warn about it)').toBe(false);
      for (const f of ['usr/bin/metergate', 'usr/lib/systemd/system/metergate.service', 'usr/lib/systemd/system/metergate-firstboot.service', 'usr/lib/udev/rules.d/99-metergate-serial.rules', 'opt/metergate/config/example.yaml', 'opt/metergate/dist/cli.js']) {
        expect(existsSync(join(root, f)), f).toBe(true);
      }
      expect(readFileSync(join(root, 'opt/metergate/config/example.yaml'), 'utf8')).toBe(readFileSync('config/example.yaml', 'utf8'));
      for (const f of ['usr/bin/metergate', 'usr/lib/systemd/system/metergate.service', 'usr/lib/systemd/system/metergate-firstboot.service']) {
        expect(readFileSync(join(root, f), 'utf8'), f).toContain(`/${PACKAGE_NODE} `);
      }
      if (bundlesNode(arch)) {
        expect(execFileSync('file', ['-b', join(root, PACKAGE_NODE)], { encoding: 'utf8' })).toContain(ELF[arch]);
        expect(existsSync(join(root, 'opt/metergate/node/LICENSE'))).toBe(true);
      } else {
        expect(readlinkSync(join(root, PACKAGE_NODE))).toBe('/usr/bin/node');
      }
    });

    it('holds exactly what its sources build: dist/ is the build of src/, nothing more', () => {
      const built = (dir: string): string[] =>
        readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
          .sort();
      expect(built(join(app, 'dist'))).toEqual(built('dist'));
    });

    it('holds exactly the production dependencies, with native modules built for its architecture', () => {
      const expected = productionPaths();
      const got = installedPaths(app);
      expect(got.filter((p) => !expected.has(p)), 'packages that are development or demo-only').toEqual([]);
      expect([...expected].filter((p) => !got.includes(p)), 'production packages missing').toEqual([]);
      for (const demo of ['aedes', 'selfsigned', 'typescript', 'vitest', 'tsx']) expect(got).not.toContain(`node_modules/${demo}`);
      const natives = execFileSync('find', [join(app, 'node_modules'), '-name', '*.node', '-type', 'f'], { encoding: 'utf8' }).trim().split('\n');
      expect(natives.length).toBeGreaterThanOrEqual(2);
      for (const f of natives) expect(execFileSync('file', ['-b', f], { encoding: 'utf8' }), f).toContain(ELF[arch]);
    });

    it('--version names the package, Node of this architecture, SQLite and the serialport binding', () => {
      const r = cli(['--version']);
      expect(r.status, r.output).toBe(0);
      const lines = r.stdout.trim().split('\n');
      expect(lines[0]).toBe(`metergate ${VERSION}`);
      if (bundlesNode(arch)) expect(lines[1]).toMatch(new RegExp(`^node ${BUNDLED_NODE.replace(/\./g, '\\.')} \\(module ABI \\d+, linux-${nodeArchOf(arch)}\\)$`));
      else expect(lines[1]).toMatch(new RegExp(`^node 20\\.\\d+\\.\\d+ \\(module ABI 115, linux-${nodeArchOf(arch)}\\)$`));
      expect(lines[2]).toMatch(/^sqlite 3\.\d+\.\d+ \(better-sqlite3 \d+\.\d+\.\d+\)$/);
      expect(lines[3]).toMatch(/^serialport bindings \d+\.\d+\.\d+ \(@serialport\/bindings-cpp, native binding loaded\)$/);
      expect(lines[4]).toMatch(/^modbus-serial \d+\.\d+\.\d+$/);
    });

    it('its SQLite binding survives V8 collecting statements and databases outside JavaScript', () => {
      // https://github.com/nodejs/node/issues/65446: an abort at an idle GC, mid-operation.
      const r = spawnSync(node[0], [...node.slice(1), 'scripts/sqlite-gc-probe.cjs', join(app, 'node_modules/better-sqlite3')], { encoding: 'utf8', timeout: SLOW_MS });
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/^survived \d+ major collections$/m);
    });

    it('metergate demo, whose packages a gateway does not get, says how to get them', () => {
      const r = cli(['demo', '--duration', '1']);
      expect(r.status, r.output).toBe(1);
      expect(r.output).toContain('the demo-only packages (aedes, selfsigned) are not installed');
      expect(r.output).toContain('fix: in a source checkout `npm ci` installs them');
    });

    it('config check: exit 0 on a good file, 78 with every problem on a bad one', () => {
      const dir = mkdtempSync(join(tmpdir(), `mg-deb-cfg-${arch}-`));
      try {
        writeFileSync(join(dir, 'pw'), 'secret\n');
        writeFileSync(join(dir, 'good.yaml'), `organization_id: ${ORG}\ndata_dir: ${dir}/data\nmqtt: { url: 'mqtts://broker.example:8883', username: gw, password_file: ${dir}/pw }\nprices: { source: none }\n`);
        const good = cli(['config', 'check', join(dir, 'good.yaml')]);
        expect(good.status, good.output).toBe(0);
        expect(good.output).toContain('OK');
        writeFileSync(join(dir, 'bad.yaml'), `organization_id: nope\nmqtt: { url: 'mqtts://broker.example:8883', username: gw, password_file: ${dir}/missing }\nprices: { source: none }\npoll: { intervall_ms: 5 }\n`);
        const bad = cli(['config', 'check', join(dir, 'bad.yaml')]);
        expect(bad.status, bad.output).toBe(78);
        expect(bad.output).toContain('organization_id');
        expect(bad.output).toContain('mqtt.password_file');
        expect(bad.output).toContain('intervall_ms');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    describe('the daemon with a simulated meter on a pty and mosquitto over TLS', () => {
      let broker: TlsBroker | undefined;
      let pty: PtyPair | undefined;
      let sim: SimProcess | undefined;
      let sub: TestSubscriber | undefined;
      let dir = '';
      afterAll(async () => {
        await sub?.close();
        await sim?.stop();
        if (pty) {
          await pty.stop();
          removeDir(pty.dir);
        }
        await broker?.stop();
        if (dir) rmSync(dir, { recursive: true, force: true });
      });

      it('publishes measurements read over the serial binding; the database is created and migrated', { timeout: SLOW_MS }, async () => {
        broker = await startTlsBroker([
          { username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] },
          { username: 'cloud', password: 'cloud-secret', acl: [`topic read svc/resources/${METER}/#`] },
        ]);
        pty = await startPtyPair();
        sim = await startSim(['--serial', pty.b, '--unit', '1']);
        dir = mkdtempSync(join(tmpdir(), `mg-deb-run-${arch}-`));
        writeFileSync(join(dir, 'mqtt-password'), 'gw-secret\n');
        const config = join(dir, 'config.yaml');
        writeFileSync(
          config,
          `organization_id: ${ORG}
data_dir: ${dir}/data
log_level: info
poll: { interval_ms: 1000 }
buses:
  - { name: line-a, type: rtu, port: ${pty.a}, baud_rate: 9600, parity: even, timeout_ms: 1000 }
meters:
  - { resource_id: ${METER}, bus: line-a, unit_id: 1, profile: sdm630 }
mqtt: { url: '${broker.url}', username: gateway, password_file: ${dir}/mqtt-password, ca_file: '${broker.caFile}', reconnect_min_ms: 200, reconnect_max_ms: 1000 }
clock: { trust: system }
http: { enabled: false }
prices: { source: none }
forecast: { enabled: false }
`,
        );
        sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${METER}/measurements` });

        const daemon = spawn(node[0], [...node.slice(1), join(app, 'dist/cli.js'), 'run', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
        let output = '';
        daemon.stdout.on('data', (d: Buffer) => (output += d.toString()));
        daemon.stderr.on('data', (d: Buffer) => (output += d.toString()));
        const exited = new Promise<number | null>((resolve) => daemon.once('exit', (code) => resolve(code)));
        try {
          await sub.waitFor((all) => all.length >= 2, `two measurements from the ${arch} daemon`, SLOW_MS - 60_000);
        } catch (err) {
          daemon.kill('SIGKILL');
          throw new Error(`${(err as Error).message}\n${output}`);
        }
        const data = sub.messages[0].json.data as { metrics: Array<{ name: string; value: number }> };
        expect(data.metrics.find((m) => m.name === 'total_active_power')?.value).toEqual(expect.any(Number));
        daemon.kill('SIGTERM');
        const timer = setTimeout(() => daemon.kill('SIGKILL'), 60_000);
        expect(await exited, output).toBe(0);
        clearTimeout(timer);

        const migrations = readdirSync(join(app, 'dist/store/migrations'))
          .map((f) => /^(\d{3})_/.exec(f))
          .filter((m): m is RegExpExecArray => m !== null)
          .map((m) => Number(m[1]))
          .sort((a, b) => a - b);
        const db = new Database(join(dir, 'data/metergate.db'), { readonly: true });
        try {
          expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()).toEqual(migrations);
          expect(db.prepare('SELECT count(*) FROM readings').pluck().get()).toBeGreaterThanOrEqual(2);
        } finally {
          db.close();
        }
      });
    });
  });
}
