// How `metergate charger` reads a certificate pin and its trust options (cli/gateway-tls.ts).
import { describe, expect, it } from 'vitest';
import { normalizeFingerprint, trustFrom } from '../../src/cli/gateway-tls.js';

const HEX = 'AB'.repeat(32);
const fail = (message: string): never => {
  throw new Error(message);
};

describe('gateway TLS trust', () => {
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
});
