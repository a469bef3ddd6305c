// How `metergate charger` reads a certificate pin and its trust options (cli/gateway-tls.ts).
import { describe, expect, it } from 'vitest';
import { createServer, type Socket } from 'node:net';
import { isLoopbackHost, normalizeFingerprint, PinProbeTimeout, tlsOptions, trustFrom } from '../../src/cli/gateway-tls.js';

const HEX = 'AB'.repeat(32);
const fail = (message: string): never => {
  throw new Error(message);
};

describe('gateway TLS trust', () => {
  it('takes only loopback addresses and localhost as this machine (plain http allowed), never a name that starts with 127.', () => {
    for (const host of ['localhost', '127.0.0.1', '127.8.9.10', '[::1]', '::1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['127.attacker.example', '127.0.0.1.nip.io', '127', '10.0.0.1', 'gateway.example', '[::2]', '[::ffff:10.0.0.1]']) expect(isLoopbackHost(host), host).toBe(false);
    expect(isLoopbackHost(new URL('http://127.attacker.example:8080').hostname)).toBe(false);
    expect(isLoopbackHost(new URL('http://[::1]:8080').hostname)).toBe(true);
  });

  it('reads a SHA-256 fingerprint with or without colons, in either case', () => {
    expect(normalizeFingerprint(HEX.match(/../g)!.join(':'))).toBe(HEX);
    expect(normalizeFingerprint(HEX.toLowerCase())).toBe(HEX);
    expect(normalizeFingerprint('AB:CD')).toBeNull();
    expect(normalizeFingerprint('ZZ'.repeat(32))).toBeNull();
  });

  it('pins only when asked, and never together with a CA file', () => {
    expect(trustFrom({ pinSha256: HEX.toLowerCase() }, fail)).toEqual({ kind: 'pin', sha256: HEX, serverName: undefined });
    expect(() => trustFrom({ pinSha256: HEX, caFile: '/etc/ssl/ca.pem' }, fail)).toThrow(/exclude each other/);
    expect(() => trustFrom({ pinSha256: 'abc' }, fail)).toThrow(/64 hex digits/);
    expect(() => trustFrom({ caFile: '/nonexistent/ca.pem' }, fail)).toThrow(/cannot read \(ENOENT\)/);
    expect(trustFrom({ serverName: 'gw.example.com' }, fail)).toMatchObject({ kind: 'ca', serverName: 'gw.example.com' });
  });

  it('gives up the pin probe on a peer that takes the connection and never answers the handshake', { timeout: 30_000 }, async () => {
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const probe = tlsOptions(new URL(`https://127.0.0.1:${port}`), { kind: 'pin', sha256: HEX, serverName: undefined }, 500);
      await expect(probe).rejects.toBeInstanceOf(PinProbeTimeout);
      await expect(probe).rejects.toThrow(/nothing was sent/);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});
