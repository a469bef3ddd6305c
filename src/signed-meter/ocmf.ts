// Pure: an OCMF document (Open Charge Metering Format, S.A.F.E. e.V.) as a charger sends
// it in a SignedData sampled value: `OCMF|{payload}|{signature}`. The signature covers the
// payload section's exact bytes, so the section is kept as sent next to its parsed form.
// Only the fields the gateway binds a session on are typed; the rest stay in the payload.

/** One reading of the payload's RD list. */
export interface OcmfReading {
  /** TM as sent: `2019-08-13T10:03:15,000+0000 S` (time, then the clock's sync state). */
  readonly time: string;
  /** TM as Unix ms, or null when it cannot be read. */
  readonly timeMs: number | null;
  /** TX: B begin, C charging, E end, X exception, T tariff change, ... (null: not given). */
  readonly transactionEvent: string | null;
  /** RV in Wh (RU kWh is scaled), or null when not a number of energy. */
  readonly valueWh: number | null;
  /** RI: the OBIS id of the register (`1-b:1.8.0`), or null. */
  readonly registerId: string | null;
  /** RU as sent. */
  readonly unit: string | null;
  /** ST: G good, or a reason the meter gives for a bad reading. */
  readonly status: string | null;
}

export interface OcmfDocument {
  /** The payload section exactly as sent: what the signature covers. */
  readonly payloadText: string;
  /** The payload as parsed (every field, typed or not). */
  readonly payload: Readonly<Record<string, unknown>>;
  /** MS: the meter's serial number. */
  readonly meterSerial: string | null;
  /** PG: `T<n>` (transaction) or `F<n>` (fiscal) pagination: the counter, or null. */
  readonly pagination: { readonly kind: string; readonly counter: number } | null;
  /** ID: the identification data (e.g. the RFID uid), or null. */
  readonly identification: string | null;
  readonly readings: readonly OcmfReading[];
  readonly signature: {
    /** SA; OCMF's default when absent is ECDSA-secp256r1-SHA256. */
    readonly method: string;
    /** SE: hex (default) or base64. */
    readonly encoding: string;
    /** SM: application/x-der (default). */
    readonly mimeType: string;
    /** SD as sent. */
    readonly data: string;
  };
}

export type OcmfParse = { readonly ok: true; readonly document: OcmfDocument } | { readonly ok: false; readonly problem: string };

export const OCMF_DEFAULT_SIGNATURE_METHOD = 'ECDSA-secp256r1-SHA256';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * OCMF's time: `YYYY-MM-DDThh:mm:ss,fff+zzzz` and a sync flag after a space (S, I, R, U).
 * Returns Unix ms, or null when the text is not one.
 */
export function ocmfTimeMs(tm: string): number | null {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:[,.](\d{1,9}))?([+-])(\d{2}):?(\d{2})(?:\s+[A-Z])?$/.exec(tm.trim());
  if (!m) return null;
  const fraction = m[2] ? `.${m[2].slice(0, 3).padEnd(3, '0')}` : '';
  const ms = Date.parse(`${m[1]}${fraction}${m[3]}${m[4]}:${m[5]}`);
  return Number.isFinite(ms) ? ms : null;
}

function reading(r: unknown): OcmfReading {
  const o = isRecord(r) ? r : {};
  const time = str(o.TM) ?? '';
  const unit = str(o.RU);
  const rv = typeof o.RV === 'number' ? o.RV : typeof o.RV === 'string' && o.RV.trim() !== '' ? Number(o.RV) : NaN;
  const scale = unit === 'kWh' ? 1000 : unit === 'Wh' ? 1 : null;
  return {
    time,
    timeMs: ocmfTimeMs(time),
    transactionEvent: str(o.TX),
    valueWh: scale !== null && Number.isFinite(rv) ? rv * scale : null,
    registerId: str(o.RI),
    unit,
    status: str(o.ST),
  };
}

/** Splits and parses an OCMF document; a problem names what is not OCMF about it. */
export function parseOcmf(text: string): OcmfParse {
  if (!text.startsWith('OCMF|')) return { ok: false, problem: 'does not start with "OCMF|"' };
  // The signature section is JSON without '|'; the payload may hold '|' inside strings.
  const last = text.lastIndexOf('|');
  if (last <= 4) return { ok: false, problem: 'has no signature section (OCMF|payload|signature)' };
  const payloadText = text.slice(5, last);
  const signatureText = text.slice(last + 1);
  let payload: unknown;
  let signature: unknown;
  try {
    payload = JSON.parse(payloadText);
  } catch (err) {
    return { ok: false, problem: `payload section is not JSON (${(err as Error).message.slice(0, 80)})` };
  }
  try {
    signature = JSON.parse(signatureText);
  } catch (err) {
    return { ok: false, problem: `signature section is not JSON (${(err as Error).message.slice(0, 80)})` };
  }
  if (!isRecord(payload)) return { ok: false, problem: 'payload section is not a JSON object' };
  if (!isRecord(signature)) return { ok: false, problem: 'signature section is not a JSON object' };
  const sd = str(signature.SD);
  if (sd === null || sd === '') return { ok: false, problem: 'signature section has no SD (signature data)' };
  const pg = str(payload.PG);
  const pgMatch = pg === null ? null : /^([A-Z])(\d{1,15})$/.exec(pg);
  return {
    ok: true,
    document: {
      payloadText,
      payload,
      meterSerial: str(payload.MS),
      pagination: pgMatch ? { kind: pgMatch[1], counter: Number(pgMatch[2]) } : null,
      identification: str(payload.ID),
      readings: Array.isArray(payload.RD) ? payload.RD.map(reading) : [],
      signature: {
        method: str(signature.SA) ?? OCMF_DEFAULT_SIGNATURE_METHOD,
        encoding: str(signature.SE) ?? 'hex',
        mimeType: str(signature.SM) ?? 'application/x-der',
        data: sd,
      },
    },
  };
}
