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

/** A sampled value's number and unit, whatever its version's form (null: not a number to keep, e.g. signed data). */
export type ValueOf<S> = (sv: S, where: string) => { readonly value: number; readonly unit: string | undefined } | null;

/**
 * The rows of meter values of either version (1.6 here, 2.0.1 in v201/meter-values.ts): the
 * instant checked, measurand Energy.Active.Import.Register when none is named, the unit the
 * measurand implies when none is sent (Wh for energy, W for power); `valueOf` reads the value
 * in its version's form and throws the CallError for one that is not a number.
 */
export function meterValueRows<S extends { readonly measurand?: string; readonly phase?: string; readonly location?: string; readonly context?: string }>(
  meterValues: ReadonlyArray<{ readonly timestamp: string; readonly sampledValue: readonly S[] }>,
  path: string,
  valueOf: ValueOf<S>,
): SampledValueRow[] {
  const rows: SampledValueRow[] = [];
  meterValues.forEach((mv, i) => {
    const sampledAtMs = Date.parse(mv.timestamp);
    if (!Number.isFinite(sampledAtMs)) throw createRPCError('PropertyConstraintViolation', `${path}[${i}].timestamp is not a date-time`);
    mv.sampledValue.forEach((sv, j) => {
      const read = valueOf(sv, `${path}[${i}].sampledValue[${j}]`);
      if (read === null) return;
      const measurand = sv.measurand ?? ENERGY_REGISTER;
      rows.push({
        sampledAtMs,
        measurand,
        phase: sv.phase ?? '',
        location: sv.location ?? '',
        context: sv.context ?? '',
        value: read.value,
        unit: read.unit ?? (measurand.startsWith('Energy') ? 'Wh' : measurand.startsWith('Power') ? 'W' : ''),
      });
    });
  });
  return rows;
}

/** OCPP 1.6 defaults: measurand Energy.Active.Import.Register, unit Wh. Signed data is not a number: signedValueRows keeps it. */
export function sampledValueRows(meterValues: readonly MeterValue[], path: string): SampledValueRow[] {
  return meterValueRows(meterValues, path, (sv, where) => {
    if (sv.format === 'SignedData') return null;
    const value = Number(sv.value);
    if (sv.value.trim() === '' || !Number.isFinite(value)) throw createRPCError('PropertyConstraintViolation', `${where}.value "${sv.value.slice(0, 40)}" is not a number`);
    return { value, unit: sv.unit };
  });
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
