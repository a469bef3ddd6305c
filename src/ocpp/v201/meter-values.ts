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
import { meterValueRows } from '../sampled-values.js';

export interface MeterValue201 {
  readonly timestamp: string;
  readonly sampledValue: ReadonlyArray<{
    readonly value: number;
    readonly context?: string;
    readonly measurand?: string;
    readonly phase?: string;
    readonly location?: string;
    readonly unitOfMeasure?: { readonly unit?: string; readonly multiplier?: number };
  }>;
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
