// Who can reach the HTTP API, and whether tokens would cross a network in clear text.
// Checked once at config load (so `config check` and `run` refuse the same configs).
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { readConfigFile } from './files.js';
import type { Config } from './types.js';

/** An IP address of this machine's loopback interface (127.0.0.0/8, ::1, v4-mapped 127.x). */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  if (a === '::1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/**
 * Whether listening on `host` keeps the API on this machine. `localhost` counts (it names
 * loopback by convention, RFC 6761); any other name or a wildcard (0.0.0.0, ::) does not.
 */
export function isLoopbackHost(host: string): boolean {
  return host.toLowerCase() === 'localhost' || isLoopbackAddress(host);
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Problems with `http`: a bind beyond loopback without TLS (unless allow_plaintext_lan),
 * and TLS files that are missing, unreadable, not PEM, or do not belong together. Reads
 * defensively: it also runs on configs the schema refused (what is malformed is the
 * schema's to report).
 */
export function httpExposureProblems(http: Config['http'] | undefined): string[] {
  const problems: string[] = [];
  if (!isMapping(http) || http.enabled === false) return problems;
  if (typeof http.host === 'string' && http.tls === undefined && http.allow_plaintext_lan !== true && !isLoopbackHost(http.host)) {
    problems.push(
      `http.host: ${http.host} serves beyond this machine without TLS, so API tokens would cross the network in clear text; ` +
        'set http.tls.cert_file and http.tls.key_file, or http.allow_plaintext_lan: true to accept that, or listen on 127.0.0.1',
    );
  }
  if (isMapping(http.tls) && typeof http.tls.cert_file === 'string' && typeof http.tls.key_file === 'string') {
    const cert = readConfigFile(http.tls.cert_file, 'http.tls.cert_file', problems);
    const key = readConfigFile(http.tls.key_file, 'http.tls.key_file', problems);
    if (cert !== undefined && key !== undefined) {
      try {
        createSecureContext({ cert, key });
      } catch (err) {
        // OpenSSL's reason ("key values mismatch", "no start line"), never the key itself.
        problems.push(`http.tls: ${http.tls.cert_file} and ${http.tls.key_file} are not a usable PEM certificate and its key (${(err as Error).message})`);
      }
    }
  }
  return problems;
}
