// The edge around the pure pricing: checks the market and the readings' order, cuts a
// session's readings to its stated window, fetches the window's prices ONCE, prices, and
// maps the outcome to problems (422 missing period or unbounded edge; prices not there
// yet: pricesUnavailable, the rule every endpoint shares; 503 a local meter's reading
// after the end not taken yet).
import { checkReadings, priceSession, type EnergyReading } from '../pricing/session-cost.js';
import { clipToWindow, unboundedEdges, type EdgeGap } from '../pricing/session-window.js';
import type { Tariff } from '../pricing/tariff.js';
import { priceSessionWithTariff, type TariffCost } from '../pricing/tariff-cost.js';
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
  const market = collectMarket(access, pm, errors, path);
  if (!market) throw invalid('the power market is not one this gateway prices', errors);
  return market;
}

/** As resolveMarket, but adds the problems to `into` and answers undefined. */
export function collectMarket(access: PriceAccess, pm: RequestPowerMarket, into: FieldError[], path = 'power_market'): MarketInfo | undefined {
  const before = into.length;
  const market = access.market(pm.market_area_code);
  if (!market) into.push({ path: `${path}.market_area_code`, message: `unknown market area "${pm.market_area_code.slice(0, 40)}" (known: ${access.knownMarkets().join(', ')})` });
  if (pm.sub_modality !== 'DayAhead') into.push({ path: `${path}.sub_modality`, message: `must be "DayAhead" (the only modality priced)` });
  return into.length === before ? market : undefined;
}

/** Sortedness, duplicates, decreasing readings (and at least 2 when `minTwo`). */
export function assertReadingsUsable(readings: readonly EnergyReading[], path = 'meter_readings', minTwo = true): void {
  const errors = readingsUsableErrors(readings, path, minTwo);
  if (errors.length > 0) throw invalid('the meter readings cannot be priced', errors);
}

/** What assertReadingsUsable refuses, as field errors (none when usable). */
export function readingsUsableErrors(readings: readonly EnergyReading[], path = 'meter_readings', minTwo = true): FieldError[] {
  if (!minTwo && readings.length < 2) return [];
  return checkReadings(readings, MAX_LISTED).map((p) => ({ path: p.index < 0 ? path : `${path}[${p.index}].${p.field}`, message: p.message }));
}

export interface PricedReadings {
  readonly currency: string;
  /** Under the market's tariff when it has one, else the day-ahead price alone. */
  readonly totalCostExclVat: number;
  readonly energyKwh: number;
  /** The tariff's split, VAT and total incl. VAT; null without a tariff. */
  readonly tariff: TariffCost | null;
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * Prices checked readings against the stored prices of the market, under its tariff when
 * it has one (pricing/tariff-cost.ts); without one exactly as session-cost.ts always has.
 */
export function priceReadings(access: PriceAccess, market: MarketInfo, readings: readonly EnergyReading[], tariff?: Tariff): PricedReadings {
  const unavailable = pricesUnavailable(access, market, { path: 'power_market.market_area_code', unconfiguredWithPrices: true });
  if (unavailable) throw unavailable;
  const fromMs = readings[0].timestampMs;
  const toMs = readings[readings.length - 1].timestampMs;
  const periods = access.periods(market.code, fromMs, toMs);
  const result = tariff ? priceSessionWithTariff(readings, periods, tariff, market.nativeDurationS) : priceSession(readings, periods, market.nativeDurationS);
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
  const energyKwh = readings[readings.length - 1].energyKwh - readings[0].energyKwh;
  if ('cost' in result) return { currency: market.currency, totalCostExclVat: result.cost.totalExclVat, energyKwh, tariff: result.cost, startMs: result.startMs, endMs: result.endMs };
  return { currency: market.currency, totalCostExclVat: result.totalCostExclVat, energyKwh, tariff: null, startMs: result.startMs, endMs: result.endMs };
}

/**
 * A session's own readings (checked by assertReadingsUsable), cut to its window: readings
 * outside start..end are not billed, the energy of an interval across an edge is cut
 * there by the even-spread rule. 422 when fewer than two points are left.
 */
export function ownReadingsInWindow(readings: readonly EnergyReading[], startMs: number, endMs: number, path = 'meter_readings'): readonly EnergyReading[] {
  const inWindow = clipToWindow(readings, startMs, endMs);
  const refusal = windowRefusal(readings.length, inWindow.length, startMs, endMs, path);
  if (refusal) throw invalid(refusal.detail, [refusal.error]);
  return inWindow;
}

/** ownReadingsInWindow's refusal as a detail and a field error (undefined when the window is billed). */
export function ownReadingsWindowRefusal(readings: readonly EnergyReading[], startMs: number, endMs: number, path = 'meter_readings'): { detail: string; error: FieldError } | undefined {
  return windowRefusal(readings.length, clipToWindow(readings, startMs, endMs).length, startMs, endMs, path);
}

function windowRefusal(given: number, inWindow: number, startMs: number, endMs: number, path: string): { detail: string; error: FieldError } | undefined {
  if (inWindow >= 2) return undefined;
  return {
    detail: `the meter readings do not cover any part of the session from ${formatUtc(startMs)} to ${formatUtc(endMs)}; readings outside start_date_time..end_date_time are not billed`,
    error: { path, message: `needs readings inside the session window, or on both sides of an edge (${given} given, ${inWindow} point(s) in the window)` },
  };
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

function edgeMessage(gap: EdgeGap, maxGapMs: number): string {
  const side = gap.edge === 'start' ? 'before the start' : 'after the end';
  const nearest = gap.gapMs === null ? `the meter has no stored reading ${side}` : `the nearest stored reading ${side} is ${seconds(gap.gapMs)} away`;
  return `${nearest}; the energy up to the edge is interpolated only from a reading at most ${seconds(maxGapMs)} away (sessions.max_edge_gap_ms)`;
}

/**
 * A local meter's stored readings around a session (inside it, and the nearest one
 * beyond each edge), cut to the window. 422 naming each edge whose nearest reading beyond
 * it is further than `maxGapMs` (the meter was offline there): never a smaller cost. 503
 * with Retry-After while the only problem is a reading after the end not taken yet.
 */
export function localReadingsInWindow(stored: readonly EnergyReading[], resourceId: string, startMs: number, endMs: number, maxGapMs: number, nowMs: number): readonly EnergyReading[] {
  const gaps = unboundedEdges(stored, startMs, endMs, maxGapMs);
  if (gaps.length === 1 && gaps[0].edge === 'end' && gaps[0].gapMs === null && nowMs < endMs + maxGapMs) {
    const retryS = Math.max(1, Math.ceil((endMs + maxGapMs - nowMs) / 1000));
    throw new HttpProblem(503, `the local meter ${resourceId} has no reading after the session's end yet (${formatUtc(endMs)}); the energy up to the end is billed once the next poll has stored one`, {
      headers: { 'Retry-After': String(retryS) },
    });
  }
  if (gaps.length > 0) {
    const edges = gaps.map((g) => (g.edge === 'start' ? `start ${formatUtc(startMs)}` : `end ${formatUtc(endMs)}`)).join(' and ');
    throw invalid(`the local meter ${resourceId} was not read close enough to the session's ${edges} to bill the whole session (${edgeMessage(gaps[0], maxGapMs)})`, gaps.map((g) => ({
      path: g.edge === 'start' ? 'start_date_time' : 'end_date_time',
      message: edgeMessage(g, maxGapMs),
    })));
  }
  return clipToWindow(stored, startMs, endMs);
}
