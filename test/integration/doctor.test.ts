import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockCheckWith } from '../../src/ops/doctor/clock.js';
import { ALL_CHECKS, exitCodeOf, formatResult, runDoctor } from '../../src/ops/doctor/run.js';
import type { CheckResult } from '../../src/ops/doctor/types.js';
import { openDatabase } from '../../src/store/db.js';
import { startDaemon } from '../helpers/daemon-process.js';
import { startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { freePort, hasMosquitto, type TlsBroker } from '../helpers/mosquitto.js';
import { METER_A, METER_B, METER_C, ORG } from '../helpers/poller-harness.js';
import { hasSocat } from '../helpers/peers.js';
import { startSim } from '../helpers/sim-process.js';

if (!hasMosquitto || !hasSocat) console.warn('doctor test skipped: needs mosquitto, openssl and socat (scripts/install-test-deps)');

// The host's NTP state is not the test's business: the clock line is fed a fixed answer.
const checks = ALL_CHECKS.map((c) => (c.name === 'clock' ? clockCheckWith(async () => 'synchronized') : c));
const byCheck = (results: CheckResult[], check: string) => results.find((r) => r.check === check);

describe.skipIf(!hasMosquitto || !hasSocat)('metergate doctor against a real broker and a simulated meter', () => {
  let rig: MeterRig;
  let dir: string;
  /** The meters' pty, as the gateway opens it. */
  let meterPort: string;
  let broker: TlsBroker;

  beforeAll(async () => {
    // Peers only: each test writes the configs it checks (writeConfig).
    rig = await startMeterRig({
      tmpPrefix: 'mg-doctor-',
      meters: [{ line: 'pty', args: ['--unit', '1,2'] }],
      broker: {
        users: [
          // The gateway may publish for METER_A and METER_C only.
          { username: 'gw', password: 's3cret-pw', acl: [`topic write svc/resources/${METER_A}/#`, `topic write svc/resources/${METER_C}/#`] },
        ],
      },
      startDaemon: false,
    });
    ({ dir, broker } = rig);
    meterPort = rig.meters[0].port;
  });
  afterAll(async () => {
    await rig?.stop();
  });

  function writeConfig(name: string, over: Record<string, unknown>): string {
    const path = join(dir, name);
    writeFileSync(
      path,
      stringify({
        organization_id: ORG,
        data_dir: join(dir, `data-${name}`),
        buses: [{ name: 'rs485', type: 'rtu', port: meterPort, timeout_ms: 200, retries: 0 }],
        meters: [{ resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630' }],
        mqtt: { url: broker.url, username: 'gw', password: 's3cret-pw', ca_file: broker.caFile },
        prices: { source: 'none' },
        ...over,
      }),
      { mode: 0o640 }, // it holds the broker password: not world-readable, as install.sh writes it
    );
    return path;
  }

  it('passes every line on a healthy gateway and exits 0', async () => {
    const configPath = writeConfig('good.yaml', {});
    openDatabase(join(dir, 'data-good.yaml', 'metergate.db')).close();
    const results = await runDoctor({ configPath, checks, timeoutMs: 3000, serviceUser: 'root' });
    const text = results.map(formatResult).join('\n');
    // The one warning: a test's data_dir is not the unit's StateDirectory.
    expect(results.filter((r) => r.status !== 'pass' && r.check !== 'data_dir'), text).toEqual([]);
    expect(byCheck(results, 'data_dir')).toMatchObject({ status: 'warn', fix: expect.stringContaining(`ReadWritePaths=${join(dir, 'data-good.yaml')}`) });
    expect(byCheck(results, 'meter 0b6f2a4e')!.detail).toMatch(/rs485 unit 1 \(sdm630\) answers: \d+\.\d V, \d\d\.\d\d Hz, -?\d+ W, \d+\.\d kWh imported/);
    expect(byCheck(results, 'broker')!.detail).toContain('TLS verified, logged in as gw (MQTT 5.0)');
    expect(byCheck(results, 'publish 0b6f2a4e')!.detail).toContain('broker accepted a heartbeat');
    expect(byCheck(results, 'database')!.detail).toContain('quick_check ok');
    expect(exitCodeOf(results)).toBe(0);
  });

  it('names each problem with its fix: silent meter, ACL refusal (PUBACK 135), missing port, corrupt database', async () => {
    const configPath = writeConfig('bad.yaml', {
      buses: [
        { name: 'rs485', type: 'rtu', port: meterPort, timeout_ms: 200, retries: 0 },
        { name: 'gone', type: 'rtu', port: join(dir, 'ttyUSB9') },
      ],
      meters: [
        { resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630' },
        { resource_id: METER_B, bus: 'rs485', unit_id: 2, profile: 'sdm630' }, // answers, but the ACL has no room for it
        { resource_id: METER_C, bus: 'rs485', unit_id: 7, profile: 'sdm630' }, // nobody at unit 7
        { resource_id: '4f0d6e82-5071-4293-8e3f-4a5b6c7d8e9f', bus: 'gone', unit_id: 1, profile: 'sdm630' },
      ],
    });
    const dbPath = join(dir, 'data-bad.yaml', 'metergate.db');
    const db = openDatabase(dbPath);
    db.exec("CREATE TABLE filler (x TEXT); CREATE INDEX filler_x ON filler (x);");
    const insert = db.prepare('INSERT INTO filler VALUES (?)');
    for (let i = 0; i < 2000; i++) insert.run(`row ${i} ${'x'.repeat(50)}`);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    // Scribble over a page in the middle of the file, as a failing SD card would.
    const fd = openSync(dbPath, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, 4096 * 8);
    closeSync(fd);

    const results = await runDoctor({ configPath, checks, timeoutMs: 3000, serviceUser: 'root' });
    const text = results.map(formatResult).join('\n');
    expect(byCheck(results, 'serial gone'), text).toMatchObject({ status: 'fail', detail: expect.stringContaining('does not exist') });
    expect(byCheck(results, 'serial gone')!.fix).toContain('/dev/serial/by-id/');
    expect(byCheck(results, 'meter 0b6f2a4e')!.status).toBe('pass');
    expect(byCheck(results, 'meter 2d8b4c60')).toMatchObject({ status: 'fail', detail: expect.stringContaining('no answer within 200 ms') });
    expect(byCheck(results, 'meter 2d8b4c60')!.fix).toContain('metergate scan --port');
    expect(byCheck(results, 'publish 0b6f2a4e')!.status).toBe('pass');
    expect(byCheck(results, 'publish 1c7a3b5f')).toMatchObject({ status: 'fail', detail: expect.stringContaining('reason code 135') });
    expect(byCheck(results, 'publish 1c7a3b5f')!.fix).toContain(`svc/resources/${METER_B}/#`);
    expect(byCheck(results, 'publish 2d8b4c60')!.status).toBe('skip');
    expect(byCheck(results, 'database')).toMatchObject({ status: 'fail', detail: expect.stringContaining('corrupt') });
    expect(exitCodeOf(results)).toBe(1);
    // One line per check, each FAIL with its fix on the same line.
    for (const line of text.split('\n').filter((l) => l.startsWith('FAIL'))) expect(line).toContain('-> fix:');
  });

  it('gives Modbus TCP advice on a TCP bus and names the mqtt.urls node that is dead (issue 31 point 4)', async () => {
    const sim = await startSim(['--tcp', '0', '--unit', '1']);
    try {
      const gateway = `127.0.0.1:${sim.ready.tcpPort}`;
      const closedPort = await freePort();
      const deadNode = `mqtts://127.0.0.1:${await freePort()}`;
      const configPath = writeConfig('tcp.yaml', {
        buses: [
          { name: 'gateway-1', type: 'tcp', host: '127.0.0.1', tcp_port: sim.ready.tcpPort, timeout_ms: 200, retries: 0 },
          { name: 'gateway-2', type: 'tcp', host: '127.0.0.1', tcp_port: closedPort, timeout_ms: 200, retries: 0 },
        ],
        meters: [
          { resource_id: METER_A, bus: 'gateway-1', unit_id: 1, profile: 'sdm630' },
          { resource_id: METER_C, bus: 'gateway-1', unit_id: 7, profile: 'sdm630' }, // nobody at unit 7
          { resource_id: METER_B, bus: 'gateway-2', unit_id: 1, profile: 'sdm630' }, // the wrong port
        ],
        mqtt: { urls: [broker.url, deadNode], username: 'gw', password: 's3cret-pw', ca_file: broker.caFile },
      });
      const results = await runDoctor({ configPath, checks, timeoutMs: 3000, serviceUser: 'root' });
      const text = results.map(formatResult).join('\n');
      expect(byCheck(results, 'meter 0b6f2a4e')?.status, text).toBe('pass');
      const silent = byCheck(results, 'meter 2d8b4c60')!;
      expect(silent, text).toMatchObject({ status: 'fail', detail: expect.stringContaining('no answer within 200 ms') });
      expect(silent.fix).toContain(`\`metergate scan --tcp ${gateway}\``);
      expect(silent.fix).not.toMatch(/A\/B swapped|termination at both ends|--port|Eastron/);
      const wrongPort = byCheck(results, 'meter 1c7a3b5f')!;
      expect(wrongPort.status, text).toBe('fail');
      expect(wrongPort.fix).not.toContain('serial line');
      expect(wrongPort.fix).toContain(`buses[1].host and tcp_port (127.0.0.1:${closedPort}`);
      expect(byCheck(results, 'modbus-tcp gateway-2')?.status).toBe('fail');
      const node2 = byCheck(results, 'broker node 2')!;
      expect(node2, text).toMatchObject({ status: 'fail', detail: expect.stringContaining('connection refused') });
      expect(node2.fix).toContain('check the port in mqtt.urls[1]');
      expect(byCheck(results, 'broker node 1')?.status).toBe('pass');
      for (const line of text.split('\n').filter((l) => l.startsWith('FAIL'))) expect(line).not.toContain('mqtt.url ');
    } finally {
      await sim.stop();
    }
  });

  it('explains a wrong password and an unknown CA', async () => {
    const wrongPw = await runDoctor({ configPath: writeConfig('pw.yaml', { mqtt: { url: broker.url, username: 'gw', password: 'nope', ca_file: broker.caFile } }), checks, timeoutMs: 3000, serviceUser: 'root' });
    expect(byCheck(wrongPw, 'broker')).toMatchObject({ status: 'fail', fix: expect.stringContaining('mqtt.username and mqtt.password') });
    const noCa = await runDoctor({ configPath: writeConfig('ca.yaml', { mqtt: { url: broker.url, username: 'gw', password: 's3cret-pw' } }), checks, timeoutMs: 3000, serviceUser: 'root' });
    expect(byCheck(noCa, 'broker')).toMatchObject({ status: 'fail', fix: expect.stringContaining('mqtt.ca_file') });
  });

  it('says plainly that MQTT 3.1.1 loses refused publishes, and recommends 5.0', async () => {
    const v4 = await runDoctor({ configPath: writeConfig('v4.yaml', { mqtt: { url: broker.url, username: 'gw', password: 's3cret-pw', ca_file: broker.caFile, protocol_version: 4 } }), checks, timeoutMs: 3000, serviceUser: 'root' });
    expect(byCheck(v4, 'broker')).toMatchObject({ status: 'pass', detail: expect.stringContaining('(MQTT 3.1.1)') });
    expect(byCheck(v4, 'broker protocol')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('lost without a trace'),
      fix: expect.stringContaining('mqtt.protocol_version: 5'),
    });
  });

  it('sees what the service user will meet: placeholder ids, a password file it cannot read, a world-readable secret', async () => {
    const etc = join(dir, 'etc');
    mkdirSync(etc, { mode: 0o755 });
    chmodSync(dir, 0o755); // mkdtemp made it 0700: only the files below should be the obstacle
    const secret = join(etc, 'mqtt-password');
    writeFileSync(secret, 's3cret-pw\n', { mode: 0o600 }); // root-only, as `sudo nano` after `umask 077` leaves it
    const ca = join(etc, 'ca.pem');
    writeFileSync(ca, 'x', { mode: 0o644 });
    const key = join(etc, 'client.key');
    writeFileSync(key, 'x', { mode: 0o644 });
    chmodSync(key, 0o644);
    const configPath = writeConfig('files.yaml', {
      organization_id: '00000000-0000-4000-8000-000000000000',
      meters: [{ resource_id: '00000000-0000-4000-8000-000000000001', bus: 'rs485', unit_id: 1, profile: 'sdm630' }],
      mqtt: { url: broker.url, username: 'gw', password_file: secret, ca_file: ca, cert_file: ca, key_file: key },
    });
    chmodSync(configPath, 0o644);
    const onlyFiles = ALL_CHECKS.filter((c) => c.name === 'config' || c.name === 'files');
    // nobody (65534) stands for a service user outside root's and the files' groups.
    const results = await runDoctor({ configPath, checks: onlyFiles, serviceUser: 'nobody' });
    const text = results.map(formatResult).join('\n');
    expect(byCheck(results, 'ids'), text).toMatchObject({ status: 'fail', detail: 'organization_id, meters[0].resource_id still hold the example\'s placeholder' });
    expect(byCheck(results, 'files mqtt.password_file'), text).toMatchObject({ status: 'fail', detail: expect.stringContaining(`nobody cannot read ${secret} (mode 600`) });
    expect(byCheck(results, 'files mqtt.password_file')!.fix).toBe(`sudo chown root:nobody ${secret} && sudo chmod 0640 ${secret}`);
    expect(byCheck(results, 'files mqtt.key_file'), text).toMatchObject({ status: 'warn', detail: expect.stringContaining('readable by every user') });
    expect(byCheck(results, 'files config'), text).toMatchObject({ status: 'warn' });
    expect(byCheck(results, 'files mqtt.ca_file')).toBeUndefined(); // a CA certificate is public
    expect(exitCodeOf(results)).toBe(1);
  });

  it('exits non-zero from the command line when a check fails', () => {
    const configPath = writeConfig('cli.yaml', { meters: [{ resource_id: METER_C, bus: 'rs485', unit_id: 7, profile: 'sdm630' }] });
    const r = spawnSync(process.execPath, ['--import', 'tsx', resolve('src/cli.ts'), 'doctor', '--config', configPath, '--timeout-ms', '3000'], { encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^PASS {2}config {13}/m);
    expect(r.stdout).toMatch(/^FAIL {2}meter 2d8b4c60 .* -> fix: /m);
    expect(r.stdout).toContain('check(s) failed.');
  });
  it('on a running gateway: judges the meters by the daemon that holds the port, and still proves publishing', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const configPath = writeConfig('running.yaml', {
      poll: { interval_ms: 1000, offline_after_misses: 2, reprobe_initial_ms: 60_000 },
      meters: [
        { resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630' },
        { resource_id: METER_C, bus: 'rs485', unit_id: 7, profile: 'sdm630' }, // nobody at unit 7
      ],
      clock: { trust: 'system' },
      http: { host: '127.0.0.1', port },
      forecast: { enabled: false },
    });
    const daemon = await startDaemon(configPath);
    try {
      const until = Date.now() + 60_000;
      for (;;) {
        const status = (await (await fetch(`http://127.0.0.1:${port}/status.json`)).json()) as { meters: Array<{ resource_id: string; state: string }> };
        const state = (id: string) => status.meters.find((m) => m.resource_id === id)?.state;
        if (state(METER_A) === 'online' && state(METER_C) === 'offline') break;
        if (Date.now() > until) throw new Error(`meters never settled: ${JSON.stringify(status.meters)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const results = await runDoctor({ configPath, checks, timeoutMs: 3000, serviceUser: 'root' });
      const text = results.map(formatResult).join('\n');
      expect(byCheck(results, 'meter 0b6f2a4e'), text).toMatchObject({ status: 'pass', detail: expect.stringMatching(/answers the running daemon \d+ s ago: -?\d+ W, \d+\.\d kWh imported/) });
      expect(byCheck(results, 'meter 2d8b4c60'), text).toMatchObject({ status: 'fail', detail: expect.stringContaining('the running daemon gets no answer') });
      expect(byCheck(results, 'meter 2d8b4c60')!.fix).toContain('sudo systemctl stop metergate');
      expect(byCheck(results, 'publish 0b6f2a4e'), text).toMatchObject({ status: 'pass' });
    } finally {
      await daemon.stop();
    }
  });
});
