// Whether a charger session's signed meter values prove what its cdr is priced on (issue
// 32 item 2), as one outcome with its reason (docs/chargers.md "Signed meter values"):
//   unsigned           the charger sent no signed value for the transaction
//   signature_invalid  a signed value is not well-formed OCMF, its signature does not verify,
//                      or it is in a format the gateway cannot verify
//   key_unknown        no (usable) public key is configured for the charger's connector (the
//                      key the station sent with its values, if any, is named as a hint,
//                      never used: station-key.ts)
//   incomplete         no signed begin or end of this transaction (missing, or the one there
//                      belongs to another transaction: another meter, time or identification)
//   register_mismatch  the signed readings are out of order, or differ from the register
//                      values the cdr is priced on (meterStart/meterStop) by a Wh or more
//   verified           every check passed
// The checks run in that order; the first that fails names the outcome. Pure but for the
// ECDSA arithmetic (node:crypto).
import type { SignedFormat } from './formats.js';
import { signedFormatOf, UNVERIFIED_FORMATS } from './formats.js';
import { parseOcmf, type OcmfDocument, type OcmfReading } from './ocmf.js';
import { checkOcmfSignature, readPublicKey } from './ocmf-signature.js';
import { stationKeyOf, type StationKey } from './station-key.js';

export const SIGNED_OUTCOMES = ['verified', 'signature_invalid', 'key_unknown', 'register_mismatch', 'incomplete', 'unsigned'] as const;
export type SignedOutcome = (typeof SIGNED_OUTCOMES)[number];

/**
 * How far a signed begin or end reading taken by a synchronised meter clock (TM flag S)
 * may lie from the transaction's start or stop and still be its own. Readings by an
 * unsynchronised clock (I, R, U) are bound by order, pagination and identification only.
 */
export const EDGE_TOLERANCE_MS = 300_000;

/** One stored SignedData value of the transaction (ocpp_signed_values). */
export interface SignedValue {
  /** OCPP ReadingContext as sent ('' when none). */
  readonly context: string;
  readonly sampledAtMs: number;
  readonly value: string;
  /** The key the station sent with it (2.0.1 SignedMeterValueType.publicKey), shown as a hint, never used. */
  readonly stationPublicKey?: string | null;
}

/** Where the key of the session's meter is configured: named in the hint of a key_unknown outcome. */
export interface KeyPlace {
  readonly chargePointId: string;
  /** 1.6 connector id, 2.0.1 EVSE id: the key of meter_public_keys. */
  readonly connectorId: number;
}

export interface TransactionEdges {
  readonly startedAtMs: number;
  readonly stoppedAtMs: number;
  readonly meterStartWh: number;
  readonly meterStopWh: number;
}

export type SignedNature = 'Start' | 'End' | 'Intermediate';

/** A signed value as the cdr carries it. */
export interface CarriedValue {
  readonly context: string;
  readonly value: string;
  readonly format: SignedFormat;
  readonly nature: SignedNature;
  /** The OCMF payload section, or null for other formats. */
  readonly payloadText: string | null;
  readonly readings: readonly OcmfReading[];
}

export interface SessionVerification {
  readonly outcome: SignedOutcome;
  readonly reason: string;
  /** The format of the values (OCMF when any is), or null when unsigned. */
  readonly format: SignedFormat | null;
  readonly meterSerial: string | null;
  /** The signed register values at the edges (Wh), when found. */
  readonly signedStartWh: number | null;
  readonly signedStopWh: number | null;
  /** The configured key as a DER SubjectPublicKeyInfo in hex, when it could be read. */
  readonly publicKeyHex: string | null;
  /** The key the station sent with its values (never used to verify), or null when it sent none. */
  readonly stationKey: StationKey | null;
  readonly values: readonly CarriedValue[];
}

/** OBIS of the import active energy register: `1-b:1.8.0`, `1-0:1.8.0*255`, `01-00:01.08.00.FF`. */
const ENERGY_IMPORT = /(?:^|:)0?1\.0?8\.0{1,2}(?:$|[*.])/;

/** The import register reading of the document for a transaction event (B or E). */
function readingOf(doc: OcmfDocument, event: 'B' | 'E'): OcmfReading | null {
  const withEvent = doc.readings.filter((r) => r.transactionEvent === event && r.valueWh !== null);
  return withEvent.find((r) => r.registerId !== null && ENERGY_IMPORT.test(r.registerId)) ?? withEvent[0] ?? null;
}

const syncedClock = (r: OcmfReading): boolean => /\sS$/.test(r.time.trim());

