// `metergate charger` over HTTPS against `metergate run` with http.tls: a CA-issued
// certificate is verified with --ca-file and the host name (refused without the CA, and for
// a name the certificate does not carry); after the daemon switches to a self-signed
// certificate (SIGHUP), only an explicit --pin-sha256 of it gets through. Certificates are
// made here with openssl (test/helpers/mosquitto.ts makeCertificates: a CA and a server
// certificate for localhost and 127.0.0.1).
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get as httpsGet } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { TokenStore } from '../../src/store/tokens.js';
import { runCli } from '../helpers/cli-process.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { makeCertificates } from '../helpers/mosquitto.js';
import { until } from '../helpers/wait.js';

const CP = 'CP-TLS-1';

/** `metergate <args>` from the build (scripts/test builds first): faster than through tsx on a loaded machine. */
const cli = (args: string[], env: NodeJS.ProcessEnv) => runCli(args, env);

describe('metergate charger over HTTPS: CA verification with the host name, pinning only for a self-signed certificate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-cli-tls-'));
  const dataDir = join(dir, 'data');
  const configPath = join(dir, 'config.yaml');
  const live = { cert: join(dir, 'live.crt'), key: join(dir, 'live.key') };
  let certs: { ca: string; cert: string; key: string };
  const selfSigned = { cert: join(dir, 'self.crt'), key: join(dir, 'self.key') };
  let daemon: DaemonProcess | undefined;
  let env: NodeJS.ProcessEnv = {};
  let httpPort = 0;

  const reservations = (...flags: string[]) => cli(['charger', 'reservations', CP, '--config', configPath, ...flags], env);
  const fingerprint = (file: string) => new X509Certificate(readFileSync(file)).fingerprint256;
  /** How many reservations requests the daemon answered (metergate_http_requests_total): what a refused run must leave unchanged. Read without verifying: the reading is not what is tested. */
  const reservationRequests = () =>
    new Promise<number>((resolve, reject) => {
      httpsGet(`https://127.0.0.1:${httpPort}/metrics`, { rejectUnauthorized: false, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve(text.split('\n').filter((l) => /^metergate_http_requests_total\{[^}]*route="[^"]*reservations/.test(l)).reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0)));
      }).on('error', reject);
    });

  beforeAll(async () => {
    mkdirSync(dataDir);
    certs = makeCertificates(dir);
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=gateway.local', '-keyout', selfSigned.key, '-out', selfSigned.cert], { stdio: 'pipe' });
    expect(made.status, made.stderr.toString()).toBe(0);
    copyFileSync(certs.cert, live.cert);
    copyFileSync(certs.key, live.key);
    const db = openDaemonDatabase(databasePath(dataDir));
    env = { MG_TOKEN: new TokenStore(db).create({ name: 'operator', type: 'cpo', nowMs: Date.now() }).token };
    db.close();
    const [ocppPort, port] = [await freePort(), await freePort()];
    httpPort = port;
    writeFileSync(
      configPath,
      [
        'organization_id: 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        `data_dir: ${dataDir}`,
        'log_level: info',
        `http: { host: 127.0.0.1, port: ${httpPort}, tls: { cert_file: ${live.cert}, key_file: ${live.key} } }`,
        'prices: { regions: [NL], source: none }',
        'forecast: { enabled: false }',
        `ocpp: { host: 127.0.0.1, port: ${ocppPort} }`,
        'chargers:',
        `  - id: ${CP}`,
        '    password: cli-tls-key-0123456789',
        '    auth: accept_all',
        '',
      ].join('\n'),
    );
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });
  }, 180_000);

  afterAll(async () => {
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies a CA-issued certificate against --ca-file and the host name', { timeout: 120_000 }, async () => {
    const requestsBefore = await reservationRequests();
    const [noCa, wrongName, both] = await Promise.all([
      reservations(),
      reservations('--ca-file', certs.ca, '--server-name', 'gateway.example.com'),
      reservations('--ca-file', certs.ca, '--pin-sha256', fingerprint(certs.cert)),
    ]);
    // Refused: the daemon answered no request (the token never went out).
    expect(await reservationRequests()).toBe(requestsBefore);
    const [withCa, byName, byUrl] = await Promise.all([
      reservations('--ca-file', certs.ca),
      reservations('--ca-file', certs.ca, '--server-name', 'localhost'),
      cli(['charger', 'reservations', CP, '--url', `https://localhost:${httpPort}`, '--ca-file', certs.ca], env),
    ]);
    // Counted as each answer finishes: waited on; then exactly the successful runs, none of the refused.
    await until(async () => (await reservationRequests()) >= requestsBefore + 3, 'the successful runs counted', 60_000);
    expect(await reservationRequests()).toBe(requestsBefore + 3);
    for (const ok of [withCa, byName, byUrl]) {
      expect(ok.code, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout)).toEqual({ charge_point_id: CP, reservations: [] });
    }
    expect(noCa.code).toBe(69);
    expect(noCa.stderr).toContain('is not trusted');
    expect(noCa.stderr).toContain('--ca-file');
    expect(wrongName.code).toBe(69);
    expect(wrongName.stderr).toContain('does not name the host');
    expect(both.code).toBe(64);
  });

  it('takes a self-signed certificate only by an explicit pin of its fingerprint', { timeout: 120_000 }, async () => {
    copyFileSync(selfSigned.cert, live.cert);
    copyFileSync(selfSigned.key, live.key);
    const reloads = () => daemon!.output().split('HTTP TLS certificate reloaded').length;
    const before = reloads();
    daemon!.process.kill('SIGHUP');
    await until(() => reloads() > before, 'the daemon serves the self-signed certificate', 60_000);

    const requestsBefore = await reservationRequests();
    const [caOnly, wrongPin, badPin] = await Promise.all([
      reservations('--ca-file', certs.ca),
      reservations('--pin-sha256', fingerprint(certs.cert)),
      reservations('--pin-sha256', 'abc'),
    ]);
    // Refused: the daemon answered no request (the token never went out).
    expect(await reservationRequests()).toBe(requestsBefore);
    const [pinned, colonless] = await Promise.all([
      reservations('--pin-sha256', fingerprint(selfSigned.cert)),
      // From the environment, as an operator sets it once for the shell, and without colons.
      cli(['charger', 'reservations', CP, '--config', configPath], { ...env, MG_PIN_SHA256: fingerprint(selfSigned.cert).replace(/:/g, '').toLowerCase() }),
    ]);
    // Counted as each answer finishes: waited on; then exactly the successful runs, none of the refused.
    await until(async () => (await reservationRequests()) >= requestsBefore + 2, 'the successful runs counted', 60_000);
    expect(await reservationRequests()).toBe(requestsBefore + 2);
    expect(caOnly.code).toBe(69);
    expect(caOnly.stderr).toContain('--pin-sha256');
    for (const ok of [pinned, colonless]) {
      expect(ok.code, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout).reservations).toEqual([]);
    }
    expect(wrongPin.code).toBe(69);
    expect(wrongPin.stderr).toContain('not the one pinned');
    expect(wrongPin.stderr).toContain(fingerprint(selfSigned.cert));
    expect(badPin.code).toBe(64);
  });
});
