// First boot of a flashed card (issue 12 point 5), against a temporary root: metergate.yaml
// and the files it names on the boot partition are validated, moved to /etc/metergate with
// root:metergate 0640 and removed from the FAT partition; a bad file stays, next to
// metergate-error.txt that says what to fix, and the gateway's config is not touched.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRoot, systemdAnalyzeFound } from '../helpers/peers.js';
import { verifyUnit } from '../helpers/unit-file.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const METERGATE_GID = 996;
const hasSystemdAnalyze = systemdAnalyzeFound();
const CA = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2Vy\n-----END CERTIFICATE-----\n';

/** A root as the package leaves it: the metergate group, /etc/metergate with the example config. */
function makeRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'mg-firstboot-'));
  mkdirSync(join(root, 'etc/metergate'), { recursive: true });
  mkdirSync(join(root, 'boot/firmware'), { recursive: true });
  writeFileSync(join(root, 'etc/group'), `root:x:0:\ndialout:x:20:metergate\nmetergate:x:${METERGATE_GID}:\n`);
  writeFileSync(join(root, 'etc/metergate/config.yaml'), readFileSync('config/example.yaml'));
  // Raspberry Pi OS's own files on the boot partition stay untouched.
  writeFileSync(join(root, 'boot/firmware/config.txt'), 'dtparam=audio=on\n');
  return root;
}

const firstboot = (root: string) => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'firstboot', '--root', root], { encoding: 'utf8', timeout: 120_000 });

const goodYaml = (passwordPath: string, caPath: string) => `# site 17, installed by Jo
organization_id: ${ORG}
mqtt:
  url: mqtts://broker.example:8883
  username: gw-17
  password_file: ${passwordPath}
  ca_file: ${caPath}
prices: { source: none }
`;

