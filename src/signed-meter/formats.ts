// Pure: which signed-data format a charger's SignedData value is in, from its text. OCMF
// is verified (ocmf.ts, session-verification.ts); the others are recognised by their
// public framing, kept raw and carried, and reported as not verified by the gateway.

export type SignedFormat = 'OCMF' | 'EDL40' | 'ALFEN' | 'unknown';

/** Formats the gateway recognises but does not verify, and why (shown in the cdr's reason). */
export const UNVERIFIED_FORMATS: Readonly<Record<Exclude<SignedFormat, 'OCMF'>, string>> = {
  EDL40: 'an SML (EDL40) signed meter value: recognised, not verified by the gateway (open it in the transparency software)',
  ALFEN: 'an Alfen signed meter value: recognised, not verified by the gateway (open it in the transparency software)',
  unknown: 'a signed value in a format the gateway does not know',
};

/**
 * OCMF starts `OCMF|`. SML (EDL40 meters, e.g. eBee/Bender chargers) starts with the SML
 * escape sequence 1B1B1B1B 01010101, sent as hex or base64. Alfen's starts `AP;`.
 */
export function signedFormatOf(value: string): SignedFormat {
  const text = value.trim();
  if (text.startsWith('OCMF|')) return 'OCMF';
  if (/^1B1B1B1B01010101/i.test(text) || text.startsWith('GxsbGwEBAQE')) return 'EDL40';
  if (text.startsWith('AP;')) return 'ALFEN';
  return 'unknown';
}
