// What the operator decides is exposed (issue 20, item 5), in a running gateway (Daemon
// with its real modules) against strict ocpp-rpc chargers and raw upgrade requests:
// per-charger security profiles refusing weaker connections, profile 3 with real client
// certificates made by openssl, ocpp.port: false leaving only wss://, the AuthorizationKey
// as text or as the bytes of its hex digits, the ocpp1.6 or ocpp2.0.1 subprotocol required, a bad URL
// refused, repeated failures from one address slowed down (429), and a handler's own error
// answered without JavaScript internals.
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createContext, Daemon } from '../../src/daemon.js';
import { freePort } from '../../src/free-port.js';
import { createLogger } from '../../src/log.js';
import { databasePath } from '../../src/store/db.js';
import { makeCertificates } from '../helpers/mosquitto.js';
import { upgradeStatus } from '../helpers/ws-upgrade.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const PASSWORD = 'charger-secret-0123456789';
const HEX_KEY = '00112233445566778899aabbccddeeff01234567';

const openssl = (dir: string, ...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });

/** A client certificate with the subject CN `cn`, signed by the CA in `dir` (ca.crt, ca.key) or by a CA of its own. */
function clientCertificate(dir: string, cn: string, signer: { crt: string; key: string }): { cert: string; key: string } {
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', `${cn}.key`, '-out', `${cn}.csr`);
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  openssl(dir, 'x509', '-req', '-in', `${cn}.csr`, '-CA', signer.crt, '-CAkey', signer.key, '-CAcreateserial', '-days', '2', '-extfile', 'client.ext', '-out', `${cn}.crt`);
  return { cert: readFileSync(join(dir, `${cn}.crt`), 'utf8'), key: readFileSync(join(dir, `${cn}.key`), 'utf8') };
}

function lanAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  if (!found) throw new Error('this test needs a non-loopback IPv4 address on the machine (none found)');
  return found.address;
}


const basic = (id: string, password: string | Buffer) => `Basic ${Buffer.concat([Buffer.from(`${id}:`), Buffer.from(password)]).toString('base64')}`;

