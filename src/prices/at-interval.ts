// Stored prices at an interval other than their native one (resample.ts, on the market's
// local clock), for the API and the benches.
import type { PricePeriod } from '../domain.js';
import type { PriceStore } from '../store/prices.js';
import { requireMarket } from './markets.js';
import { resample } from './resample.js';

const DAY_MS = 86_400_000;

/**
 * Periods of `intervalS` seconds (900, 1800, 3600, ...) overlapping [fromMs, toMs),
 * aligned to the market's local clock: time-weighted mean where coarser than native,
 * the native value repeated where finer. Periods with any missing native price are
 * left out. `intervalS` undefined = native periods.
 */
export function pricesAtInterval(store: PriceStore, marketArea: string, fromMs: number, toMs: number, intervalS?: number): PricePeriod[] {
  const market = requireMarket(marketArea);
  const native = store.native(market.code, fromMs - DAY_MS, toMs + DAY_MS);
  if (intervalS === undefined) return native.filter((p) => p.startMs < toMs && p.startMs + p.durationS * 1000 > fromMs);
  return resample(native, { marketArea: market.code, timeZone: market.timeZone, fromMs, toMs, intervalS });
}
