// The ECDSA check of an OCMF document's signature against the meter's public key, with
// Node's crypto (OpenSSL): SHA-256 over the payload section's exact bytes, the signature
// DER-encoded (SM application/x-der) in hex or base64 (SE). The methods are data
// (signature-methods.json). No I/O but the table, read once.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { OcmfDocument } from './ocmf.js';

interface MethodEntry {
  readonly node: string;
  readonly oid: string;
  readonly coordinateBytes: number;
}

let methods: ReadonlyMap<string, MethodEntry> | undefined;

/** The OCMF signature methods (SA) the gateway can check, by id. */
export function signatureMethods(): ReadonlyMap<string, MethodEntry> {
  if (!methods) {
    const doc = JSON.parse(readFileSync(new URL('./signature-methods.json', import.meta.url), 'utf8')) as Record<string, MethodEntry | string>;
    methods = new Map(Object.entries(doc).filter((e): e is [string, MethodEntry] => typeof e[1] === 'object'));
  }
  return methods;
}

/** A configured key as the hex it was written in (labels print it with spaces or colons). */
export function normaliseKeyHex(text: string): string {
  return text.replace(/[\s:]/g, '').toUpperCase();
}

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  if (n < 0x100) return Buffer.from([0x81, n]);
  return Buffer.from([0x82, n >> 8, n & 0xff]);
}

const der = (tag: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);

function oidBytes(oid: string): Buffer {
  const parts = oid.split('.').map(Number);
  const out = [40 * parts[0] + parts[1]];
  for (const p of parts.slice(2)) {
    const chunk = [p & 0x7f];
    for (let v = p >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return der(0x06, Buffer.from(out));
}

/**
 * A SubjectPublicKeyInfo (DER) for a bare EC point on the method's curve: labels and
 * displays of some meters show only the point (04||X||Y, or X||Y).
 */
function spkiOfPoint(point: Buffer, method: MethodEntry): Buffer {
  const full = point.length === 2 * method.coordinateBytes ? Buffer.concat([Buffer.from([0x04]), point]) : point;
  const algorithm = der(0x30, Buffer.concat([oidBytes('1.2.840.10045.2.1'), oidBytes(method.oid)]));
  return der(0x30, Buffer.concat([algorithm, der(0x03, Buffer.concat([Buffer.from([0x00]), full]))]));
}

export type KeyRead = { readonly ok: true; readonly key: KeyObject; readonly spkiHex: string } | { readonly ok: false; readonly problem: string };

/**
 * The meter's public key from its hex: a DER SubjectPublicKeyInfo (what OCMF chargers
 * show: `3059301306072A8648CE3D02...`), or a bare point on the curve of `methodId`.
 */
export function readPublicKey(hex: string, methodId: string | null): KeyRead {
  const clean = normaliseKeyHex(hex);
  if (!/^([0-9A-F]{2})+$/.test(clean)) return { ok: false, problem: 'the configured key is not hex' };
  const bytes = Buffer.from(clean, 'hex');
  const method = methodId === null ? undefined : signatureMethods().get(methodId);
  const candidates: Buffer[] = [];
  if (bytes[0] === 0x30) candidates.push(bytes);
  if (method && (bytes.length === 2 * method.coordinateBytes || (bytes.length === 2 * method.coordinateBytes + 1 && (bytes[0] === 0x04 || bytes[0] === 0x02 || bytes[0] === 0x03)) || bytes.length === method.coordinateBytes + 1)) {
    candidates.push(spkiOfPoint(bytes, method));
  }
  for (const spki of candidates) {
    try {
      const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
      if (key.asymmetricKeyType !== 'ec') continue;
      return { ok: true, key, spkiHex: (key.export({ format: 'der', type: 'spki' }) as Buffer).toString('hex').toUpperCase() };
    } catch {
      // not this form; the next one, or the problem below
    }
  }
  return { ok: false, problem: method ? `the configured key is neither a DER SubjectPublicKeyInfo nor a point on ${method.node}` : 'the configured key is not a DER SubjectPublicKeyInfo of an EC key' };
}

export type SignatureCheck = { readonly valid: true } | { readonly valid: false; readonly problem: string };

/** Whether the document's signature verifies with `key` (checked already: readPublicKey). */
export function checkOcmfSignature(doc: OcmfDocument, key: KeyObject): SignatureCheck {
  const { method: methodId, encoding, mimeType, data } = doc.signature;
  const method = signatureMethods().get(methodId);
  if (!method) return { valid: false, problem: `signature method ${methodId.slice(0, 60)} is not one OCMF defines (${[...signatureMethods().keys()].join(', ')})` };
  if (mimeType !== 'application/x-der') return { valid: false, problem: `signature mime type ${mimeType.slice(0, 60)} is not application/x-der` };
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (curve !== method.node) return { valid: false, problem: `the configured key is on ${curve ?? 'an unknown curve'}, the document is signed with ${methodId}` };
  let signature: Buffer;
  if (encoding === 'hex') {
    if (!/^([0-9A-Fa-f]{2})+$/.test(data)) return { valid: false, problem: 'signature data (SD) is not hex' };
    signature = Buffer.from(data, 'hex');
  } else if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data)) return { valid: false, problem: 'signature data (SD) is not base64' };
    signature = Buffer.from(data, 'base64');
  } else {
    return { valid: false, problem: `signature encoding ${encoding.slice(0, 40)} is neither hex nor base64` };
  }
  let ok: boolean;
  try {
    ok = verify('sha256', Buffer.from(doc.payloadText, 'utf8'), { key, dsaEncoding: 'der' }, signature);
  } catch (err) {
    return { valid: false, problem: `signature data is not a DER ECDSA signature (${(err as Error).message.slice(0, 80)})` };
  }
  return ok ? { valid: true } : { valid: false, problem: `the ${methodId} signature does not match the payload and the configured key` };
}

/** Why a configured meter key cannot be used (null: it reads as an EC key, or a bare point on one of the OCMF curves). */
export function meterKeyProblem(hex: string): string | null {
  const spki = readPublicKey(hex, null);
  if (spki.ok) return null;
  for (const methodId of signatureMethods().keys()) if (readPublicKey(hex, methodId).ok) return null;
  return `is neither a DER SubjectPublicKeyInfo of an EC key nor a point on a curve OCMF signs with (${spki.problem})`;
}

/** The key configured for a charger's connector: its own in meter_public_keys, else the charger's meter_public_key, else null. */
export function meterKeyOf(charger: { readonly meter_public_key?: string; readonly meter_public_keys?: Readonly<Record<string, string>> } | undefined, connectorId: number): string | null {
  return charger?.meter_public_keys?.[String(connectorId)] ?? charger?.meter_public_key ?? null;
}
