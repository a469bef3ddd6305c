// The cost fields of a cdr: `total_cost` as the contract has it, and what `include=
// cost_components` adds (cdr-include.ts, docs/http-api.md#tariffs). Pure formatting.
import { roundTo } from '../pricing/session-cost.js';
import type { PricedReadings } from './session-pricing.js';
import type { CdrIncludePart } from './cdr-include.js';

export interface CdrCostFields {
  total_cost: { excl_vat: number; incl_vat?: number };
  total_energy?: number;
  cost_components?: {
    tariff: string | null;
    day_ahead: number;
    supplier_margin: number;
    grid_fee: number;
    session_fee: number;
    vat: number | null;
    vat_rate: number | null;
    grid_fee_zones: { zone: string; per_kwh: number; energy_kwh: number; cost: number }[];
  };
}

/** `total_cost`, and with `cost_components` asked for: incl_vat (under a tariff), total_energy and the split. */
export function cdrCostFields(priced: PricedReadings, marketArea: string, include: ReadonlySet<CdrIncludePart>): CdrCostFields {
  if (!include.has('cost_components')) return { total_cost: { excl_vat: priced.totalCostExclVat } };
  const total_energy = roundTo(priced.energyKwh, 6);
  const t = priced.tariff;
  if (!t) {
    // No tariff for the market: the day-ahead price is the whole cost, VAT is not known here.
    return {
      total_cost: { excl_vat: priced.totalCostExclVat },
      total_energy,
      cost_components: { tariff: null, day_ahead: priced.totalCostExclVat, supplier_margin: 0, grid_fee: 0, session_fee: 0, vat: null, vat_rate: null, grid_fee_zones: [] },
    };
  }
  return {
    total_cost: { excl_vat: t.totalExclVat, incl_vat: t.totalInclVat },
    total_energy,
    cost_components: {
      tariff: marketArea,
      day_ahead: t.components.dayAhead,
      supplier_margin: t.components.supplierMargin,
      grid_fee: t.components.gridFee,
      session_fee: t.components.sessionFee,
      vat: t.vat,
      vat_rate: t.vatRate,
      grid_fee_zones: t.gridFeeByZone.map((z) => ({ zone: z.zone, per_kwh: z.perKwh, energy_kwh: z.energyKwh, cost: z.cost })),
    },
  };
}
