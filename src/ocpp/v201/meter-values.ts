// Pure: OCPP 2.0.1 meterValue (MeterValueType, in TransactionEvent and MeterValues, already
// schema-checked) as the rows the store keeps for 1.6 values too (store/ocpp.ts), so a
// 2.0.1 session's readings, draws and price are made by the same code as a 1.6 one.
// 2.0.1 differs from 1.6 in form only: the value is a JSON number, the unit an object with
// a power-of-ten multiplier (unitOfMeasure { unit, multiplier }), and a signed value is a
// field of its own (signedMeterValue) beside the number. Every value is checked before any
// is stored: one that is not finite after its multiplier makes the whole call a CallError.
import { createRPCError } from '../rpc.js';
import type { SampledValueRow } from '../../store/ocpp.js';
import { ENERGY_REGISTER, registerAtInstant } from '../register-readings.js';
import { MAX_SIGNED_VALUE_CHARS, meterValueRows } from '../sampled-values.js';
import type { SignedValueRow } from '../../store/signed-values.js';

export interface MeterValue201 {
  readonly timestamp: string;
  readonly sampledValue: ReadonlyArray<{
    readonly value: number;
    readonly context?: string;
    readonly measurand?: string;
    readonly phase?: string;
    readonly location?: string;
    readonly unitOfMeasure?: { readonly unit?: string; readonly multiplier?: number };
    readonly signedMeterValue?: SignedMeterValue201;
  }>;
}

/** OCPP 2.0.1 SignedMeterValueType: the signed document (base64), how it was signed and encoded, and the station's view of the key. */
export interface SignedMeterValue201 {
  readonly signedMeterData: string;
  readonly signingMethod: string;
  readonly encodingMethod: string;
  readonly publicKey: string;
}

/** A base64 text (strictly: the alphabet, padded to whole quads). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The signed document as the store keeps it for 1.6 (the text the meter signed): 2.0.1 says
 * signedMeterData is base64, so an OCMF (or Alfen) text sent base64 is decoded; one sent as
 * plain text (some stations do) is kept as sent, and so is a binary format (SML: the 1.6
 * form sends it as base64 or hex too, signed-meter/formats.ts reads it so).
 */
export function signedDocumentText(signedMeterData: string): string {
  const sent = signedMeterData.trim();
  if (!sent.startsWith('OCMF|') && BASE64.test(sent)) {
    const decoded = Buffer.from(sent, 'base64').toString('utf8');
    if (decoded.startsWith('OCMF|') || decoded.startsWith('AP;')) return decoded;
  }
  return signedMeterData;
}

/**
 * The signed values (2.0.1: a sampled value's signedMeterValue, beside its number) as the
 * rows 1.6's SignedData values are kept in (store/signed-values.ts), so the cdr carries and
 * verifies them by the same code (signed-meter/). The station's publicKey is kept but never
 * used to verify: the key a value is verified with is the one configured from the meter's
 * label (docs/chargers.md "Signed meter values"); a station could send any key with a forged
 * document. With no key configured it is shown as a hint (session-verification.ts).
 */
export function signedValueRows201(meterValues: readonly MeterValue201[]): SignedValueRow[] {
  const rows: SignedValueRow[] = [];
  for (const mv of meterValues) {
    const sampledAtMs = Date.parse(mv.timestamp);
    if (!Number.isFinite(sampledAtMs)) continue;
    for (const sv of mv.sampledValue) {
      if (!sv.signedMeterValue) continue;
      // An empty publicKey (the schema requires the field; 2.0.1 says to send it only when the CSMS does not know it yet) is none.
      const stationPublicKey = sv.signedMeterValue.publicKey.trim() === '' ? null : sv.signedMeterValue.publicKey;
      rows.push({ sampledAtMs, context: sv.context ?? '', measurand: sv.measurand ?? ENERGY_REGISTER, value: signedDocumentText(sv.signedMeterValue.signedMeterData).slice(0, MAX_SIGNED_VALUE_CHARS), stationPublicKey });
    }
  }
  return rows;
}

/** The rows of the values (measurand default Energy.Active.Import.Register), each value times 10^multiplier in its unit. */
export function sampledValueRows201(meterValues: readonly MeterValue201[], path: string): SampledValueRow[] {
  return meterValueRows(meterValues, path, (sv, where) => {
    const multiplier = sv.unitOfMeasure?.multiplier ?? 0;
    // Exact for the usual multipliers (3: kWh sent as Wh with 10^3): 1.5 * 1000, not 1.5 * 1e3 rounded twice.
    const value = multiplier >= 0 ? sv.value * 10 ** multiplier : sv.value / 10 ** -multiplier;
    if (!Number.isFinite(value) || Math.abs(multiplier) > 30) {
      throw createRPCError('PropertyConstraintViolation', `${where}: value ${String(sv.value).slice(0, 40)} with multiplier ${multiplier} is not a finite number`);
    }
    return { value, unit: sv.unitOfMeasure?.unit };
  });
}

/**
 * The energy register (Wh) the values give at their last (or first) instant with one, or null: a
 * transaction's edges (2.0.1 has no meterStart/meterStop fields; the Started and Ended
 * events carry the register in their meterValue), read by the rule the session's readings
 * are (register-readings.ts registerAtInstant: the connector total, else the phases summed).
 */
export function registerWh(rows: readonly SampledValueRow[], which: 'first' | 'last' = 'last'): { readonly wh: number; readonly atMs: number } | null {
  const instants = [...new Set(rows.filter((r) => r.measurand === ENERGY_REGISTER).map((r) => r.sampledAtMs))].sort((a, b) => (which === 'last' ? b - a : a - b));
  for (const atMs of instants) {
    const kwh = registerAtInstant(rows.filter((r) => r.measurand === ENERGY_REGISTER && r.sampledAtMs === atMs));
    if (kwh !== null) return { wh: Math.round(kwh * 1000), atMs };
  }
  return null;
}
