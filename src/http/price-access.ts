// What the HTTP routes need from the market registry and the price store, behind one
// narrow interface so the pure pricing never sees SQL and tests can see what is used;
// and the one rule for prices that are not there (status, detail and Retry-After are
// decided in pricesUnavailable only, so every endpoint answers the same condition alike).
import type { PricePeriod } from '../domain.js';
import { isoDate, localDayOf } from '../forecast/local-days.js';
import { marketByCode, MARKETS, nativeResolutionS } from '../prices/markets.js';
import type { NativeDurationS } from '../pricing/session-cost.js';
import type { Db } from '../store/db.js';
import { PriceStore } from '../store/prices.js';
import { HttpProblem } from './errors.js';
import { formatUtc } from './timestamps.js';

export interface MarketInfo {
  readonly code: string;
  readonly currency: string;
  readonly timeZone: string;
  readonly nativeDurationS: NativeDurationS;
}

export interface PriceAccess {
  market(code: string): MarketInfo | undefined;
  knownMarkets(): readonly string[];
  /** End of the last stored period, or null without prices. */
  lastEndMs(marketArea: string): number | null;
  /** Whether the gateway fetches this market's prices (config prices.regions). */
  isConfigured(marketArea: string): boolean;
  configuredMarkets(): readonly string[];
  /** Native periods overlapping [fromMs, toMs), oldest first, in one range query. */
  periods(marketArea: string, fromMs: number, toMs: number): PricePeriod[];
  nowMs(): number;
}

export function createPriceAccess(db: Db, configuredRegions: readonly string[], clock: { now(): number }): PriceAccess {
  const store = new PriceStore(db);
  const configured = [...new Set(configuredRegions.map((r) => r.trim().toUpperCase()))];
  const infos = new Map<string, MarketInfo>();
  for (const m of MARKETS) {
    infos.set(m.code, { code: m.code, currency: m.currency, timeZone: m.timeZone, nativeDurationS: (atMs) => nativeResolutionS(m, atMs) });
  }
  return {
    market: (code) => {
      const m = marketByCode(code);
      return m ? infos.get(m.code) : undefined;
    },
    knownMarkets: () => MARKETS.map((m) => m.code),
    lastEndMs: (area) => store.lastEndMs(area),
    isConfigured: (area) => configured.includes(area.toUpperCase()),
    configuredMarkets: () => configured,
    periods: (area, fromMs, toMs) => store.native(area, fromMs, toMs),
    nowMs: () => clock.now(),
  };
}

/**
 * Retry-After (seconds) whenever the prices an answer needs are not stored yet, on every
 * endpoint: the price sync looks for new prices every 15 minutes in the afternoon, and
 * market_price_forecast is meant to be polled at most every 5 minutes (interface.md).
 */
export const PRICES_RETRY_AFTER_S = 300;

export interface PriceNeed {
  /** The answer needs prices for [fromMs, toMs). */
  readonly fromMs: number;
  readonly toMs: number;
}

/**
 * The one rule for prices that are not there, for every endpoint:
 * - a known market this gateway is not configured for: 422 saying exactly that
 *   (`unconfiguredWithPrices`: still usable when prices were imported for it anyway);
 * - a configured market without any stored price: 503 with Retry-After;
 * - stored prices that stop before `need` although all of it should be published by now
 *   (day-ahead prices of a day are published the day before, so every day up to today):
 *   503 with Retry-After, naming the last stored day — the sync is behind, waiting helps.
 * Undefined otherwise; a hole inside the stored prices is the caller's 422.
 */
export function pricesUnavailable(
  access: PriceAccess,
  market: MarketInfo,
  opts: { readonly path: string; readonly need?: PriceNeed; readonly unconfiguredWithPrices: boolean },
): HttpProblem | undefined {
  const lastEndMs = access.lastEndMs(market.code);
  if (!access.isConfigured(market.code) && (lastEndMs === null || !opts.unconfiguredWithPrices)) {
    const regions = access.configuredMarkets().join(', ') || 'none';
    const detail = `${market.code} is a known market area, but this gateway is not configured for it (prices.regions: ${regions})${lastEndMs === null ? ' and holds no prices for it' : ''}`;
    return new HttpProblem(422, detail, { errors: [{ path: opts.path, message: `${market.code} is not configured on this gateway (prices.regions: ${regions})` }] });
  }
  const retry = { 'Retry-After': String(PRICES_RETRY_AFTER_S) };
  if (lastEndMs === null) {
    return new HttpProblem(503, `no day-ahead prices are stored for ${market.code} yet; retry once the price sync (or a CSV import) has stored some`, { headers: retry });
  }
  const need = opts.need;
  const today = localDayOf(market.timeZone, access.nowMs());
  if (need && lastEndMs <= need.fromMs && localDayOf(market.timeZone, need.toMs - 1) <= today) {
    const lastDay = isoDate(localDayOf(market.timeZone, lastEndMs - 1));
    return new HttpProblem(
      503,
      `the stored ${market.code} day-ahead prices end with ${lastDay} (the last stored day, ${market.timeZone}; last period ends ${formatUtc(lastEndMs)}); prices from ${formatUtc(need.fromMs)} on are not stored yet; retry once the price sync has stored them`,
      { headers: retry },
    );
  }
  return undefined;
}