function natureOf(context: string, doc: OcmfDocument | null): SignedNature {
  if (doc) {
    if (doc.readings.some((r) => r.transactionEvent === 'E')) return 'End';
    if (doc.readings.some((r) => r.transactionEvent === 'B')) return 'Start';
    return 'Intermediate';
  }
  return context === 'Transaction.Begin' ? 'Start' : context === 'Transaction.End' ? 'End' : 'Intermediate';
}

/**
 * The hint a key_unknown reason ends with when the station sent a key: what it sent, and the
 * fix (the configuration that would use it), for the installer to compare with the label.
 */
function stationKeyHint(k: StationKey | null, place: KeyPlace | undefined): string {
  if (!k) return '';
  const where = place ? `chargers[] id ${place.chargePointId}: meter_public_keys: { "${place.connectorId}": "<key>" } (or meter_public_key for all its connectors)` : 'chargers[].meter_public_keys (or meter_public_key)';
  if (k.hex === null) return `; the station sent a key with its values that is not a readable EC key (${k.sent.slice(0, 120)}), not used: read the meter's key from its label`;
  return `; the station sent key ${k.hex} with its values (not trusted, not used): if it matches the meter's label, configure it as ${where.replace('<key>', k.hex)}`;
}

const wh = (v: number): string => `${Math.round(v * 1000) / 1000} Wh`;
const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The outcome for one transaction's signed values (in the order received; repeats of the
 * same text count once), against its edges and the meter key configured for its connector.
 */
