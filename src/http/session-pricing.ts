// The edge around the pure pricing: checks the market and the readings' order, fetches
// the window's prices ONCE, prices, and maps the outcome to problems (422 missing period;
// prices not there yet: pricesUnavailable, the rule every endpoint shares).
import { checkReadings, priceSession, type EnergyReading } from '../pricing/session-cost.js';
import { HttpProblem, type FieldError } from './errors.js';
import { pricesUnavailable, type MarketInfo, type PriceAccess } from './price-access.js';
import { formatUtc } from './timestamps.js';

export interface RequestPowerMarket {
  readonly market_area_code: string;
  readonly sub_modality: string;
}

const MAX_LISTED = 20;

function invalid(detail: string, errors: FieldError[]): HttpProblem {
  return new HttpProblem(422, detail, { errors });
}

/** The market of a request, or 422 naming power_market.market_area_code / sub_modality. */
export function resolveMarket(access: PriceAccess, pm: RequestPowerMarket, path = 'power_market'): MarketInfo {
  const errors: FieldError[] = [];
  const market = access.market(pm.market_area_code);
  if (!market) errors.push({ path: `${path}.market_area_code`, message: `unknown market area "${pm.market_area_code.slice(0, 40)}" (known: ${access.knownMarkets().join(', ')})` });
  if (pm.sub_modality !== 'DayAhead') errors.push({ path: `${path}.sub_modality`, message: `must be "DayAhead" (the only modality priced)` });
  if (errors.length > 0 || !market) throw invalid('the power market is not one this gateway prices', errors);
  return market;
}

/** Sortedness, duplicates, decreasing readings (and at least 2 when `minTwo`). */
export function assertReadingsUsable(readings: readonly EnergyReading[], path = 'meter_readings', minTwo = true): void {
  if (!minTwo && readings.length < 2) return;
  const problems = checkReadings(readings, MAX_LISTED);
  if (problems.length === 0) return;
  throw invalid(
    'the meter readings cannot be priced',
    problems.map((p) => ({ path: p.index < 0 ? path : `${path}[${p.index}].${p.field}`, message: p.message })),
  );
}

export interface PricedReadings {
  readonly currency: string;
  readonly totalCostExclVat: number;
  readonly startMs: number;
  readonly endMs: number;
}

/** Prices checked readings against the stored prices of the market. */
export function priceReadings(access: PriceAccess, market: MarketInfo, readings: readonly EnergyReading[]): PricedReadings {
  const unavailable = pricesUnavailable(access, market, { path: 'power_market.market_area_code', unconfiguredWithPrices: true });
  if (unavailable) throw unavailable;
  const fromMs = readings[0].timestampMs;
  const toMs = readings[readings.length - 1].timestampMs;
  const periods = access.periods(market.code, fromMs, toMs);
  const result = priceSession(readings, periods, market.nativeDurationS);
  if (!result.ok) {
    // Prices that stop before the readings' end although they should be out by now: 503.
    const behind = pricesUnavailable(access, market, { path: 'meter_readings', need: { fromMs: result.missing.startMs, toMs }, unconfiguredWithPrices: true });
    if (behind) throw behind;
    const start = formatUtc(result.missing.startMs);
    const end = formatUtc(result.missing.startMs + result.missing.durationS * 1000);
    throw invalid(`no ${market.code} day-ahead price is stored for ${start} to ${end}, which the readings cover`, [
      { path: 'meter_readings', message: `prices missing from ${start} (first missing period ${start}/${end})` },
    ]);
  }
  return { currency: market.currency, totalCostExclVat: result.totalCostExclVat, startMs: result.startMs, endMs: result.endMs };
}
