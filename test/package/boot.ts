// The amd64 package on a real Debian system booted with systemd as PID 1 (issue 21, point 3),
// as an installer meets it: `apt install ./metergate_<v>_amd64.deb` with only Debian's own
// apt sources, what the postinst leaves, the boot partition's metergate.yaml taken at the
// next boot (a bad one first, then a good one), the service ready under its sandbox with a
// simulated meter's measurements at a TLS mosquitto outside the container, an unattended
// upgrade to a rebuilt version that loses no reading, remove and purge.
//
// One Debian release per test file (boot-bookworm, boot-trixie); the steps share one
// container and run in order. CI runs them after the packages are built
// (vitest.boot.config.ts).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topicFor } from '../../src/uplink/topics.js';
import { MESSAGE_TYPES, messageProblems } from '../../src/uplink/validate.js';
import { hasMosquitto, startTlsBroker, type TlsBroker } from '../helpers/mosquitto.js';
import { startSim, type SimProcess } from '../helpers/sim-process.js';
import { subscribe, type Received, type TestSubscriber } from '../helpers/subscriber.js';
import { BootedDebian, canBoot, DEBIAN_RELEASE, run, type DebianSuite } from './booted-debian.js';
import { debPath, hasDeb, VERSION } from './deb.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const METER = '5b7d9f1b-3c4d-4e6f-9a7b-8c9d0e1f2a3b';
/** The rebuilt release the gateway is upgraded to (scripts/package --version). */
export const NEWER = `${VERSION}+boot1`;
/** The schema change the upgrade brings: one more migration, added to the rebuilt package. */
const PROBE_MIGRATION = 996;
const STEP_MS = 900_000;
const DEB_IN_ROOT = '/var/tmp';

const MEASUREMENTS = topicFor('svc', METER, 'measurement');
const sampledAt = (m: Received) => (m.json.data as { sampled_at: string }).sampled_at;

/**
 * The rebuilt release: `scripts/package --version NEWER` (built once, kept in .tmp/deb),
 * plus a probe migration so the upgrade has a schema change to apply.
 */
async function newerPackage(dir: string): Promise<string> {
  const built = debPath('amd64', NEWER);
  if (!existsSync(built)) {
    const r = await run('bash', ['scripts/package', '--version', NEWER, '--no-lint', '--gzip', '--out', resolve(built, '..')], { timeoutMs: STEP_MS });
    if (r.status !== 0) throw new Error(`scripts/package --version ${NEWER} failed:\n${r.output}`);
  }
  const raw = join(dir, 'raw');
  execFileSync('dpkg-deb', ['-R', built, raw]);
  writeFileSync(join(raw, `opt/metergate/dist/store/migrations/${PROBE_MIGRATION}_boot_upgrade_probe.sql`), 'CREATE TABLE boot_upgrade_probe (id INTEGER PRIMARY KEY);\n');
  const out = join(dir, `metergate_${NEWER}_amd64.deb`);
  // gzip -1: xz of a package with its own Node takes minutes on a loaded 2-core machine.
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z1', '-b', raw, out], { stdio: 'ignore' });
  rmSync(raw, { recursive: true, force: true });
  return out;
}

