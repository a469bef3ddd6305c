// The public key a station sends with its signed values (OCPP 2.0.1 SignedMeterValueType
// .publicKey), read only to be shown: when no key is configured for the connector
// (key_unknown), the installer compares it with the meter's label and, if it matches,
// configures it. Never used to verify: a station that forged a document could send the key
// that signed the forgery (docs/chargers.md "Signed meter values"). Pure.
// OCMF itself (rev. 1.2) has no field for the key, so only 2.0.1 values carry one.
import { readPublicKey } from './ocmf-signature.js';

export interface StationKey {
  /** As the station sent it (cut for display). */
  readonly sent: string;
  /** As hex of the DER SubjectPublicKeyInfo, the form `meter_public_keys` takes, when it reads as an EC key. */
  readonly hex: string | null;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const SHOWN_CHARS = 600;

/**
 * The key's DER hex, trying the forms stations send: base64 of the DER (what 2.0.1 says),
 * base64 of the key's hex text, the hex itself (the label's form), or a PEM block.
 */
function keyHex(sent: string, methodId: string | null): string | null {
  const text = sent.trim();
  const candidates: string[] = [];
  const pem = /-----BEGIN PUBLIC KEY-----([\s\S]+?)-----END PUBLIC KEY-----/.exec(text);
  if (pem) candidates.push(Buffer.from(pem[1].replace(/\s/g, ''), 'base64').toString('hex'));
  if (/^[0-9A-Fa-f\s:]+$/.test(text)) candidates.push(text);
  if (BASE64.test(text)) {
    const bytes = Buffer.from(text, 'base64');
    const asText = bytes.toString('latin1');
    if (/^[0-9A-Fa-f\s:]+$/.test(asText)) candidates.push(asText);
    candidates.push(bytes.toString('hex'));
  }
  for (const c of candidates) {
    const read = readPublicKey(c, methodId);
    if (read.ok) return read.spkiHex;
  }
  return null;
}

/** The first key the station sent with the transaction's values, or null when it sent none. */
export function stationKeyOf(values: ReadonlyArray<{ readonly stationPublicKey?: string | null }>, methodId: string | null): StationKey | null {
  const sent = values.find((v) => typeof v.stationPublicKey === 'string' && v.stationPublicKey.trim() !== '')?.stationPublicKey;
  if (!sent) return null;
  return { sent: sent.length > SHOWN_CHARS ? `${sent.slice(0, SHOWN_CHARS)}…` : sent, hex: keyHex(sent, methodId) };
}
