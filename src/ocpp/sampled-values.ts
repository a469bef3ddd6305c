// Pure: OCPP 1.6 meterValue/transactionData (already schema-checked) as the rows the
// store keeps. Every value is checked before any is stored: a Raw value that is not a
// number makes the whole call a CallError, so nothing is half-stored.
import { createRPCError } from './rpc.js';
import type { SampledValueRow } from '../store/ocpp.js';
import type { SignedValueRow } from '../store/signed-values.js';
import { ENERGY_REGISTER } from './register-readings.js';

export interface MeterValue {
  readonly timestamp: string;
  readonly sampledValue: ReadonlyArray<{
    readonly value: string;
    readonly context?: string;
    readonly format?: 'Raw' | 'SignedData';
    readonly measurand?: string;
    readonly phase?: string;
    readonly location?: string;
    readonly unit?: string;
  }>;
}

/** OCPP 1.6 defaults: measurand Energy.Active.Import.Register, unit Wh. Signed data is not a number: signedValueRows keeps it. */
export function sampledValueRows(meterValues: readonly MeterValue[], path: string): SampledValueRow[] {
  const rows: SampledValueRow[] = [];
  meterValues.forEach((mv, i) => {
    const sampledAtMs = Date.parse(mv.timestamp);
    if (!Number.isFinite(sampledAtMs)) throw createRPCError('PropertyConstraintViolation', `${path}[${i}].timestamp is not a date-time`);
    mv.sampledValue.forEach((sv, j) => {
      if (sv.format === 'SignedData') return;
      const value = Number(sv.value);
      if (sv.value.trim() === '' || !Number.isFinite(value)) {
        throw createRPCError('PropertyConstraintViolation', `${path}[${i}].sampledValue[${j}].value "${sv.value.slice(0, 40)}" is not a number`);
      }
      const measurand = sv.measurand ?? ENERGY_REGISTER;
      rows.push({
        sampledAtMs,
        measurand,
        phase: sv.phase ?? '',
        location: sv.location ?? '',
        context: sv.context ?? '',
        value,
        unit: sv.unit ?? (measurand.startsWith('Energy') ? 'Wh' : measurand.startsWith('Power') ? 'W' : ''),
      });
    });
  });
  return rows;
}

/** A signed value longer than this is kept cut to it (it then fails as not well-formed): a bound per row. */
export const MAX_SIGNED_VALUE_CHARS = 16_384;

/**
 * The SignedData values (OCMF and other formats, issue 32) as sent, with their context
 * and measurand, to be kept with the transaction (store/signed-values.ts). The message's
 * timestamps are checked by sampledValueRows.
 */
export function signedValueRows(meterValues: readonly MeterValue[]): SignedValueRow[] {
  const rows: SignedValueRow[] = [];
  for (const mv of meterValues) {
    const sampledAtMs = Date.parse(mv.timestamp);
    if (!Number.isFinite(sampledAtMs)) continue;
    for (const sv of mv.sampledValue) {
      if (sv.format !== 'SignedData') continue;
      rows.push({ sampledAtMs, context: sv.context ?? '', measurand: sv.measurand ?? ENERGY_REGISTER, value: sv.value.slice(0, MAX_SIGNED_VALUE_CHARS) });
    }
  }
  return rows;
}
