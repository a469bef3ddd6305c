// Builds the market_price_forecast response from stored prices and the stored forecast:
// every period from local midnight today to the end of the horizon, with no holes, so
// entry i starts at the first period_start + i x duration_seconds. A period fully
// covered by published prices carries the price; any other carries a forecast with
// bounds, made per quarter-hour from the published price where there is one, else the
// stored forecast, else (a hole inside the published prices) the gap filler's estimate.
// The array ends early only where neither prices nor a forecast reach (no forecast
// computed yet, or forecasting off). Also the lowest upcoming price. Pure.
import type { PricePeriod } from '../domain.js';
import { resample } from '../prices/resample.js';
import { gapFiller, type GapFiller } from './gap-fill.js';
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
  /**
   * Stored native prices, oldest first, from at least two weeks before local midnight
   * today to the end of the window (the gap filler reads the weeks before).
   */
  readonly native: readonly PricePeriod[];
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

/** How far before local midnight the native prices given reach: the gap filler's two weeks and a day. */
export const NATIVE_HISTORY_MS = 15 * 86_400_000;

const QUARTER_MS = 900_000;
const round = (v: number) => Math.round(v * 100) / 100;

interface Cursor<T> {
  readonly items: readonly T[];
  i: number;
}

/** The item covering [t, t + 15 min) from a sorted list, advancing the cursor (t only grows). */
function covering<T extends { startMs: number; durationS: number }>(c: Cursor<T>, t: number): T | undefined {
  while (c.i < c.items.length && c.items[c.i].startMs + c.items[c.i].durationS * 1000 <= t) c.i++;
  const p = c.items[c.i];
  return p && p.startMs <= t && p.startMs + p.durationS * 1000 >= t + QUARTER_MS ? p : undefined;
}

export function buildForecastResponse(input: ResponseInput): MarketPriceForecastResponse {
  const { timeZone, intervalS, nowMs } = input;
  const { fromMs, toMs } = responseWindow(timeZone, nowMs, input.horizonDays);
  const native = input.native;
  const published = new Map(
    resample(native, { marketArea: input.marketArea, timeZone, fromMs, toMs, intervalS }).map((p) => [p.startMs, p.pricePerMwh]),
  );
  const forecast = [...input.forecast].sort((a, b) => a.startMs - b.startMs);
  // The answer runs to whichever reaches further, the published prices or the forecast.
  const lastNative = native[native.length - 1];
  const lastForecast = forecast[forecast.length - 1];
  const reachMs = Math.min(
    toMs,
    Math.max(lastNative ? lastNative.startMs + lastNative.durationS * 1000 : -Infinity, lastForecast ? lastForecast.startMs + lastForecast.durationS * 1000 : -Infinity),
  );
  const prices: PriceObject[] = [];
  let lowest: { startMs: number; price: number } | null = null;
  const nativeAt: Cursor<PricePeriod> = { items: native, i: 0 };
  const forecastAt: Cursor<StoredForecastPeriod> = { items: forecast, i: 0 };
  let filler: GapFiller | undefined;
  const firstDay = localDayOf(timeZone, fromMs);
  const lastDay = localDayOf(timeZone, toMs - 1);
  answer: for (let day = firstDay; day <= lastDay; day++) {
    for (const startMs of periodStartsOfDay(timeZone, day, intervalS)) {
      if (startMs >= reachMs) break answer;
      const endMs = startMs + intervalS * 1000;
      const price = published.get(startMs);
      let value: number;
      if (price !== undefined) {
        value = price;
        prices.push({ period_start: formatLocalIso(timeZone, startMs), price_per_mwh: price, forecast: null, forecast_lower: null, forecast_upper: null });
      } else {
        // Per quarter-hour: the price if published, else the forecast, else the filler.
        let f = 0;
        let lo = 0;
        let hi = 0;
        for (let t = startMs; t < endMs; t += QUARTER_MS) {
          const p = covering(nativeAt, t);
          if (p) {
            f += p.pricePerMwh;
            lo += p.pricePerMwh;
            hi += p.pricePerMwh;
            continue;
          }
          const q = covering(forecastAt, t);
          if (q) {
            f += q.forecastPerMwh;
            lo += q.lowerPerMwh;
            hi += q.upperPerMwh;
            continue;
          }
          filler ??= gapFiller(
            timeZone,
            native.map((n) => ({ startMs: n.startMs, durationS: n.durationS, value: n.pricePerMwh })),
          );
          const g = filler.at(t);
          // Nothing known to estimate from: end the answer here rather than leave a hole.
          if (!g) break answer;
          f += g.value;
          lo += g.value - g.halfWidth;
          hi += g.value + g.halfWidth;
        }
        const n = (endMs - startMs) / QUARTER_MS;
        value = round(f / n);
        prices.push({
          period_start: formatLocalIso(timeZone, startMs),
          price_per_mwh: null,
          forecast: value,
          forecast_lower: Math.min(value, round(lo / n)),
          forecast_upper: Math.max(value, round(hi / n)),
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
