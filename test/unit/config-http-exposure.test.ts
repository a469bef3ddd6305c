// config check refuses an HTTP API beyond loopback without TLS, unless explicitly allowed,
// and TLS files that cannot serve. Certificates are made here with openssl.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackAddress, isLoopbackHost } from '../../src/config/http-exposure.js';
import { ConfigError, validateConfig } from '../../src/config/load.js';
import { makeCertificates } from '../helpers/mosquitto.js';

const ORG = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

function problems(http: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): readonly string[] {
  try {
    validateConfig({ organization_id: ORG, data_dir: '/nonexistent', http }, 'test', env);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}

const PLAINTEXT = /^http\.host: .* serves beyond this machine without TLS, so API tokens would cross the network in clear text; set http\.tls\.cert_file and http\.tls\.key_file, or http\.allow_plaintext_lan: true/;

describe('http bind and TLS in config check', () => {
  let dir: string;
  let pair: { ca: string; cert: string; key: string };
  let other: { ca: string; cert: string; key: string };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-http-tls-'));
    pair = makeCertificates(mkdtempSync(join(dir, 'a-')));
    other = makeCertificates(mkdtempSync(join(dir, 'b-')));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loopback addresses and localhost are this machine; wildcards, LAN addresses and names are not', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.20', 'fd00::2', 'gateway.local', '128.0.0.1', '::ffff:10.0.0.1']) expect(isLoopbackHost(host), host).toBe(false);
    expect(isLoopbackAddress('localhost')).toBe(false); // a peer address is never a name
  });

  it('refuses a bind beyond loopback without TLS, naming the way out', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.20', 'gateway.local']) {
      const found = problems({ host });
      expect(found, host).toHaveLength(1);
      expect(found[0], host).toMatch(PLAINTEXT);
      expect(found[0]).toContain(`http.host: ${host} `);
    }
    // The same through the environment override an installer might use.
    expect(problems({}, { METERGATE_HTTP__HOST: '0.0.0.0' })[0]).toMatch(PLAINTEXT);
  });

  it('accepts loopback, an explicit allow_plaintext_lan, a disabled API, and TLS with a matching pair', () => {
    expect(problems({ host: '127.0.0.1' })).toEqual([]);
    expect(problems({ host: 'localhost' })).toEqual([]);
    expect(problems({ host: '0.0.0.0', allow_plaintext_lan: true })).toEqual([]);
    expect(problems({ host: '0.0.0.0' }, { METERGATE_HTTP__ALLOW_PLAINTEXT_LAN: 'true' })).toEqual([]);
    expect(problems({ host: '0.0.0.0', enabled: false })).toEqual([]);
    expect(problems({ host: '0.0.0.0', tls: { cert_file: pair.cert, key_file: pair.key } })).toEqual([]);
    expect(validateConfig({ organization_id: ORG, data_dir: '/x' }, 'test', {}).http.allow_plaintext_lan).toBe(false);
  });

  it('TLS files: missing, not PEM, or a key of another certificate are refused', () => {
    const missing = problems({ host: '0.0.0.0', tls: { cert_file: join(dir, 'nope.pem'), key_file: pair.key } });
    expect(missing).toEqual([`http.tls.cert_file: ${join(dir, 'nope.pem')} does not exist`]);
    const mismatch = problems({ host: '0.0.0.0', tls: { cert_file: pair.cert, key_file: other.key } });
    expect(mismatch).toHaveLength(1);
    expect(mismatch[0]).toMatch(/^http\.tls: .* are not a usable PEM certificate and its key \(.*key values mismatch/);
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, 'not a certificate\n');
    expect(problems({ host: '0.0.0.0', tls: { cert_file: garbage, key_file: pair.key } })[0]).toMatch(/^http\.tls: .* are not a usable PEM certificate and its key/);
    // The key never appears in a problem.
    const keyBody = readFileSync(other.key, 'utf8').split('\n')[1];
    expect(mismatch.join('\n')).not.toContain(keyBody);
    expect(problems({ host: '0.0.0.0', tls: { cert_file: pair.cert } })).toEqual(['http.tls.key_file: is required']);
  });

  it('config/example.yaml listens on loopback; switching it to 0.0.0.0 alone is refused', () => {
    const raw = parseDocument(readFileSync('config/example.yaml', 'utf8')).toJS() as { http: { host: string }; mqtt: unknown; prices: unknown };
    expect(raw.http.host).toBe('127.0.0.1');
    const found = problems({ ...raw.http, host: '0.0.0.0' });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(PLAINTEXT);
  });
});