describe.skipIf(!isRoot)('metergate firstboot', () => {
  let root = '';
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });
  const at = (p: string) => join(root, p);
  const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

  it('moves a valid metergate.yaml and the files it names into /etc/metergate, off the boot partition', () => {
    root = makeRoot();
    const yaml = goodYaml('/etc/metergate/mqtt-password', '/etc/metergate/ca.pem');
    writeFileSync(at('boot/firmware/metergate.yaml'), yaml);
    writeFileSync(at('boot/firmware/mqtt-password'), 'pw-17\n');
    writeFileSync(at('boot/firmware/ca.pem'), CA);
    writeFileSync(at('boot/firmware/metergate-error.txt'), 'from an earlier try\r\n');

    const r = firstboot(root);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(at('etc/metergate/config.yaml'), 'utf8')).toBe(yaml);
    expect(readFileSync(at('etc/metergate/mqtt-password'), 'utf8')).toBe('pw-17\n');
    expect(readFileSync(at('etc/metergate/ca.pem'), 'utf8')).toBe(CA);
    for (const f of ['config.yaml', 'mqtt-password', 'ca.pem']) {
      expect(mode(at(`etc/metergate/${f}`)), f).toBe('640');
      expect([statSync(at(`etc/metergate/${f}`)).uid, statSync(at(`etc/metergate/${f}`)).gid], f).toEqual([0, METERGATE_GID]);
    }
    expect(mode(at('etc/metergate'))).toBe('750');
    // The secrets are gone from the FAT partition; a note says where they went.
    expect(readdirSync(at('boot/firmware')).sort()).toEqual(['config.txt', 'metergate-applied.txt']);
    const note = readFileSync(at('boot/firmware/metergate-applied.txt'), 'utf8');
    expect(note).toContain('mqtt-password was moved to /etc/metergate/mqtt-password');
    expect(note).not.toContain('pw-17');
  });

  it('points settings that named the boot partition at /etc/metergate', () => {
    root = makeRoot();
    writeFileSync(at('boot/firmware/metergate.yaml'), goodYaml('/boot/firmware/mqtt-password', 'ca.pem'));
    writeFileSync(at('boot/firmware/mqtt-password'), 'pw-17\n');
    writeFileSync(at('boot/firmware/ca.pem'), CA);
    const r = firstboot(root);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const config = readFileSync(at('etc/metergate/config.yaml'), 'utf8');
    expect(config).toContain('password_file: /etc/metergate/mqtt-password');
    expect(config).toContain('ca_file: /etc/metergate/ca.pem');
    expect(config).toContain('# site 17, installed by Jo');
    expect(existsSync(at('boot/firmware/mqtt-password'))).toBe(false);
  });

  it('leaves a bad file where it was, with metergate-error.txt listing every problem, and the gateway untouched', () => {
    root = makeRoot();
    const before = readFileSync(at('etc/metergate/config.yaml'), 'utf8');
    const yaml = `organization_id: site-17\nmqtt:\n  url: mqtts://broker.example:8883\n  username: gw-17\n  password_file: /etc/metergate/mqtt-password\n  ca_file: /etc/metergate/ca.pem\nprices: { source: none }\npoll: { intervall_ms: 5000 }\n`;
    writeFileSync(at('boot/firmware/metergate.yaml'), yaml);
    writeFileSync(at('boot/firmware/ca.pem'), CA);

    const r = firstboot(root);
    expect(r.status, r.stdout + r.stderr).toBe(78);
    const report = readFileSync(at('boot/firmware/metergate-error.txt'), 'utf8');
    expect(report).toContain('\r\n'); // readable in Notepad
    expect(report).toContain('organization_id');
    expect(report).toContain('mqtt.password_file: /etc/metergate/mqtt-password is neither next to metergate.yaml');
    expect(report.split('mqtt.password_file').length - 1, 'the missing file is said once').toBe(1);
    expect(report).toContain('intervall_ms');
    expect(report).toContain('Nothing was changed on the gateway');
    expect(readFileSync(at('boot/firmware/metergate.yaml'), 'utf8')).toBe(yaml);
    expect(existsSync(at('boot/firmware/ca.pem'))).toBe(true);
    expect(readFileSync(at('etc/metergate/config.yaml'), 'utf8')).toBe(before);
    expect(existsSync(at('etc/metergate/ca.pem'))).toBe(false);
  });

  it('a YAML syntax error is reported with its line', () => {
    root = makeRoot();
    writeFileSync(at('boot/firmware/metergate.yaml'), `organization_id: ${ORG}\nmqtt:\n  url: [unclosed\n`);
    const r = firstboot(root);
    expect(r.status).toBe(78);
    expect(readFileSync(at('boot/firmware/metergate-error.txt'), 'utf8')).toMatch(/\(yaml\) line \d+/);
  });

  it('does nothing without metergate.yaml', () => {
    root = makeRoot();
    const r = firstboot(root);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('nothing to do');
    expect(readdirSync(at('boot/firmware'))).toEqual(['config.txt']);
  });
});

describe.skipIf(!hasSystemdAnalyze)('metergate-firstboot.service', () => {
  it('passes systemd-analyze verify and runs before metergate.service', () => {
    const r = verifyUnit('systemd/metergate-firstboot.service');
    expect(r.complaints).toEqual([]);
    expect(r.status, r.stderr).toBe(0);
    const unit = readFileSync('systemd/metergate-firstboot.service', 'utf8');
    expect(unit).toMatch(/^Before=metergate\.service$/m);
    expect(unit).toMatch(/^ConditionPathExists=\|\/boot\/firmware\/metergate\.yaml$/m);
  });
});

// The start after a first boot: systemctl's refusal (no systemd as PID 1 here, a unit that
// is missing or masked on a gateway) is reported, in systemctl's words, instead of
// "started metergate.service". Not on a machine where metergate.service exists: the call
// would start it there.
const metergateUnitHere = spawnSync('systemctl', ['cat', 'metergate.service'], { stdio: 'ignore' }).status === 0;
describe.skipIf(metergateUnitHere)('starting metergate.service after first boot', () => {
  it('reports a start that systemctl refuses', async () => {
    const { startMetergateService } = await import('../../src/firstboot/apply.js');
    const failure = startMetergateService();
    expect(failure).toMatch(/^systemctl (re)?start metergate\.service(:| exited \d+: .+)/);
  });
});
