// What session pricing needs from the market registry and the price store, behind one
// narrow interface so the pure pricing never sees SQL and tests can see what is used.
import type { PricePeriod } from '../domain.js';
import { marketByCode, MARKETS, nativeResolutionS } from '../prices/markets.js';
import type { NativeDurationS } from '../pricing/session-cost.js';
import type { Db } from '../store/db.js';
import { PriceStore } from '../store/prices.js';

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
  /** Native periods overlapping [fromMs, toMs), oldest first, in one range query. */
  periods(marketArea: string, fromMs: number, toMs: number): PricePeriod[];
}

export function createPriceAccess(db: Db, configuredRegions: readonly string[]): PriceAccess {
  const store = new PriceStore(db);
  const configured = new Set(configuredRegions.map((r) => r.trim().toUpperCase()));
  const infos = new Map<string, MarketInfo>();
  for (const m of MARKETS) {
    infos.set(m.code, { code: m.code, currency: m.currency, nativeDurationS: (atMs) => nativeResolutionS(m, atMs) });
  }
  return {
    market: (code) => {
      const m = marketByCode(code);
      return m ? infos.get(m.code) : undefined;
    },
    knownMarkets: () => MARKETS.map((m) => m.code),
    hasPrices: (area) => store.hasPrices(area),
    isConfigured: (area) => configured.has(area.toUpperCase()),
    periods: (area, fromMs, toMs) => store.native(area, fromMs, toMs),
  };
}