describe('OCPP exposure: security profiles, client certificates, subprotocol, throttling', () => {
  let dir: string;
  let daemon: Daemon;
  let ca: string;
  let ports: { ocpp: number; ocppTls: number; http: number };
  let certs: { good: { cert: string; key: string }; otherCn: { cert: string; key: string }; otherCa: { cert: string; key: string } };
  const clients: RPCClient[] = [];
  const logLines: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-sec-'));
    const server = makeCertificates(dir);
    ca = readFileSync(server.ca, 'utf8');
    // The chargers' CA (the operator's, named in ocpp.client_ca_file), and a stranger's.
    openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=charger CA', '-keyout', 'chargers-ca.key', '-out', 'chargers-ca.crt');
    openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=stranger CA', '-keyout', 'stranger-ca.key', '-out', 'stranger-ca.crt');
    const chargersCa = { crt: 'chargers-ca.crt', key: 'chargers-ca.key' };
    certs = {
      good: clientCertificate(dir, 'CP-P3', chargersCa),
      otherCn: clientCertificate(dir, 'CP-ELSEWHERE', chargersCa),
      otherCa: clientCertificate(dir, 'CP-P3', { crt: 'stranger-ca.crt', key: 'stranger-ca.key' }),
    };
    ports = { ocpp: await freePort(), ocppTls: await freePort(), http: await freePort() };
    const config = validateConfig(
      {
        organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        data_dir: join(dir, 'data'),
        log_level: 'fatal',
        http: { host: '127.0.0.1', port: ports.http, tls: { cert_file: server.cert, key_file: server.key } },
        prices: { regions: ['NL'], source: 'none' },
        forecast: { enabled: false },
        ocpp: { host: '0.0.0.0', port: ports.ocpp, tls_port: ports.ocppTls, client_ca_file: join(dir, 'chargers-ca.crt') },
        chargers: [
          { id: 'CP-P1', password: PASSWORD, auth: 'accept_all' },
          { id: 'CP-P2', password: PASSWORD, auth: 'accept_all', security_profile: 2 },
          { id: 'CP-P3', auth: 'accept_all', security_profile: 3 },
          { id: 'CP-HEX', password: HEX_KEY, auth: 'accept_all' },
        ],
      },
      'test',
      {},
    );
    daemon = new Daemon(createContext(config, { logger: createLogger('warn', { write: (line: string) => void logLines.push(line) }) }));
    await daemon.start();
  }, 90_000);

  afterAll(async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => undefined);
    await daemon?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function charger(identity: string, opts: { password?: string | Buffer | null; tls?: boolean; cert?: { cert: string; key: string }; localAddress?: string; protocol?: 'ocpp1.6' | 'ocpp2.0.1' } = {}): RPCClient {
    const client = new RPCClient({
      endpoint: opts.tls ? `wss://localhost:${ports.ocppTls}` : `ws://127.0.0.1:${ports.ocpp}`,
      identity,
      ...(opts.password === null ? {} : { password: opts.password ?? PASSWORD }),
      protocols: [opts.protocol ?? 'ocpp1.6'],
      strictMode: true,
      reconnect: false,
      wsOpts: { ...(opts.tls ? { ca, ...(opts.cert ?? {}) } : {}), ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) },
    } as ClientOptions);
    clients.push(client);
    return client;
  }

  async function connects(client: RPCClient): Promise<true | number> {
    try {
      await client.connect();
      const beat = (await client.call('Heartbeat', {})) as { currentTime: string };
      expect(Date.parse(beat.currentTime)).toBeGreaterThan(0);
      await client.close();
      return true;
    } catch (err) {
      return (err as { code?: number }).code ?? -1;
    }
  }

  it('profile 1 connects over ws and wss; profile 2 only over wss; both need the password', async () => {
    expect(await connects(charger('CP-P1'))).toBe(true);
    expect(await connects(charger('CP-P1', { tls: true }))).toBe(true);
    expect(await connects(charger('CP-P2'))).toBe(401);
    expect(await connects(charger('CP-P2', { tls: true }))).toBe(true);
    expect(await connects(charger('CP-P2', { tls: true, password: 'wrong-password-0123456789' }))).toBe(401);
    expect(logLines.some((l) => l.includes('must connect over wss://') && l.includes('CP-P2'))).toBe(true);
  });

  it('profile 3 takes a real client certificate from the named CA with the id as CN, and nothing less', async () => {
    expect(await connects(charger('CP-P3', { tls: true, password: null, cert: certs.good }))).toBe(true);
    // No certificate (a password does not replace it), ws://, another CN, another CA.
    expect(await connects(charger('CP-P3', { tls: true, password: PASSWORD }))).toBe(401);
    expect(await connects(charger('CP-P3', { password: PASSWORD }))).toBe(401);
    expect(await connects(charger('CP-P3', { tls: true, password: null, cert: certs.otherCn }))).toBe(401);
    expect(await connects(charger('CP-P3', { tls: true, password: null, cert: certs.otherCa }))).toBe(401);
    // A profile 2 charger still connects without a certificate on the same listener.
    expect(await connects(charger('CP-P2', { tls: true }))).toBe(true);
    expect(logLines.some((l) => l.includes('security profile 3 needs a client certificate') && l.includes('CN CP-ELSEWHERE'))).toBe(true);
  });

  it('TC_A_08_CSMS TLS - Client-side certificate - Invalid certificate, over OCPP 2.0.1: the same profile 3 check as for 1.6, then the station boots', async () => {
    // The handshake is the transport's, whatever the subprotocol: a stranger CA's certificate is refused, the named CA's taken.
    expect(await connects(charger('CP-P3', { tls: true, password: null, cert: certs.otherCa, protocol: 'ocpp2.0.1' }))).toBe(401);
    expect(await connects(charger('CP-P3', { tls: true, password: PASSWORD, protocol: 'ocpp2.0.1' }))).toBe(401);
    const station = charger('CP-P3', { tls: true, password: null, cert: certs.good, protocol: 'ocpp2.0.1' });
    await station.connect();
    expect(station.protocol).toBe('ocpp2.0.1');
    const boot = (await station.call('BootNotification', { reason: 'PowerUp', chargingStation: { model: 'M', vendorName: 'V' } })) as { status: string };
    expect(boot.status).toBe('Accepted');
    await station.close();
  });

  it('a hex AuthorizationKey is accepted as typed and as the 20 bytes it stands for', async () => {
    expect(await connects(charger('CP-HEX', { password: HEX_KEY }))).toBe(true);
    expect(await connects(charger('CP-HEX', { password: Buffer.from(HEX_KEY, 'hex') }))).toBe(true);
    expect(await connects(charger('CP-HEX', { password: Buffer.from(HEX_KEY.slice(0, 32), 'hex') }))).toBe(401);
  });

  it('refuses at the handshake an upgrade without ocpp1.6 or ocpp2.0.1, with a path it cannot decode or too long, and stays up', async () => {
    const auth = { authorization: basic('CP-P1', PASSWORD) };
    expect(await upgradeStatus(ports.ocpp, '/ocpp/CP-P1', { ...auth, 'sec-websocket-protocol': 'ocpp1.6' })).toBe(101);
    expect(await upgradeStatus(ports.ocpp, '/ocpp/CP-P1', auth)).toBe(400);
    // ocpp2.0.1 is spoken too (issue 33); 2.1 is not.
    expect(await upgradeStatus(ports.ocpp, '/ocpp/CP-P1', { ...auth, 'sec-websocket-protocol': 'ocpp2.0.1' })).toBe(101);
    expect(await upgradeStatus(ports.ocpp, '/ocpp/CP-P1', { ...auth, 'sec-websocket-protocol': 'ocpp2.1' })).toBe(400);
    expect(await upgradeStatus(ports.ocpp, '/ocpp/CP-P1', { ...auth, 'sec-websocket-protocol': 'ocpp1.5, ocpp2.1' })).toBe(400);
    expect(await upgradeStatus(ports.ocpp, '/ocpp/%E0%A4%A', { ...auth, 'sec-websocket-protocol': 'ocpp1.6' })).toBe(400);
    expect(await upgradeStatus(ports.ocpp, `/ocpp/${'x'.repeat(2000)}`, { ...auth, 'sec-websocket-protocol': 'ocpp1.6' })).toBe(400);
    expect(await connects(charger('CP-P1'))).toBe(true);
    const text = await daemon.ctx.metrics.metrics();
    expect(text).toMatch(/^metergate_ocpp_connections_refused_total\{reason="no_subprotocol"\} 3$/m);
    expect(text).toMatch(/^metergate_ocpp_connections_refused_total\{reason="bad_url"\} 2$/m);
  });

  it('an address that keeps failing is slowed down (429 even with the right password), others are not', async () => {
    const lan = lanAddress();
    const statuses: Array<true | number> = [];
    for (let i = 0; i < 12; i++) statuses.push(await connects(charger('CP-P1', { password: `wrong-password-${String(i).padStart(10, '0')}`, localAddress: lan })));
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual([429, 429]);
    expect(await connects(charger('CP-P1', { localAddress: lan }))).toBe(429);
    // Loopback (another address) is not held up by it.
    expect(await connects(charger('CP-P1'))).toBe(true);
  });

  it('calls outside the OCPP 1.6 schemas and their bounds get CallErrors and store nothing', async () => {
    const loose = new RPCClient({ endpoint: `ws://127.0.0.1:${ports.ocpp}`, identity: 'CP-P1', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: false, reconnect: false } as ClientOptions);
    clients.push(loose);
    await loose.connect();
    const ts = new Date().toISOString();
    const bad: Array<[string, Record<string, unknown>]> = [
      ['StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: -5, timestamp: ts }],
      ['StartTransaction', { connectorId: -1, idTag: 'TAG', meterStart: 5, timestamp: ts }],
      ['StartTransaction', { connectorId: 0, idTag: 'TAG', meterStart: 5, timestamp: ts }],
      ['StartTransaction', { connectorId: 1, idTag: 'T'.repeat(300), meterStart: 5, timestamp: ts }],
      ['StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 2 ** 40, timestamp: ts }],
      ['StopTransaction', { transactionId: 1, meterStop: -1e20, timestamp: ts }],
      ['StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Whatever' }],
      ['StatusNotification', { connectorId: -1, errorCode: 'NoError', status: 'Available' }],
      ['MeterValues', { connectorId: 1, meterValue: 'not a list' }],
    ];
    for (const [action, params] of bad) {
      const err = (await loose.call(action, params).then(
        () => null,
        (e: unknown) => e,
      )) as (Error & { rpcErrorCode?: string }) | null;
      expect(err, `${action} ${JSON.stringify(params).slice(0, 80)}`).toBeInstanceOf(Error);
      expect(err!.rpcErrorCode, action).toMatch(/Violation$/);
      expect(err!.message).not.toMatch(/is not a function|TypeError|undefined/);
    }
    await loose.close();
    const db = daemon.ctx.db;
    expect(db.prepare('SELECT count(*) FROM ocpp_transactions').pluck().get()).toBe(0);
    expect(db.prepare("SELECT count(*) FROM ocpp_connector_status WHERE status = 'Whatever' OR connector_id < 0").pluck().get()).toBe(0);
  });

  it('an error inside the gateway is answered InternalError without JavaScript internals', async () => {
    const cp = charger('CP-P1');
    await cp.connect();
    // Another process holds the write lock: the Heartbeat's write fails inside the gateway.
    const other = new Database(databasePath(join(dir, 'data')), { timeout: 0 });
    other.exec('BEGIN IMMEDIATE');
    let answer: unknown;
    try {
      answer = await cp.call('Heartbeat', {}, { callTimeoutMs: 20_000 }).catch((err: unknown) => err);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // Either the gateway waited for the lock and answered, or it answered a CallError that says nothing of its insides.
    if (answer instanceof Error) {
      expect((answer as Error & { rpcErrorCode?: string }).rpcErrorCode).toBe('InternalError');
      expect(answer.message).not.toMatch(/sqlite|database|locked|is not a function|TypeError|at .*\.(ts|js)/i);
      expect(JSON.stringify((answer as Error & { details?: unknown }).details ?? {})).toBe('{}');
    } else {
      expect(answer).toMatchObject({ currentTime: expect.any(String) });
    }
    await cp.close();
  });
});

