// Signed meter values (issue 32 items 2, 3, 5): the gateway's OCMF verifier against
// documents signed in the test with generated keys (every method OCMF allows) and a public
// example (test/data/ocmf/README.md), each verdict re-checked by two verifiers independent
// of it (@road-labs/ocmf on the noble curves, and Debian's openssl on the raw signature),
// and the tamper cases each with their named outcome.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Verifier } from '@road-labs/ocmf';
import { Crypto } from '@road-labs/ocmf-crypto-noble';
import { Ajv } from 'ajv';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, describe, expect, it } from 'vitest';
import { ocpiSignedData, verificationOf } from '../../src/signed-meter/carried.js';
import { transparencyXml } from '../../src/signed-meter/transparency-xml.js';
import { parseOcmf } from '../../src/signed-meter/ocmf.js';
import { checkOcmfSignature, meterKeyOf, meterKeyProblem, readPublicKey } from '../../src/signed-meter/ocmf-signature.js';
import { verifySession, type SignedValue } from '../../src/signed-meter/session-verification.js';
import { meterKey, OCMF_METHODS, payload, signOcmf, type MeterKey } from '../helpers/ocmf.js';
import { peer } from '../helpers/peers.js';

const hasOpenssl = peer('openssl', spawnSync('openssl', ['version']).status === 0, 'apt-get install openssl');
const dir = mkdtempSync(join(tmpdir(), 'mg-ocmf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const noble = new Crypto();
const roadLabs = new Verifier(noble);

/** @road-labs/ocmf's verdict on the document with the key (hex SPKI). */
async function roadLabsVerifies(document: string, keyHex: string): Promise<boolean> {
  const key = await noble.decodeEcPublicKey(Buffer.from(keyHex, 'hex'), 'spki-der');
  try {
    return (await roadLabs.parseAndVerify(document, key)).verified;
  } catch {
    return false;
  }
}

let n = 0;
/** openssl dgst -sha256 -verify over the payload section and the DER signature, as files. */
function opensslVerifies(document: string, keyHex: string): boolean {
  const last = document.lastIndexOf('|');
  const payloadText = document.slice(5, last);
  const sd = (JSON.parse(document.slice(last + 1)) as { SD: string }).SD;
  const base = join(dir, String(n++));
  writeFileSync(`${base}.payload`, payloadText);
  writeFileSync(`${base}.sig`, Buffer.from(sd, 'hex'));
  writeFileSync(`${base}.der`, Buffer.from(keyHex, 'hex'));
  const pem = spawnSync('openssl', ['pkey', '-pubin', '-inform', 'DER', '-in', `${base}.der`, '-out', `${base}.pem`]);
  if (pem.status !== 0) throw new Error(`openssl pkey: ${String(pem.stderr)}`);
  const r = spawnSync('openssl', ['dgst', '-sha256', '-verify', `${base}.pem`, '-signature', `${base}.sig`, `${base}.payload`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('Verified OK');
}

const T0 = Date.parse('2026-11-29T08:00:00Z');
const T1 = Date.parse('2026-11-29T10:30:00Z');
const TX = { startedAtMs: T0, stoppedAtMs: T1, meterStartWh: 1_234_500, meterStopWh: 1_256_700 };

const begin = (key: MeterKey, over: Partial<{ pg: number; atMs: number; wh: number; tx: 'B' | 'E'; serial: string }> = {}) =>
  signOcmf(payload(over.serial ?? 'MTR-0001', over.pg ?? 5, [{ atMs: over.atMs ?? T0, tx: over.tx ?? 'B', wh: over.wh ?? TX.meterStartWh }]), key);
const end = (key: MeterKey, over: Partial<{ pg: number; atMs: number; wh: number; tx: 'B' | 'E'; serial: string }> = {}) =>
  signOcmf(payload(over.serial ?? 'MTR-0001', over.pg ?? 6, [{ atMs: over.atMs ?? T1, tx: over.tx ?? 'E', wh: over.wh ?? TX.meterStopWh }]), key);
const values = (b: string | null, e: string | null): SignedValue[] => [
  ...(b === null ? [] : [{ context: 'Transaction.Begin', sampledAtMs: T0, value: b }]),
  ...(e === null ? [] : [{ context: 'Transaction.End', sampledAtMs: T1, value: e }]),
];

describe('every OCMF signature method, signed with a key the test generates', () => {
  for (const method of Object.keys(OCMF_METHODS)) {
    it(`${method}: the gateway, @road-labs/ocmf and openssl all say verified`, async () => {
      const key = meterKey(method);
      const b = begin(key);
      const e = end(key);
      const v = verifySession(values(b, e), TX, key.publicKeyHex);
      expect(v.outcome, v.reason).toBe('verified');
      expect(v.signedStartWh).toBeCloseTo(TX.meterStartWh, 6);
      for (const doc of [b, e]) {
        expect(await roadLabsVerifies(doc, key.publicKeyHex)).toBe(true);
        if (hasOpenssl) expect(opensslVerifies(doc, key.publicKeyHex)).toBe(true);
      }
    });
  }

  it('a key given as the bare point (as some labels print it) verifies the same', () => {
    const key = meterKey('ECDSA-brainpool256r1-SHA256');
    const spki = Buffer.from(key.publicKeyHex, 'hex');
    const point = spki.subarray(spki.length - 65).toString('hex');
    expect(meterKeyProblem(point)).toBeNull();
    expect(verifySession(values(begin(key), end(key)), TX, point.match(/.{1,4}/g)!.join(' ')).outcome).toBe('verified');
    expect(meterKeyProblem('00112233445566778899AABBCCDDEEFF0011223344')).toMatch(/neither a DER SubjectPublicKeyInfo/);
  });

  it("a connector's own key wins over the charger's", () => {
    const charger = { meter_public_key: 'AA', meter_public_keys: { '2': 'BB' } };
    expect([meterKeyOf(charger, 1), meterKeyOf(charger, 2), meterKeyOf({}, 1), meterKeyOf(undefined, 1)]).toEqual(['AA', 'BB', null, null]);
  });
});

describe('the public KEBA KCP30 example of the transparency software (test/data/ocmf)', () => {
  const xml = new XMLParser({ ignoreAttributes: false, parseTagValue: false }).parse(readFileSync(new URL('../data/ocmf/keba-kcp30.xml', import.meta.url), 'utf8')) as {
    values: { value: { signedData: { '#text': string }; publicKey: { '#text': string } } };
  };
  const doc = xml.values.value.signedData['#text'];
  const keyHex = xml.values.value.publicKey['#text'];
  // B 0.2596 kWh and E 0.2597 kWh in one document, by the meter's unsynchronised clock (I, R).
  const tx = { startedAtMs: Date.parse('2019-08-13T10:03:15Z'), stoppedAtMs: Date.parse('2019-08-13T10:03:36Z'), meterStartWh: 260, meterStopWh: 260 };

  it('verifies with its published key, as @road-labs/ocmf and openssl say', async () => {
    const parsed = parseOcmf(doc);
    expect(parsed.ok).toBe(true);
    const key = readPublicKey(keyHex, null);
    if (!parsed.ok || !key.ok) throw new Error('unreadable');
    expect(checkOcmfSignature(parsed.document, key.key)).toEqual({ valid: true });
    expect(await roadLabsVerifies(doc, keyHex)).toBe(true);
    if (hasOpenssl) expect(opensslVerifies(doc, keyHex)).toBe(true);
    const v = verifySession([{ context: 'Transaction.End', sampledAtMs: tx.stoppedAtMs, value: doc }], tx, keyHex);
    expect(v.outcome, v.reason).toBe('verified');
    expect([v.signedStartWh, v.signedStopWh]).toEqual([259.6, 259.7]);
  });

  it('priced on 300 Wh at the end, it is a register mismatch', () => {
    const v = verifySession([{ context: 'Transaction.End', sampledAtMs: tx.stoppedAtMs, value: doc }], { ...tx, meterStopWh: 300 }, keyHex);
    expect(v.outcome).toBe('register_mismatch');
    expect(v.reason).toContain('meterStop 300 Wh against the signed end 259.7 Wh');
  });
});

describe('more public examples of the transparency software (test/data/ocmf): begin and end as two documents', () => {
  type XmlValue = { signedData: string | { '#text': string }; publicKey: string | { '#text': string } };
  const text = (v: string | { '#text': string }) => (typeof v === 'string' ? v : v['#text']).trim();
  const read = (file: string) => {
    const xml = new XMLParser({ ignoreAttributes: false, parseTagValue: false }).parse(readFileSync(new URL(`../data/ocmf/${file}`, import.meta.url), 'utf8')) as { values: { value: XmlValue[] } };
    return xml.values.value.map((v) => ({ doc: text(v.signedData), key: text(v.publicKey).replace(/\s/g, '') }));
  };
  const cases: Array<[string, string, boolean]> = [
    // file, what, whether @road-labs/ocmf knows its method's spelling
    ['ebee-dzg-dvh4013.xml', 'DZG DVH4013 meter behind an eBee controller, P-256 (SA absent: the default), key with spaces, clock I/R', true],
    ['nzr-secp384r1.xml', 'NZR EcoCount SL, secp384r1, 0 Wh, clock S', true],
    ['nzr-brainpoolP256r1.xml', "NZR EcoCount SL signing as ECDSA-brainpoolP256r1-SHA256 (the 'P' spelling)", false],
  ];
  for (const [file, what, roadLabsKnows] of cases) {
    it(`${file}: ${what}: verified, and every document verifies for openssl${roadLabsKnows ? ' and @road-labs/ocmf' : ''}`, async () => {
      const [b, e] = read(file);
      const begin = parseOcmf(b.doc);
      const end = parseOcmf(e.doc);
      if (!begin.ok || !end.ok) throw new Error('not OCMF');
      const startWh = begin.document.readings[0].valueWh!;
      const stopWh = end.document.readings[0].valueWh!;
      const tx = { startedAtMs: begin.document.readings[0].timeMs!, stoppedAtMs: end.document.readings[0].timeMs!, meterStartWh: startWh, meterStopWh: stopWh };
      const v = verifySession([{ context: 'Transaction.Begin', sampledAtMs: tx.startedAtMs, value: b.doc }, { context: 'Transaction.End', sampledAtMs: tx.stoppedAtMs, value: e.doc }], tx, b.key);
      expect(v.outcome, v.reason).toBe('verified');
      for (const { doc, key } of [b, e]) {
        if (hasOpenssl) expect(opensslVerifies(doc, key)).toBe(true);
        if (roadLabsKnows) expect(await roadLabsVerifies(doc, key)).toBe(true);
      }
      // The same documents against a meterStop 1 Wh off: register_mismatch.
      expect(verifySession([{ context: '', sampledAtMs: 0, value: b.doc }, { context: '', sampledAtMs: 0, value: e.doc }], { ...tx, meterStopWh: stopWh + 1 }, b.key).outcome).toBe('register_mismatch');
    });
  }
});

describe('tamper cases, each with its named outcome', () => {
  const key = meterKey('ECDSA-secp256r1-SHA256');
  const b = begin(key);
  const e = end(key);

  it('untouched: verified', () => {
    expect(verifySession(values(b, e), TX, key.publicKeyHex).outcome).toBe('verified');
  });

  it('one byte changed in the signed end: signature_invalid, and the independent verifiers agree', async () => {
    const tampered = e.replace('"RV":1256.7', '"RV":1256.8');
    expect(tampered).not.toBe(e);
    const v = verifySession(values(b, tampered), { ...TX, meterStopWh: 1_256_800 }, key.publicKeyHex);
    expect(v.outcome).toBe('signature_invalid');
    expect(v.reason).toMatch(/Transaction\.End document .*does not match/);
    expect(await roadLabsVerifies(tampered, key.publicKeyHex)).toBe(false);
    if (hasOpenssl) expect(opensslVerifies(tampered, key.publicKeyHex)).toBe(false);
  });

  it('begin and end swapped (the begin signed as the later reading): register_mismatch, out of order', () => {
    const swappedBegin = begin(key, { atMs: T1, wh: TX.meterStopWh, pg: 6 });
    const swappedEnd = end(key, { atMs: T0, wh: TX.meterStartWh, pg: 5 });
    const v = verifySession(values(swappedBegin, swappedEnd), TX, key.publicKeyHex);
    expect(v.outcome).toBe('register_mismatch');
    expect(v.reason).toContain('out of order');
  });

  it("another transaction's end (signed, later, same meter): incomplete", () => {
    const later = end(key, { atMs: T1 + 3 * 3_600_000, pg: 9, wh: TX.meterStopWh });
    const v = verifySession(values(b, later), TX, key.publicKeyHex);
    expect(v.outcome).toBe('incomplete');
    expect(v.reason).toContain('belongs to another transaction');
  });

  it('the end signed by another meter: incomplete', () => {
    const v = verifySession(values(b, end(key, { serial: 'MTR-0002' })), TX, key.publicKeyHex);
    expect(v.outcome).toBe('incomplete');
  });

  it('the wrong key configured: signature_invalid; without any key: key_unknown', () => {
    const other = meterKey('ECDSA-secp256r1-SHA256');
    expect(verifySession(values(b, e), TX, other.publicKeyHex).outcome).toBe('signature_invalid');
    const onOtherCurve = meterKey('ECDSA-brainpool256r1-SHA256');
    expect(verifySession(values(b, e), TX, onOtherCurve.publicKeyHex).reason).toContain('the configured key is on brainpoolP256r1');
    expect(verifySession(values(b, e), TX, null).outcome).toBe('key_unknown');
  });

  it('the key the station sent (2.0.1 publicKey) is a hint with the fix when none is configured, never used to verify', () => {
    const withStationKey = (sent: string): SignedValue[] => values(b, e).map((v) => ({ ...v, stationPublicKey: sent }));
    const place = { chargePointId: 'CS-7', connectorId: 2 };
    // Each form stations send it in reads as the same DER key: base64 of the DER (2.0.1's), the label's hex, base64 of that hex, PEM.
    for (const sent of [Buffer.from(key.publicKeyHex, 'hex').toString('base64'), key.publicKeyHex, Buffer.from(key.publicKeyHex).toString('base64'), key.publicKeyPem]) {
      const v = verifySession(withStationKey(sent), TX, null, place);
      expect(v.outcome).toBe('key_unknown');
      expect(v.stationKey?.hex).toBe(key.publicKeyHex);
      expect(v.reason).toContain(`the station sent key ${key.publicKeyHex} with its values (not trusted, not used): if it matches the meter's label, configure it as chargers[] id CS-7: meter_public_keys: { "2": "${key.publicKeyHex}" }`);
      expect(verificationOf(v).station_public_key).toBe(key.publicKeyHex);
      // The cdr's public_key stays the configured one: none.
      expect(ocpiSignedData(v)?.public_key).toBeUndefined();
    }
    // Not a key: named as sent, no configuration offered.
    const junk = verifySession(withStationKey('bm90IGEga2V5'), TX, null, place);
    expect(junk.stationKey).toEqual({ sent: 'bm90IGEga2V5', hex: null });
    expect(junk.reason).toContain('the station sent a key with its values that is not a readable EC key (bm90IGEga2V5), not used');
    // A station that forged its end and sends the forger's key: the configured key decides.
    const forger = meterKey('ECDSA-secp256r1-SHA256');
    const forged = values(b, end(forger)).map((v) => ({ ...v, stationPublicKey: forger.publicKeyHex }));
    expect(verifySession(forged, TX, key.publicKeyHex, place).outcome).toBe('signature_invalid');
    // No key sent (1.6 values, or 2.0.1's empty publicKey): the reason as before, no station_public_key.
    expect(verifySession(values(b, e), TX, null, place).reason).not.toContain('station sent');
    expect(verificationOf(verifySession(values(b, e), TX, null, place))).not.toHaveProperty('station_public_key');
  });

  it('a register value priced that differs from the signed one: register_mismatch', () => {
    const v = verifySession(values(b, e), { ...TX, meterStopWh: TX.meterStopWh + 5 }, key.publicKeyHex);
    expect(v.outcome).toBe('register_mismatch');
    expect(v.reason).toContain('meterStop 1256705 Wh against the signed end 1256700 Wh');
    // Within a Wh (kWh with a fraction against OCPP's whole Wh) is equal.
    expect(verifySession(values(b, e), { ...TX, meterStopWh: TX.meterStopWh + 0.6 }, key.publicKeyHex).outcome).toBe('verified');
  });

  it('a missing end: incomplete; a missing begin: incomplete', () => {
    expect(verifySession(values(b, null), TX, key.publicKeyHex)).toMatchObject({ outcome: 'incomplete', reason: expect.stringContaining('TX=E') });
    expect(verifySession(values(null, e), TX, key.publicKeyHex)).toMatchObject({ outcome: 'incomplete', reason: expect.stringContaining('TX=B') });
  });

  it('an unknown format: signature_invalid, the format reported unknown; EDL40 and Alfen recognised, not verified', () => {
    const unknown = verifySession([{ context: 'Transaction.End', sampledAtMs: T1, value: 'XYZ;not a format anyone uses' }], TX, key.publicKeyHex);
    expect(unknown).toMatchObject({ outcome: 'signature_invalid', format: 'unknown' });
    expect(unknown.reason).toContain('format the gateway does not know');
    expect(verifySession([{ context: 'Transaction.End', sampledAtMs: T1, value: '1B1B1B1B01010101760500' }], TX, key.publicKeyHex).format).toBe('EDL40');
    expect(verifySession([{ context: 'Transaction.End', sampledAtMs: T1, value: 'AP;0;3;ALCV3ABBBISHMA2RYEGJ6BDZ' }], TX, key.publicKeyHex).format).toBe('ALFEN');
  });

  it('not OCMF after OCMF| (cut off): signature_invalid; nothing signed: unsigned', () => {
    expect(verifySession(values(b, e.slice(0, 60)), TX, key.publicKeyHex).outcome).toBe('signature_invalid');
    expect(verifySession([], TX, key.publicKeyHex).outcome).toBe('unsigned');
  });
});

// OCPI 2.2.1 mod_cdrs SignedData / SignedValue, written from the specification's tables.
const OCPI_SIGNED_DATA = {
  type: 'object',
  additionalProperties: false,
  required: ['encoding_method', 'signed_values'],
  properties: {
    encoding_method: { type: 'string', maxLength: 36 },
    encoding_method_version: { type: 'integer' },
    public_key: { type: 'string', maxLength: 512 },
    url: { type: 'string', maxLength: 512 },
    signed_values: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['nature', 'plain_data', 'signed_data'],
        properties: { nature: { type: 'string', maxLength: 32 }, plain_data: { type: 'string', maxLength: 512 }, signed_data: { type: 'string', maxLength: 5000 } },
      },
    },
  },
};

describe('what the cdr carries', () => {
  const key = meterKey('ECDSA-secp256r1-SHA256');
  const b = begin(key);
  const e = end(key);
  const v = verifySession(values(b, e), TX, key.publicKeyHex);

  it("signed_data has OCPI 2.2.1's SignedData shape; its values decode to the documents", async () => {
    const data = ocpiSignedData(v)!;
    const validate = new Ajv({ strict: true }).compile(OCPI_SIGNED_DATA);
    expect(validate(data), JSON.stringify(validate.errors)).toBe(true);
    expect(data.encoding_method).toBe('OCMF');
    expect(data.signed_values.map((s) => s.nature)).toEqual(['Start', 'End']);
    const decoded = data.signed_values.map((s) => Buffer.from(s.signed_data, 'base64').toString('utf8'));
    expect(decoded).toEqual([b, e]);
    expect(data.signed_values[0].plain_data).toBe(b.slice(5, b.lastIndexOf('|')));
    expect(Buffer.from(data.public_key!, 'base64').toString('hex').toUpperCase()).toBe(key.publicKeyHex);
    for (const doc of decoded) expect(await roadLabsVerifies(doc, Buffer.from(data.public_key!, 'base64').toString('hex'))).toBe(true);
    expect(verificationOf(v)).toEqual({ outcome: 'verified', reason: v.reason, format: 'OCMF', meter_serial: 'MTR-0001', signed_start_wh: TX.meterStartWh, signed_stop_wh: TX.meterStopWh });
  });

  it('the transparency XML parses back to the same documents and key, which verify', async () => {
    const xml = transparencyXml(42, v);
    const parsed = new XMLParser({ ignoreAttributes: false, parseTagValue: false, attributeNamePrefix: '' }).parse(xml) as {
      values: { value: Array<{ transactionId: string; context: string; signedData: { '#text': string; format: string; encoding: string }; publicKey: { '#text': string; encoding: string } }> };
    };
    const list = parsed.values.value;
    expect(list.map((x) => [x.transactionId, x.context, x.signedData.format, x.signedData.encoding, x.publicKey.encoding])).toEqual([
      ['42', 'Transaction.Begin', 'OCMF', 'plain', 'hex'],
      ['42', 'Transaction.End', 'OCMF', 'plain', 'hex'],
    ]);
    expect(list.map((x) => x.signedData['#text'])).toEqual([b, e]);
    for (const x of list) expect(await roadLabsVerifies(x.signedData['#text'], x.publicKey['#text'])).toBe(true);
  });
});
