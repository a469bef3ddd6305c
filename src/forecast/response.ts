// Builds the market_price_forecast response from stored prices and the stored forecast:
// periods from local midnight today to the end of the horizon, actual prices where
// published, else the forecast with its bounds; and the lowest upcoming price. Pure.
import { formatLocalIso, localDayOf, localMidnightMs, periodStartsOfDay } from './local-days.js';

export interface PriceObject {
  readonly period_start: string;
  readonly price_per_mwh: number | null;
  readonly forecast: number | null;
  readonly forecast_lower: number | null;
  readonly forecast_upper: number | null;
}

export interface MarketPriceForecastResponse {
  readonly region: string;
  readonly currency_code: string;
  readonly currency_symbol: string;
  readonly duration_seconds: number;
  readonly prices: PriceObject[];
  readonly lowest_upcoming_price: { readonly timestamp: string; readonly price: number } | null;
}

export interface ActualPeriod {
  readonly startMs: number;
  readonly pricePerMwh: number;
}

export interface StoredForecastPeriod {
  readonly startMs: number;
  readonly durationS: number;
  readonly forecastPerMwh: number;
  readonly lowerPerMwh: number;
  readonly upperPerMwh: number;
}

export interface ResponseInput {
  readonly marketArea: string;
  readonly currencyCode: string;
  readonly timeZone: string;
  readonly intervalS: number;
  readonly nowMs: number;
  readonly horizonDays: number;
  /** Published prices already at `intervalS`. */
  readonly actual: readonly ActualPeriod[];
  /** Stored forecast at the model's resolution. */
  readonly forecast: readonly StoredForecastPeriod[];
}

/** The display symbol of an ISO 4217 code (EUR -> €), from the runtime's locale data. */
export function currencySymbol(code: string): string {
  try {
    const part = new Intl.NumberFormat('en', { style: 'currency', currency: code }).formatToParts(0).find((p) => p.type === 'currency');
    return part?.value ?? code;
  } catch {
    return code;
  }
}

/** [fromMs, toMs) of the response: local midnight today to the end of the horizon's last day. */
export function responseWindow(timeZone: string, nowMs: number, horizonDays: number): { fromMs: number; toMs: number } {
  const today = localDayOf(timeZone, nowMs);
  return { fromMs: localMidnightMs(timeZone, today), toMs: localMidnightMs(timeZone, today + horizonDays + 1) };
}

/** Time-weighted mean of forecast periods over [startMs, endMs); undefined unless fully covered. */
function forecastOver(forecast: readonly StoredForecastPeriod[], from: number, startMs: number, endMs: number) {
  let covered = 0;
  let f = 0;
  let lo = 0;
  let hi = 0;
  for (let i = from; i < forecast.length; i++) {
    const p = forecast[i];
    if (p.startMs >= endMs) break;
    const a = Math.max(p.startMs, startMs);
    const b = Math.min(p.startMs + p.durationS * 1000, endMs);
    if (b <= a) continue;
    const w = b - a;
    covered += w;
    f += w * p.forecastPerMwh;
    lo += w * p.lowerPerMwh;
    hi += w * p.upperPerMwh;
  }
  if (covered < endMs - startMs) return undefined;
  return { forecast: f / covered, lower: lo / covered, upper: hi / covered };
}

const round = (v: number) => Math.round(v * 100) / 100;

export function buildForecastResponse(input: ResponseInput): MarketPriceForecastResponse {
  const { timeZone, intervalS, nowMs } = input;
  const { fromMs, toMs } = responseWindow(timeZone, nowMs, input.horizonDays);
  const actual = new Map(input.actual.map((p) => [p.startMs, p.pricePerMwh]));
  const forecast = [...input.forecast].sort((a, b) => a.startMs - b.startMs);
  const prices: PriceObject[] = [];
  let lowest: { startMs: number; price: number } | null = null;
  let cursor = 0;
  const firstDay = localDayOf(timeZone, fromMs);
  const lastDay = localDayOf(timeZone, toMs - 1);
  for (let day = firstDay; day <= lastDay; day++) {
    for (const startMs of periodStartsOfDay(timeZone, day, intervalS)) {
      const endMs = startMs + intervalS * 1000;
      const price = actual.get(startMs);
      let value: number;
      if (price !== undefined) {
        value = price;
        prices.push({ period_start: formatLocalIso(timeZone, startMs), price_per_mwh: price, forecast: null, forecast_lower: null, forecast_upper: null });
      } else {
        while (cursor < forecast.length && forecast[cursor].startMs + forecast[cursor].durationS * 1000 <= startMs) cursor++;
        const f = forecastOver(forecast, cursor, startMs, endMs);
        if (!f) continue;
        value = round(f.forecast);
        prices.push({
          period_start: formatLocalIso(timeZone, startMs),
          price_per_mwh: null,
          forecast: value,
          forecast_lower: Math.min(value, round(f.lower)),
          forecast_upper: Math.max(value, round(f.upper)),
        });
      }
      // Upcoming = not yet ended; strict < keeps the earliest of equal prices.
      if (endMs > nowMs && (lowest === null || value < lowest.price)) lowest = { startMs, price: value };
    }
  }
  return {
    region: input.marketArea,
    currency_code: input.currencyCode,
    currency_symbol: currencySymbol(input.currencyCode),
    duration_seconds: intervalS,
    prices,
    lowest_upcoming_price: lowest && { timestamp: formatLocalIso(timeZone, lowest.startMs), price: lowest.price },
  };
}