describe('ocpp.port: false', () => {
  it('listens on wss:// only: a charger connects over TLS, nothing answers ws://', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-wss-only-'));
    const server = makeCertificates(dir);
    const [tlsPort, http] = [await freePort(), await freePort()];
    const lines: string[] = [];
    const config = validateConfig(
      {
        organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        data_dir: join(dir, 'data'),
        log_level: 'info',
        http: { host: '127.0.0.1', port: http, tls: { cert_file: server.cert, key_file: server.key } },
        prices: { regions: ['NL'], source: 'none' },
        forecast: { enabled: false },
        ocpp: { host: '127.0.0.1', port: false, tls_port: tlsPort },
        chargers: [{ id: 'CP-P1', password: PASSWORD, auth: 'accept_all' }],
      },
      'test',
      {},
    );
    const daemon = new Daemon(createContext(config, { logger: createLogger('info', { write: (line: string) => void lines.push(line) }) }));
    await daemon.start();
    const cp = new RPCClient({ endpoint: `wss://localhost:${tlsPort}`, identity: 'CP-P1', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false, wsOpts: { ca: readFileSync(server.ca, 'utf8') } } as ClientOptions);
    try {
      await cp.connect();
      expect(await cp.call('Heartbeat', {})).toMatchObject({ currentTime: expect.any(String) });
      const listening = JSON.parse(lines.find((l) => l.includes('OCPP central system listening'))!) as { port: number; tls_port: number };
      expect(listening).toMatchObject({ port: 0, tls_port: tlsPort });
      // The port ws:// used to take by default answers nothing of ours either.
      const ws = new RPCClient({ endpoint: 'ws://127.0.0.1:8887', identity: 'CP-P1', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
      await expect(ws.connect()).rejects.toBeDefined();
    } finally {
      await cp.close({ force: true }).catch(() => undefined);
      await daemon.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
