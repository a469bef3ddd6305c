// Pure: a session's signed values as the cdr carries them (issue 32 item 3):
// - `signed_data` in the shape of OCPI 2.2.1's CDR SignedData (mod_cdrs, class SignedData
//   and SignedValue): encoding_method, public_key (base64 of the DER key, as OCPI says),
//   signed_values [{nature Start/End/Intermediate, plain_data (<= 512), signed_data (the
//   value as the charger sent it, base64, as OCPI says)}];
// - `signed_data_verification`: the gateway's outcome and its reason.
// The transparency software's XML is transparency-xml.ts.
import type { SignedFormat } from './formats.js';
import type { CarriedValue, SessionVerification, SignedOutcome } from './session-verification.js';

export interface OcpiSignedValue {
  readonly nature: string;
  readonly plain_data: string;
  readonly signed_data: string;
}

export interface OcpiSignedData {
  readonly encoding_method: string;
  readonly public_key?: string;
  readonly signed_values: readonly OcpiSignedValue[];
}

export interface SignedDataVerification {
  readonly outcome: SignedOutcome;
  readonly reason: string;
  /** The format of the values (OCMF, EDL40, ALFEN, unknown), null when none were sent. */
  readonly format: SignedFormat | null;
  readonly meter_serial: string | null;
  readonly signed_start_wh: number | null;
  readonly signed_stop_wh: number | null;
  /**
   * The key the station sent with its values (2.0.1 SignedMeterValueType.publicKey) as DER hex
   * when it reads as an EC key, else as sent; never used to verify (public_key above is the
   * configured one). Present only when the station sent one.
   */
  readonly station_public_key?: string;
}

const OCPI_PLAIN_MAX = 512;
const ENCODING_METHOD: Readonly<Record<SignedFormat, string>> = { OCMF: 'OCMF', EDL40: 'EDL40', ALFEN: 'Alfen', unknown: 'Unknown' };

/** OCMF: the payload section when it fits OCPI's 512 characters, else its readings in short. */
function plainData(v: CarriedValue): string {
  if (v.payloadText !== null && v.payloadText.length <= OCPI_PLAIN_MAX) return v.payloadText;
  if (v.readings.length > 0) {
    const text = v.readings.map((r) => `TX=${r.transactionEvent ?? '-'} TM=${r.time} RV=${r.valueWh === null ? '-' : `${r.valueWh} Wh`} RI=${r.registerId ?? '-'}`).join('; ');
    return text.length <= OCPI_PLAIN_MAX ? text : `${text.slice(0, OCPI_PLAIN_MAX - 1)}…`;
  }
  return `${ENCODING_METHOD[v.format]} signed value (${v.context || 'no context'}), not decoded by the gateway`;
}

/** OCPI's SignedData of the session, or null when it has no signed value. */
export function ocpiSignedData(v: SessionVerification): OcpiSignedData | null {
  if (v.values.length === 0 || v.format === null) return null;
  return {
    encoding_method: ENCODING_METHOD[v.format],
    ...(v.publicKeyHex !== null ? { public_key: Buffer.from(v.publicKeyHex, 'hex').toString('base64') } : {}),
    signed_values: v.values.map((x) => ({ nature: x.nature, plain_data: plainData(x), signed_data: Buffer.from(x.value, 'utf8').toString('base64') })),
  };
}

export function verificationOf(v: SessionVerification): SignedDataVerification {
  return {
    outcome: v.outcome,
    reason: v.reason,
    format: v.format,
    meter_serial: v.meterSerial,
    signed_start_wh: v.signedStartWh,
    signed_stop_wh: v.signedStopWh,
    ...(v.stationKey ? { station_public_key: v.stationKey.hex ?? v.stationKey.sent } : {}),
  };
}