export function verifySession(signed: readonly SignedValue[], tx: TransactionEdges, keyHex: string | null, place?: KeyPlace): SessionVerification {
  const seen = new Set<string>();
  const parsed: Array<{ value: SignedValue; format: SignedFormat; doc: OcmfDocument | null; problem: string | null }> = [];
  for (const v of signed) {
    if (seen.has(v.value)) continue;
    seen.add(v.value);
    const format = signedFormatOf(v.value);
    if (format !== 'OCMF') {
      parsed.push({ value: v, format, doc: null, problem: null });
      continue;
    }
    const p = parseOcmf(v.value.trim());
    parsed.push({ value: v, format, doc: p.ok ? p.document : null, problem: p.ok ? null : p.problem });
  }
  const values: CarriedValue[] = parsed.map((p) => ({
    context: p.value.context,
    value: p.value.value,
    format: p.format,
    nature: natureOf(p.value.context, p.doc),
    payloadText: p.doc?.payloadText ?? null,
    readings: p.doc?.readings ?? [],
  }));
  const docs = parsed.filter((p) => p.doc !== null).map((p) => ({ ...p, doc: p.doc! }));
  const format: SignedFormat | null = parsed.length === 0 ? null : docs.length > 0 || parsed.some((p) => p.format === 'OCMF') ? 'OCMF' : parsed[0].format;
  const beginAt = docs.map((d) => ({ d, r: readingOf(d.doc, 'B') })).find((x) => x.r !== null);
  const endAt = docs.map((d) => ({ d, r: readingOf(d.doc, 'E') })).find((x) => x.r !== null);
  const key = keyHex === null ? null : readPublicKey(keyHex, docs[0]?.doc.signature.method ?? null);
  const base = {
    format,
    meterSerial: (beginAt ?? endAt)?.d.doc.meterSerial ?? docs[0]?.doc.meterSerial ?? null,
    signedStartWh: beginAt?.r?.valueWh ?? null,
    signedStopWh: endAt?.r?.valueWh ?? null,
    publicKeyHex: key?.ok ? key.spkiHex : null,
    stationKey: stationKeyOf(signed, docs[0]?.doc.signature.method ?? null),
    values,
  };
  const result = (outcome: SignedOutcome, reason: string): SessionVerification => ({ outcome, reason, ...base });

  if (parsed.length === 0) {
    return result('unsigned', keyHex === null ? 'the charger sent no signed meter values for this transaction' : 'the charger sent no signed meter values for this transaction, although a meter key is configured for its connector');
  }
  const broken = parsed.find((p) => p.format === 'OCMF' && p.doc === null);
  if (broken) return result('signature_invalid', `the ${broken.value.context || 'signed'} value is not a well-formed OCMF document: it ${broken.problem}`);
  if (docs.length === 0) return result('signature_invalid', `the ${parsed[0].value.context || 'signed'} value is ${UNVERIFIED_FORMATS[parsed[0].format as Exclude<SignedFormat, 'OCMF'>]}`);
  if (keyHex === null) return result('key_unknown', `no meter public key is configured for this connector (chargers[].meter_public_key or meter_public_keys); meter ${base.meterSerial ?? '(no serial)'} signed with ${docs[0].doc.signature.method}${stationKeyHint(base.stationKey, place)}`);
  if (!key!.ok) return result('key_unknown', `${key!.problem} (meter ${base.meterSerial ?? '(no serial)'}, ${docs[0].doc.signature.method})${stationKeyHint(base.stationKey, place)}`);
  for (const d of docs) {
    const check = checkOcmfSignature(d.doc, key!.key);
    if (!check.valid) return result('signature_invalid', `the ${d.value.context || 'signed'} document (${d.doc.pagination ? `PG ${d.doc.payload.PG as string}` : 'no pagination'}): ${check.problem}`);
  }
  const other = parsed.find((p) => p.format !== 'OCMF');
  if (other) return result('signature_invalid', `the ${other.value.context || 'signed'} value is ${UNVERIFIED_FORMATS[other.format as Exclude<SignedFormat, 'OCMF'>]}, next to OCMF documents`);
  if (!beginAt?.r) return result('incomplete', 'no signed begin reading (OCMF TX=B) of this transaction was received');
  if (!endAt?.r) return result('incomplete', 'no signed end reading (OCMF TX=E) of this transaction was received');

  const b = beginAt.r;
  const e = endAt.r;
  // Order: begin before end, the pagination counter advancing between two documents, the register not falling.
  if (b.timeMs !== null && e.timeMs !== null && b.timeMs > e.timeMs) {
    return result('register_mismatch', `the signed begin reading (${b.time}) is later than the signed end reading (${e.time}): begin and end are out of order`);
  }
  const pb = beginAt.d.doc.pagination;
  const pe = endAt.d.doc.pagination;
  if (beginAt.d !== endAt.d && pb && pe && pb.kind === pe.kind && pe.counter <= pb.counter) {
    return result('register_mismatch', `the end document's pagination ${pe.kind}${pe.counter} does not follow the begin document's ${pb.kind}${pb.counter}: begin and end are out of order`);
  }
  if (e.valueWh! < b.valueWh!) return result('register_mismatch', `the signed end register ${wh(e.valueWh!)} is below the signed begin ${wh(b.valueWh!)}`);
  // Both of this transaction: one meter, one identification, by a synchronised clock at its start and stop.
  const mb = beginAt.d.doc.meterSerial;
  const me = endAt.d.doc.meterSerial;
  if (mb !== null && me !== null && mb !== me) return result('incomplete', `no signed end of this transaction: the end reading was signed by meter ${me.slice(0, 40)}, the begin by meter ${mb.slice(0, 40)}`);
  const ib = beginAt.d.doc.identification;
  const ie = endAt.d.doc.identification;
  if (ib && ie && ib !== ie) return result('incomplete', 'no signed end of this transaction: the end document identifies another user (ID) than the begin document');
  for (const [edge, r, atMs] of [['begin', b, tx.startedAtMs], ['end', e, tx.stoppedAtMs]] as const) {
    if (r.timeMs === null || !syncedClock(r)) continue;
    const offMs = Math.abs(r.timeMs - atMs);
    if (offMs > EDGE_TOLERANCE_MS) {
      return result('incomplete', `no signed ${edge} of this transaction: the signed ${edge} reading (${r.time}) is ${Math.round(offMs / 1000)} s from the transaction's ${edge === 'begin' ? 'start' : 'stop'} ${iso(atMs)} (at most ${EDGE_TOLERANCE_MS / 1000} s), it belongs to another transaction`);
    }
  }
  // The register values the cdr is priced on are the signed ones, to the Wh.
  const startOff = Math.abs(b.valueWh! - tx.meterStartWh);
  const stopOff = Math.abs(e.valueWh! - tx.meterStopWh);
  if (startOff >= 1 || stopOff >= 1) {
    const parts: string[] = [];
    if (startOff >= 1) parts.push(`meterStart ${wh(tx.meterStartWh)} against the signed begin ${wh(b.valueWh!)}`);
    if (stopOff >= 1) parts.push(`meterStop ${wh(tx.meterStopWh)} against the signed end ${wh(e.valueWh!)}`);
    return result('register_mismatch', `the cdr is priced on register values that differ from the signed ones: ${parts.join('; ')}`);
  }
  return result('verified', `signed begin ${wh(b.valueWh!)} and end ${wh(e.valueWh!)} by meter ${base.meterSerial ?? '(no serial)'} verify (${docs[0].doc.signature.method}) and equal the priced register values`);
}