export function defineBootTests(suite: DebianSuite): void {
  const ready = [hasDeb('amd64'), canBoot(), hasMosquitto].every(Boolean);

  describe.skipIf(!ready)(`metergate_${VERSION}_amd64.deb on Debian ${DEBIAN_RELEASE[suite]} (${suite}) booted with systemd`, () => {
    let gw: BootedDebian;
    let broker: TlsBroker;
    let sim: SimProcess;
    let sub: TestSubscriber;
    let work = '';
    let security = '';
    const sh = async (script: string, timeoutMs?: number) => {
      const r = await gw.sh(script, timeoutMs);
      return { ...r, output: `$ ${script}\n${r.output}` };
    };
    /** `systemctl show metergate -p ...` as an object. */
    const unitState = async (unit = 'metergate.service') => {
      const r = await sh(`systemctl show ${unit} -p ActiveState -p SubState -p Result -p ExecMainStatus -p NRestarts -p MainPID -p StatusText -p WatchdogUSec`);
      return Object.fromEntries(r.stdout.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    };
    const journal = async () => (await sh('journalctl -b --no-pager -o cat -u metergate -u metergate-firstboot | tail -n 60')).output;
    const bootFile = (name: string) => gw.at(`boot/firmware/${name}`);
    const mode = (p: string) => {
      const s = statSync(gw.at(p));
      return `${(s.mode & 0o777).toString(8)} ${s.uid}:${s.gid}`;
    };
    const gid = (group: string) => Number(readFileSync(gw.at('etc/group'), 'utf8').split('\n').find((l) => l.startsWith(`${group}:`))?.split(':')[2]);
    const measurements = () => sub.messages.filter((m) => m.topic === MEASUREMENTS);

    /** What an installer puts on the boot partition: metergate.yaml, the broker password and CA. */
    const dropConfig = () => {
      writeFileSync(
        bootFile('metergate.yaml'),
        `organization_id: ${ORG}
log_level: info
poll: { interval_ms: 1000 }
buses:
  - { name: sim, type: tcp, host: 127.0.0.1, tcp_port: ${sim.ready.tcpPort}, timeout_ms: 2000 }
meters:
  - { resource_id: ${METER}, bus: sim, unit_id: 1, profile: sdm630 }
mqtt:
  url: '${broker.url}'
  username: gateway
  password_file: mqtt-password
  ca_file: ca.pem
  reconnect_min_ms: 200
  reconnect_max_ms: 2000
# No NTP in the container: trust the clock at once instead of after 300 s without steps.
clock: { trust: system }
http: { port: 0 }
prices: { source: none }
forecast: { enabled: false }
`,
      );
      writeFileSync(bootFile('mqtt-password'), 'gw-secret\n');
      copyFileSync(broker.caFile, bootFile('ca.pem'));
    };
    const waitForMeasurements = async (count: number, what: string) =>
      sub.waitFor((all) => all.filter((m) => m.topic === MEASUREMENTS).length >= count, what, 180_000).catch(async (err: Error) => {
        throw new Error(`${err.message}\n${JSON.stringify(await unitState())}\n${await journal()}`);
      });

    beforeAll(async () => {
      work = mkdtempSync(join(resolve('.tmp'), `boot-${suite}-`));
      broker = await startTlsBroker([
        { username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] },
        { username: 'cloud', password: 'cloud-secret', acl: [`topic read svc/resources/${METER}/#`] },
      ]);
      sim = await startSim(['--tcp', '0', '--host', '127.0.0.1', '--unit', '1']);
      sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${METER}/#`, clientId: `boot-${suite}-${process.pid}` });
      gw = await BootedDebian.create(suite);
      copyFileSync(debPath('amd64'), gw.at(`${DEB_IN_ROOT}/metergate_${VERSION}_amd64.deb`));
      copyFileSync(await newerPackage(work), gw.at(`${DEB_IN_ROOT}/metergate_${NEWER}_amd64.deb`));
      await gw.boot();
    }, STEP_MS);

    afterAll(async () => {
      if (security) console.log(`systemd-analyze security metergate on Debian ${DEBIAN_RELEASE[suite]}:\n${security}`);
      await gw?.destroy();
      await sub?.close();
      await sim?.stop();
      await broker?.stop();
      if (work) rmSync(work, { recursive: true, force: true });
    }, STEP_MS);

    it('installs with apt from the distribution\'s own sources; the postinst says it is not started yet', { timeout: STEP_MS }, async () => {
      const sources = await sh('cat /etc/apt/sources.list.d/*.sources; ls /etc/apt/sources.list.d');
      expect(sources.stdout).not.toMatch(/nodesource|deb\.nodesource/i);
      const r = await sh(`apt-get update -q && cd ${DEB_IN_ROOT} && DEBIAN_FRONTEND=noninteractive apt-get install -y ./metergate_${VERSION}_amd64.deb`, STEP_MS);
      expect(r.status, r.output).toBe(0);
      expect(r.output).toContain(`Setting up metergate (${VERSION})`);
      expect(r.output).toContain('metergate: created system user metergate (groups: metergate, dialout)');
      expect(r.output).toMatch(/metergate: not started yet: edit \/etc\/metergate\/config\.yaml/);
      const v = await sh('metergate --version');
      expect(v.status, v.output).toBe(0);
      expect(v.stdout.split('\n')[0]).toBe(`metergate ${VERSION}`);
    });

    it('leaves the user in dialout, /etc/metergate and /var/lib/metergate owned right, both units enabled, nothing started', { timeout: STEP_MS }, async () => {
      const groups = await sh('id -nG metergate');
      expect(groups.stdout.trim().split(' ').sort(), groups.output).toEqual(['dialout', 'metergate']);
      const g = gid('metergate');
      expect(mode('etc/metergate')).toBe(`750 0:${g}`);
      expect(mode('etc/metergate/config.yaml')).toBe(`640 0:${g}`);
      expect(mode('var/lib/metergate')).toMatch(new RegExp(`^750 \\d+:${g}$`));
      expect(readdirSync(gw.at('var/lib/metergate'))).toEqual([]);
      // The example config is not one the daemon can run with (placeholder ids, no password file).
      const check = await sh('metergate config check');
      expect(check.status, check.output).toBe(78);
      const enabled = await sh('systemctl is-enabled metergate.service metergate-firstboot.service');
      expect(enabled.stdout.trim().split('\n'), enabled.output).toEqual(['enabled', 'enabled']);
      const state = await unitState();
      expect(state.ActiveState, JSON.stringify(state)).toBe('inactive');
      expect(state.NRestarts).toBe('0');
    });

    it('a bad metergate.yaml on the boot partition: metergate-error.txt says what is wrong, the file stays, the service waits', { timeout: STEP_MS }, async () => {
      writeFileSync(bootFile('metergate.yaml'), `organization_id: not-a-uuid\nmqtt: { url: '${broker.url}', username: gateway, password_file: mqtt-password }\npoll: { intervall_ms: 1000 }\nprices: { source: none }\n`);
      const configBefore = readFileSync(gw.at('etc/metergate/config.yaml'), 'utf8');
      await gw.reboot();
      const firstboot = await unitState('metergate-firstboot.service');
      expect(firstboot.Result, await journal()).toBe('success');
      expect(existsSync(bootFile('metergate-error.txt')), await journal()).toBe(true);
      const report = readFileSync(bootFile('metergate-error.txt'), 'utf8');
      expect(report).toContain('metergate did NOT use metergate.yaml');
      expect(report).toContain('organization_id: must match format "uuid"');
      expect(report).toMatch(/mqtt\.password_file: .*put mqtt-password next to metergate\.yaml/);
      expect(report).toContain('did you mean interval_ms?');
      expect(report).toContain('\r\n');
      expect(existsSync(bootFile('metergate.yaml'))).toBe(true);
      expect(readFileSync(gw.at('etc/metergate/config.yaml'), 'utf8')).toBe(configBefore);
      // The service, enabled, met the example config at boot: it stopped with EX_CONFIG and
      // systemd does not restart it in a loop; it waits for a configuration.
      const state = await unitState();
      expect(state.ActiveState, `${JSON.stringify(state)}\n${await journal()}`).not.toMatch(/^(active|activating|deactivating)$/);
      expect(state.NRestarts).toBe('0');
      expect(['0', '78']).toContain(state.ExecMainStatus);
    });

    it('a good metergate.yaml with its password and CA: taken at the next boot, the service ready under its sandbox, measurements at the broker', { timeout: STEP_MS }, async () => {
      rmSync(bootFile('metergate-error.txt'));
      dropConfig();
      await gw.reboot();

      expect(readdirSync(gw.at('boot/firmware')), await journal()).toEqual(['metergate-applied.txt']);
      expect(readFileSync(bootFile('metergate-applied.txt'), 'utf8')).toMatch(/metergate took metergate\.yaml at .*: it is now \/etc\/metergate\/config\.yaml/);
      const g = gid('metergate');
      for (const f of ['config.yaml', 'mqtt-password', 'ca.pem']) expect(mode(`etc/metergate/${f}`), f).toBe(`640 0:${g}`);
      expect(readFileSync(gw.at('etc/metergate/config.yaml'), 'utf8')).toContain('password_file: /etc/metergate/mqtt-password');

      // Type=notify: "active" only after READY=1; the watchdog armed.
      await waitForMeasurements(3, 'three measurements from the booted gateway');
      const state = await unitState();
      expect(state.ActiveState, JSON.stringify(state)).toBe('active');
      expect(state.SubState).toBe('running');
      expect(state.WatchdogUSec).toBe('1min');
      // The sandbox as the kernel applies it to the running daemon.
      const proc = await sh(`grep -E '^(Uid|NoNewPrivs|Seccomp|CapEff|CapBnd):' /proc/${state.MainPID}/status; ls /proc | grep -cE '^[0-9]+$'; nsenter -t ${state.MainPID} -m ls /home /root 2>&1 | head -3`);
      expect(proc.output).toMatch(/NoNewPrivs:\s+1/);
      expect(proc.output).toMatch(/Seccomp:\s+2/);
      expect(proc.output).toMatch(/CapEff:\s+0{16}/);
      expect(proc.output).toMatch(/CapBnd:\s+0{16}/);
      const uid = readFileSync(gw.at('etc/passwd'), 'utf8').split('\n').find((l) => l.startsWith('metergate:'))!.split(':')[2];
      expect(proc.output).toMatch(new RegExp(`Uid:\\s+${uid}\\s`));

      for (const m of sub.messages) {
        const type = MESSAGE_TYPES.find((t) => m.topic === topicFor('svc', METER, t));
        expect(type, m.topic).toBeDefined();
        expect(messageProblems(type!, m.json), m.topic).toEqual([]);
      }
      const boot = sub.messages.find((m) => m.topic === topicFor('svc', METER, 'boot_notification'));
      expect(boot, 'a boot_notification').toBeDefined();

      const sec = await sh('systemd-analyze security --no-pager metergate.service');
      security = sec.stdout;
      expect(sec.output).toMatch(/→ Overall exposure level for metergate\.service: \d+\.\d+ \w+/);
    });

    it('an unattended upgrade to a rebuilt version keeps config and data, migrates, restarts, and loses no reading', { timeout: STEP_MS }, async () => {
      const configBefore = readFileSync(gw.at('etc/metergate/config.yaml'), 'utf8');
      const before = measurements().length;
      // As a fleet tool does it: no terminal, no answers.
      const r = await sh(`cd ${DEB_IN_ROOT} && DEBIAN_FRONTEND=noninteractive apt-get install -y ./metergate_${NEWER}_amd64.deb < /dev/null`, STEP_MS);
      expect(r.status, r.output).toBe(0);
      expect(r.output).toContain(`Unpacking metergate (${NEWER}) over (${VERSION})`);
      expect(r.output).toContain('metergate: restarted metergate.service');
      expect((await sh("dpkg-query -W -f '${Version}' metergate")).stdout).toBe(NEWER);
      const v = await sh('metergate --version');
      expect(v.stdout.split('\n')[0], v.output).toBe(`metergate ${NEWER}`);
      expect(readFileSync(gw.at('etc/metergate/config.yaml'), 'utf8')).toBe(configBefore);
      for (const f of ['mqtt-password', 'ca.pem']) expect(existsSync(gw.at(`etc/metergate/${f}`)), f).toBe(true);

      await waitForMeasurements(before + 5, 'five measurements after the upgrade');
      const state = await unitState();
      expect(state.ActiveState, JSON.stringify(state)).toBe('active');
      // The restarted daemon says which release it is.
      const boots = sub.messages.filter((m) => m.topic === topicFor('svc', METER, 'boot_notification'));
      expect(boots.map((m) => (m.json.gateway as { software_version: string }).software_version)).toContain(NEWER);
      // Stopped, so the database is complete and quiet; every reading it holds reached the broker.
      const stop = await sh('systemctl stop metergate.service');
      expect(stop.status, stop.output).toBe(0);
      const db = new Database(gw.at('var/lib/metergate/metergate.db'), { readonly: true });
      let stored: string[];
      let pending: number;
      let versions: number[];
      try {
        stored = (db.prepare('SELECT sampled_at_ms FROM readings WHERE resource_id = ? ORDER BY sampled_at_ms').pluck().all(METER) as number[]).map((t) => new Date(t).toISOString());
        pending = db.prepare("SELECT count(*) FROM outbox WHERE topic LIKE '%/measurements'").pluck().get() as number;
        versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all() as number[];
      } finally {
        db.close();
      }
      expect(versions).toContain(PROBE_MIGRATION);
      // Readings from before the upgrade and after it, in one database.
      expect(stored.length).toBeGreaterThanOrEqual(before + 5);
      const received = new Set(measurements().map(sampledAt));
      const stillQueued = pending;
      // Readings still in the outbox at the stop are not lost (they go at the next start); all others arrived.
      const missing = stored.filter((t) => !received.has(t));
      expect(missing.length, `readings stored but not received: ${missing.slice(0, 10).join(', ')}`).toBeLessThanOrEqual(stillQueued);
      const start = await sh('systemctl start metergate.service');
      expect(start.status, start.output).toBe(0);
      await sub.waitFor((all) => {
        const got = new Set(all.filter((m) => m.topic === MEASUREMENTS).map(sampledAt));
        return stored.every((t) => got.has(t));
      }, `every one of the ${stored.length} stored readings at the broker`, 120_000);
    });

    it('remove keeps configuration and data; purge deletes them', { timeout: STEP_MS }, async () => {
      const removed = await sh('DEBIAN_FRONTEND=noninteractive apt-get remove -y metergate < /dev/null', STEP_MS);
      expect(removed.status, removed.output).toBe(0);
      expect((await unitState()).ActiveState).toBe('inactive');
      expect(existsSync(gw.at('opt/metergate'))).toBe(false);
      expect(existsSync(gw.at('usr/bin/metergate'))).toBe(false);
      for (const f of ['etc/metergate/config.yaml', 'etc/metergate/mqtt-password', 'var/lib/metergate/metergate.db']) expect(existsSync(gw.at(f)), f).toBe(true);
      const purged = await sh('DEBIAN_FRONTEND=noninteractive apt-get purge -y metergate < /dev/null', STEP_MS);
      expect(purged.status, purged.output).toBe(0);
      expect(existsSync(gw.at('etc/metergate'))).toBe(false);
      expect(existsSync(gw.at('var/lib/metergate'))).toBe(false);
      expect((await sh('dpkg-query -W -f "${Status}" metergate')).stdout).not.toContain('installed');
    });

    it('from flashing to data: a first-boot hook installs the package from the boot partition and takes metergate.yaml (issue 21, point 6)', { timeout: STEP_MS }, async () => {
      // Back to a card as flashed: no metergate, none of what it pulled in, no apt lists.
      const fresh = await sh('DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y < /dev/null && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin', STEP_MS);
      expect(fresh.status, fresh.output).toBe(0);
      // What the installer copies to the card's boot partition on the laptop.
      copyFileSync(debPath('amd64'), bootFile(`metergate_${VERSION}_amd64.deb`));
      copyFileSync('scripts/fleet/metergate-install.sh', bootFile('metergate-install.sh'));
      rmSync(bootFile('metergate-applied.txt'), { force: true });
      dropConfig();
      // Stands in for the OS's first-boot hook (cloud-init's runcmd on Raspberry Pi OS trixie,
      // firstrun.sh on bookworm): a unit that runs the script as root once the network is up.
      writeFileSync(
        gw.at('etc/systemd/system/os-firstrun.service'),
        '[Unit]\nDescription=stand-in for cloud-init runcmd / firstrun.sh\nWants=network-online.target\nAfter=network-online.target\nConditionPathExists=/boot/firmware/metergate-install.sh\n\n[Service]\nType=oneshot\nExecStart=/bin/sh /boot/firmware/metergate-install.sh\n\n[Install]\nWantedBy=multi-user.target\n',
      );
      const enable = await sh('systemctl enable os-firstrun.service');
      expect(enable.status, enable.output).toBe(0);
      const before = measurements().length;
      await gw.reboot();

      const hook = (await sh('journalctl -b --no-pager -o cat -u os-firstrun')).output;
      const report = readFileSync(bootFile('metergate-install.txt'), 'utf8');
      expect(report, hook).toContain(`installed metergate ${VERSION} from metergate_${VERSION}_amd64.deb (removed from this partition;`);
      expect(report).toContain('metergate-firstboot took metergate.yaml');
      expect(report).not.toContain('FAILED');
      expect(readdirSync(gw.at('boot/firmware')).sort()).toEqual(['metergate-applied.txt', 'metergate-install.sh', 'metergate-install.txt']);
      expect((await sh("dpkg-query -W -f '${Status} ${Version}' metergate")).stdout).toBe(`install ok installed ${VERSION}`);
      await waitForMeasurements(before + 3, 'three measurements from the gateway the hook installed');
      expect((await unitState()).ActiveState).toBe('active');
      // Once more at the next boot: installed already, nothing changes.
      const again = await sh('sh /boot/firmware/metergate-install.sh');
      expect(again.status, again.output).toBe(0);
      expect(readFileSync(bootFile('metergate-install.txt'), 'utf8')).toContain(`metergate ${VERSION} is already installed: nothing to install.`);
    });
  });
}
