// OCMF documents signed in the test with keys it generates (node:crypto), for the
// verifier's unit test and the charger that sends them to `metergate run`. The signer
// here is the test's; what checks the gateway's verdict is independent of it
// (@road-labs/ocmf with the noble curves, and the openssl CLI).
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

/** OCMF signature method → the curve Node names it by. */
export const OCMF_METHODS: Readonly<Record<string, string>> = {
  'ECDSA-secp192k1-SHA256': 'secp192k1',
  'ECDSA-secp192r1-SHA256': 'prime192v1',
  'ECDSA-secp256k1-SHA256': 'secp256k1',
  'ECDSA-secp256r1-SHA256': 'prime256v1',
  'ECDSA-secp384r1-SHA256': 'secp384r1',
  'ECDSA-brainpool256r1-SHA256': 'brainpoolP256r1',
  'ECDSA-brainpool384r1-SHA256': 'brainpoolP384r1',
};

export interface MeterKey {
  readonly method: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** DER SubjectPublicKeyInfo, upper-case hex (as labels print it). */
  readonly publicKeyHex: string;
  readonly publicKeyPem: string;
}

export function meterKey(method = 'ECDSA-secp256r1-SHA256'): MeterKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: OCMF_METHODS[method] });
  return {
    method,
    privateKey,
    publicKey,
    publicKeyHex: (publicKey.export({ type: 'spki', format: 'der' }) as Buffer).toString('hex').toUpperCase(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }) as string,
  };
}

/** OCMF's time: `2026-11-29T10:03:15,000+0000 S`. */
export function ocmfTime(ms: number, flag = 'S'): string {
  return `${new Date(ms).toISOString().replace('.', ',').replace('Z', '+0000')} ${flag}`;
}

export interface Reading {
  readonly atMs: number;
  readonly tx: 'B' | 'C' | 'E';
  readonly wh: number;
  readonly flag?: string;
}

/** A payload as a charger with one calibrated meter writes it (readings in kWh). */
export function payload(meterSerial: string, pagination: number, readings: readonly Reading[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    FV: '1.0',
    GI: 'METERGATE TEST CHARGER',
    GS: 'TC-1',
    GV: '1.0.0',
    PG: `T${pagination}`,
    MV: 'Test Meters',
    MM: 'TM-1',
    MS: meterSerial,
    MF: '1.0',
    IS: true,
    IL: 'VERIFIED',
    IF: ['RFID_PLAIN'],
    IT: 'ISO14443',
    ID: '0A1B2C3D',
    ...extra,
    RD: readings.map((r) => ({ TM: ocmfTime(r.atMs, r.flag), TX: r.tx, RV: r.wh / 1000, RI: '1-b:1.8.0', RU: 'kWh', RT: 'AC', EF: '', ST: 'G' })),
  };
}

/** `OCMF|payload|{"SA":…,"SD":hex DER}` over the payload text exactly as written. */
export function signOcmf(body: Record<string, unknown>, key: MeterKey): string {
  const payloadText = JSON.stringify(body);
  const signature = sign('sha256', Buffer.from(payloadText, 'utf8'), { key: key.privateKey, dsaEncoding: 'der' });
  return `OCMF|${payloadText}|${JSON.stringify({ SA: key.method, SD: signature.toString('hex').toUpperCase() })}`;
}
