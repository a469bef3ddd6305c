// The HTTP API over TLS with a real TLS client and a CA made here (openssl): nothing is
// served in clear text, the certificate is verified, a renewed certificate is served after
// SIGHUP (a real daemon process), and the operational routes answer only this machine
// when the API listens beyond loopback.
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect as connectTcp } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EX_CONFIG } from '../../src/config/load.js';
import { freePort } from '../../src/free-port.js';
import { fetchDaemonMeters } from '../../src/ops/doctor/meters.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { startTestHttp, type TestHttp } from '../helpers/http.js';
import { expectDocumented } from '../helpers/openapi.js';
import { makeCertificates } from '../helpers/mosquitto.js';
import { until } from '../helpers/wait.js';

const ORG = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const root = fileURLToPath(new URL('../..', import.meta.url));

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** One HTTPS GET with node:https, trusting only `ca`; `localAddress` picks our source address. */
function httpsGet(port: number, path: string, opts: { ca?: string; host?: string; localAddress?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: opts.host ?? '127.0.0.1', port, path, method: 'GET', servername: 'localhost', agent: false, ...(opts.ca ? { ca: opts.ca } : {}), ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The SHA-256 fingerprint of the certificate the server presents (chain verified against `cas`). */
function presentedFingerprint(port: number, cas: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTls({ host: '127.0.0.1', port, servername: 'localhost', ca: [...cas] }, () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fp);
    });
    socket.on('error', reject);
  });
}

/** A non-loopback IPv4 address of this machine: the source address a LAN client would have. */
function lanAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  if (!found) throw new Error('this test needs a non-loopback IPv4 address on the machine (none found)');
  return found.address;
}

