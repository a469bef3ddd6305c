// How `metergate charger` trusts the gateway's HTTPS certificate (docs/chargers.md "Operator
// operations"): verified as any HTTPS client does, against a CA (--ca-file, else the
// system's and Node's roots) with the host name checked (the URL's host, or --server-name
// when the URL is a loopback address the certificate does not name). Only as an explicit
// fallback for a self-signed gateway certificate: --pin-sha256, its SHA-256 fingerprint
// (the daemon logs it at start as cert_sha256); the certificate presented is compared with
// the pin on a first connection that sends nothing, and the request goes only to that
// certificate. The token is never sent before the server is verified.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import * as tls from 'node:tls';

export type GatewayTrust =
  | { readonly kind: 'ca'; readonly ca: readonly string[] | undefined; readonly serverName: string | undefined }
  | { readonly kind: 'pin'; readonly sha256: string; readonly serverName: string | undefined };

/** AB:CD:… or abcd… (64 hex digits) → upper-case hex without colons; null when it is not one. */
export function normalizeFingerprint(value: string): string | null {
  const hex = value.replace(/[:\s]/g, '').toUpperCase();
  return /^[0-9A-F]{64}$/.test(hex) ? hex : null;
}

/**
 * Whether a URL's host is this machine (plain http stays on it): an IPv4 literal in
 * 127.0.0.0/8, ::1 or localhost. A name such as 127.attacker.example resolves anywhere.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** The system's roots besides Node's own where this Node can read them (22.15+, 24); else Node's roots and NODE_EXTRA_CA_CERTS. */
function systemRoots(): string[] | undefined {
  const get = (tls as { getCACertificates?: (kind: string) => string[] }).getCACertificates;
  if (typeof get !== 'function') return undefined;
  return [...get('default'), ...get('system')];
}

export function trustFrom(opts: { caFile?: string; pinSha256?: string; serverName?: string }, fail: (message: string) => never): GatewayTrust {
  if (opts.caFile !== undefined && opts.pinSha256 !== undefined) fail('--ca-file and --pin-sha256 exclude each other: a CA-issued certificate is verified with its CA, a pin is for a self-signed one');
  if (opts.pinSha256 !== undefined) {
    const sha256 = normalizeFingerprint(opts.pinSha256);
    if (!sha256) fail('--pin-sha256 must be the certificate\'s SHA-256 fingerprint: 64 hex digits, colons allowed (the daemon logs it at start as cert_sha256; or: openssl x509 -in CERT -noout -fingerprint -sha256)');
    return { kind: 'pin', sha256, serverName: opts.serverName };
  }
  let ca: string[] | undefined;
  if (opts.caFile !== undefined) {
    try {
      ca = [readFileSync(opts.caFile, 'utf8')];
    } catch (err) {
      fail(`--ca-file ${opts.caFile}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  } else ca = systemRoots();
  return { kind: 'ca', ca, serverName: opts.serverName };
}

/** SNI only for a name (RFC 6066 forbids an address), and the identity checked against the name the certificate must carry. */
function nameOptions(serverName: string | undefined): tls.ConnectionOptions {
  if (serverName === undefined) return {};
  return { ...(isIP(serverName) === 0 ? { servername: serverName } : {}), checkServerIdentity: (_host, cert) => tls.checkServerIdentity(serverName, cert) };
}

/** How long the pin probe waits for the server's handshake: a peer that takes the connection and never answers must not hang the CLI. */
export const PIN_PROBE_TIMEOUT_MS = 10_000;

export class PinProbeTimeout extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the server took the connection but presented no certificate within ${timeoutMs / 1000} s (is it the gateway's HTTPS port?); nothing was sent`);
  }
}

/** The certificate the server at url presents, when its fingerprint is the pin; the TLS options that trust exactly it. */
async function pinned(url: URL, trust: Extract<GatewayTrust, { kind: 'pin' }>, probeTimeoutMs: number): Promise<tls.ConnectionOptions> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const presented = await new Promise<tls.DetailedPeerCertificate>((resolve, reject) => {
    // Nothing is sent on this connection: it only reads the certificate.
    const socket = tls.connect({ host, port: Number(url.port || 443), rejectUnauthorized: false, ...(trust.serverName && isIP(trust.serverName) === 0 ? { servername: trust.serverName } : {}) }, () => {
      const cert = socket.getPeerCertificate(true);
      socket.destroy();
      resolve(cert);
    });
    socket.once('error', reject);
    socket.setTimeout(probeTimeoutMs, () => {
      socket.destroy();
      reject(new PinProbeTimeout(probeTimeoutMs));
    });
  });
  const seen = normalizeFingerprint(presented.fingerprint256 ?? '');
  if (seen !== trust.sha256) throw new PinMismatch(presented.fingerprint256 ?? 'none');
  const pem = new X509Certificate(presented.raw).toString();
  return {
    ca: [pem],
    ...(trust.serverName && isIP(trust.serverName) === 0 ? { servername: trust.serverName } : {}),
    // The pin is the identity: whatever names it carries, it must be this certificate.
    checkServerIdentity: (_host, cert) => (normalizeFingerprint(cert.fingerprint256) === trust.sha256 ? undefined : new Error(`certificate ${cert.fingerprint256} is not the pinned one`)),
  };
}

export class PinMismatch extends Error {
  constructor(readonly presented: string) {
    super(`the gateway presents the certificate ${presented}, not the one pinned with --pin-sha256; nothing was sent`);
  }
}

/** The https.request options that verify the gateway as the trust says. */
export async function tlsOptions(url: URL, trust: GatewayTrust, probeTimeoutMs = PIN_PROBE_TIMEOUT_MS): Promise<tls.ConnectionOptions> {
  if (trust.kind === 'pin') return pinned(url, trust, probeTimeoutMs);
  return { ...(trust.ca ? { ca: [...trust.ca] } : {}), ...nameOptions(trust.serverName) };
}

const UNTRUSTED = new Set(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID']);

/** What to do about a certificate the client refused, or null for another error. */
export function certificateAdvice(err: unknown): string | null {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (err instanceof PinMismatch) return err.message;
  if (code === undefined || !UNTRUSTED.has(code)) return null;
  const what = code === 'ERR_TLS_CERT_ALTNAME_INVALID' ? 'does not name the host connected to' : 'is not trusted';
  return `the gateway's certificate ${what} (${code}: ${(err as Error).message}); nothing was sent. A certificate issued by a CA: --ca-file with that CA (or install it in the system store) and, when connecting by a loopback address, --server-name with the name it was issued for. A self-signed certificate: --pin-sha256 with its fingerprint (logged at start as cert_sha256)`;
}
