// What session pricing needs from the market registry and the price store, behind one
// narrow interface so the pure pricing never sees SQL.
// TEMPORARY: a direct query of the prices table and a two-market list until the
// registry (src/prices/markets.ts) and the store (src/store/prices.ts) land on main.
import type { PricePeriod } from '../domain.js';
import { sdacNativeDurationS, type NativeDurationS } from '../pricing/session-cost.js';
import type { Db } from '../store/db.js';

export interface MarketInfo {
  readonly code: string;
  readonly currency: string;
  readonly nativeDurationS: NativeDurationS;
}

export interface PriceAccess {
  market(code: string): MarketInfo | undefined;
  knownMarkets(): readonly string[];
  hasPrices(marketArea: string): boolean;
  /** Whether the gateway fetches this market's prices (config prices.regions). */
  isConfigured(marketArea: string): boolean;
  /** Native periods overlapping [fromMs, toMs), oldest first, in one query. */
  periods(marketArea: string, fromMs: number, toMs: number): PricePeriod[];
}

const MARKETS: Record<string, MarketInfo> = {
  NL: { code: 'NL', currency: 'EUR', nativeDurationS: sdacNativeDurationS },
  'DE-LU': { code: 'DE-LU', currency: 'EUR', nativeDurationS: sdacNativeDurationS },
};

export function createPriceAccess(db: Db, configuredRegions: readonly string[]): PriceAccess {
  const configured = new Set(configuredRegions.map((r) => r.trim().toUpperCase()));
  const any = db.prepare<[string]>('SELECT 1 FROM prices WHERE market_area = ? LIMIT 1').pluck();
  const range = db.prepare<[string, number, number, number], { start_ms: number; duration_s: number; price_per_mwh: number }>(
    'SELECT start_ms, duration_s, price_per_mwh FROM prices WHERE market_area = ? AND start_ms >= ? AND start_ms < ? AND start_ms + duration_s * 1000 > ? ORDER BY start_ms',
  );
  return {
    market: (code) => MARKETS[code.trim().toUpperCase()],
    knownMarkets: () => Object.keys(MARKETS),
    hasPrices: (area) => any.get(area) !== undefined,
    isConfigured: (area) => configured.has(area.toUpperCase()),
    periods: (area, fromMs, toMs) =>
      range.all(area, fromMs - 86_400_000, toMs, fromMs).map((r) => ({ marketArea: area, startMs: r.start_ms, durationS: r.duration_s, pricePerMwh: r.price_per_mwh })),
  };
}