describe('HTTPS API on 0.0.0.0', () => {
  let dir: string;
  let certs: { ca: string; cert: string; key: string };
  let ca: string;
  let http: TestHttp;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-https-'));
    certs = makeCertificates(dir);
    ca = readFileSync(certs.ca, 'utf8');
    http = await startTestHttp({ config: { http: { host: '0.0.0.0', tls: { cert_file: certs.cert, key_file: certs.key } } } });
    port = http.server.address().port;
  });
  afterAll(async () => {
    await http?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS with the configured certificate, verified by a client trusting the CA', async () => {
    expect(http.server.url()).toMatch(/^https:\/\//);
    const res = await httpsGet(port, '/healthz', { ca });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ status: expect.any(String) });
    expect(await presentedFingerprint(port, [ca])).toBe(new X509Certificate(readFileSync(certs.cert)).fingerprint256);
  });

  it('a client that does not trust the CA refuses the connection (the certificate is really checked)', async () => {
    await expect(httpsGet(port, '/healthz')).rejects.toThrow(/self[- ]signed|unable to verify|unable to get local issuer/i);
  });

  it('plain HTTP on the TLS port gets no HTTP answer (nothing is served in clear text)', async () => {
    const raw = await new Promise<string>((resolve) => {
      const socket = connectTcp(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    });
    expect(raw).not.toContain('HTTP/1.1');
  });

  it('requests the parser refuses are problem+json over TLS too (431)', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connectTls({ host: '127.0.0.1', port, servername: 'localhost', ca }, () => socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`));
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 431 /);
    expect(raw).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 431 });
  });

  it('/status, /status.json and /metrics answer this machine (loopback, or its own LAN address)', async () => {
    for (const path of ['/status', '/status.json', '/metrics']) expect((await httpsGet(port, path, { ca })).status, path).toBe(200);
    const lan = lanAddress();
    // This machine connecting to its own LAN address: the peer address is the local address.
    expect((await httpsGet(port, '/status.json', { ca, host: lan, localAddress: lan })).status).toBe(200);
  });

  it('doctor reads the running daemon\'s /status.json over TLS (from 127.0.0.1 on a 0.0.0.0 bind)', async () => {
    const config = { ...http.ctx.config, http: { ...http.ctx.config.http, port } };
    expect(await fetchDaemonMeters(config, 10_000)).toEqual([]);
    // The same over plain HTTP would get no answer: null, which is what doctor says when no daemon runs.
    expect(await fetchDaemonMeters({ ...config, http: { ...config.http, tls: undefined } }, 10_000)).toBeNull();
  });

  it('from another address they are 403 problem+json naming the SSH tunnel; /healthz and the API stay reachable', async () => {
    // A peer whose address is not loopback and not the address it connected to is what a
    // LAN client looks like to the server: our LAN address as source, 127.0.0.1 as target.
    const lan = lanAddress();
    for (const path of ['/status', '/status/status.js', '/status/render.js', '/status.json', '/metrics']) {
      const res = await httpsGet(port, path, { ca, localAddress: lan });
      expect(res.status, path).toBe(403);
      expect(res.contentType).toMatch(/^application\/problem\+json/);
      const problem = JSON.parse(res.body) as { detail: string };
      expect(problem.detail).toContain(`${path} is served only to clients on the gateway itself`);
      expect(problem.detail).toContain(`ssh -L 8080:127.0.0.1:${port}`);
      expect(res.body).not.toContain(ORG);
      if (!path.startsWith('/status/')) expectDocumented('GET', path, new Response(res.body, { status: res.status, headers: { 'content-type': res.contentType } }), problem);
    }
    expect((await httpsGet(port, '/healthz', { ca, localAddress: lan })).status).toBe(200);
    expect((await httpsGet(port, '/api/v1/openapi.json', { ca, localAddress: lan })).status).toBe(200);
    expect((await httpsGet(port, '/api/v1/cdrs/x', { ca, localAddress: lan })).status).toBe(401);
  });
});

describe('an API on loopback only', () => {
  it('serves the operational routes without the local-client check (every peer is local)', async () => {
    const http = await startTestHttp();
    try {
      const res = await fetch(`${http.url}/status.json`);
      expect(res.status).toBe(200);
      expect(JSON.stringify(await res.json())).toContain(ORG);
    } finally {
      await http.close();
    }
  });
});

describe('metergate run with http.tls: SIGHUP reloads the certificate', () => {
  let dir: string;
  let daemon: DaemonProcess | undefined;
  afterAll(async () => {
    await daemon?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the renewed pair after SIGHUP; a broken pair is refused and the previous one kept', { timeout: 120_000 }, async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-https-daemon-'));
    const first = makeCertificates(mkdtempSync(join(dir, 'first-')));
    const renewed = makeCertificates(mkdtempSync(join(dir, 'renewed-')));
    const certFile = join(dir, 'http-cert.pem');
    const keyFile = join(dir, 'http-key.pem');
    copyFileSync(first.cert, certFile);
    copyFileSync(first.key, keyFile);
    const cas = [readFileSync(first.ca, 'utf8'), readFileSync(renewed.ca, 'utf8')];
    const fingerprint = (file: string) => new X509Certificate(readFileSync(file)).fingerprint256;
    const port = await freePort();
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      `organization_id: ${ORG}
data_dir: ${dir}/data
clock: { trust: system }
http: { host: 127.0.0.1, port: ${port}, tls: { cert_file: '${certFile}', key_file: '${keyFile}' } }
prices: { source: none }
forecast: { enabled: false }
`,
    );
    daemon = await startDaemon(config);
    expect(await presentedFingerprint(port, cas)).toBe(fingerprint(first.cert));

    // A renewal: new files in place, then SIGHUP (what a certbot deploy hook would do).
    copyFileSync(renewed.cert, certFile);
    copyFileSync(renewed.key, keyFile);
    daemon.process.kill('SIGHUP');
    await until(async () => (await presentedFingerprint(port, cas)) === fingerprint(renewed.cert), 'the renewed certificate to be served', 60_000);
    // The log line travels through a pipe on its own schedule: wait for it too.
    await until(() => daemon!.output().includes('HTTP TLS certificate reloaded'), 'the reload to be logged', 60_000);

    // A half-written renewal (key of another certificate): refused, the renewed pair stays.
    copyFileSync(first.key, keyFile);
    daemon.process.kill('SIGHUP');
    await until(() => daemon!.output().includes('HTTP TLS certificate not reloaded'), 'the refused reload to be logged', 60_000);
    expect(await presentedFingerprint(port, cas)).toBe(fingerprint(renewed.cert));
    expect(daemon.process.exitCode).toBeNull();
    expect(daemon.output()).not.toContain(readFileSync(first.key, 'utf8').split('\n')[1]);
  });
});

describe('metergate run without http.tls', () => {
  it('logs and ignores SIGHUP instead of ending', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-hup-'));
    const port = await freePort();
    const config = join(dir, 'config.yaml');
    writeFileSync(config, `organization_id: ${ORG}\ndata_dir: ${dir}/data\nclock: { trust: system }\nhttp: { host: 127.0.0.1, port: ${port} }\nprices: { source: none }\nforecast: { enabled: false }\n`);
    const daemon = await startDaemon(config);
    try {
      daemon.process.kill('SIGHUP');
      await until(() => daemon.output().includes('SIGHUP: http.tls is not set, nothing to reload'), 'the SIGHUP to be logged', 60_000);
      expect(daemon.process.exitCode).toBeNull();
      expect((await fetch(`http://127.0.0.1:${port}/healthz/live`)).status).toBe(200);
    } finally {
      await daemon.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('metergate config check', () => {
  it('exits 78 for 0.0.0.0 without TLS, saying why and how to fix it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-check-'));
    try {
      const file = join(dir, 'config.yaml');
      writeFileSync(file, `organization_id: ${ORG}\ndata_dir: ${dir}\nhttp: { host: 0.0.0.0 }\nprices: { source: none }\n`);
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'config', 'check', file], { cwd: root, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(EX_CONFIG);
      expect(r.stdout + r.stderr).toContain('http.host: 0.0.0.0 serves beyond this machine without TLS, so API tokens would cross the network in clear text');
      writeFileSync(file, `organization_id: ${ORG}\ndata_dir: ${dir}\nhttp: { host: 0.0.0.0, allow_plaintext_lan: true }\nprices: { source: none }\n`);
      const ok = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'config', 'check', file], { cwd: root, encoding: 'utf8' });
      expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
