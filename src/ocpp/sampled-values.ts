// Pure: OCPP 1.6 meterValue/transactionData (already schema-checked) as the rows the
// store keeps. Every value is checked before any is stored: a Raw value that is not a
// number makes the whole call a CallError, so nothing is half-stored.
import { createRPCError } from './rpc.js';
import type { SampledValueRow } from '../store/ocpp.js';
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

/** OCPP 1.6 defaults: measurand Energy.Active.Import.Register, unit Wh. Signed data is not a number we can read; it is skipped. */
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
