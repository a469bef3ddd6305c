// The configured tariffs by market area code (config `tariffs`), each in its market's time
// zone, and which one is in force at an instant: the last whose valid_from (local midnight)
// is not after it. A market without an entry, or an instant before its first tariff, has
// none: it is priced on the day-ahead price alone.
import type { TariffConfig } from '../config/types.js';
import { marketByCode } from '../prices/markets.js';
import { tariffFromConfig, type Tariff } from './tariff.js';

/** The market's tariff in force at `atMs`, if any. */
export type TariffOf = (marketArea: string, atMs: number) => Tariff | undefined;

/** Unknown market codes and lists out of order are refused by the config's checks (config/load.ts). */
export function marketTariffs(config: Readonly<Record<string, readonly TariffConfig[]>> | undefined): TariffOf {
  const byMarket = new Map<string, Tariff[]>();
  for (const [code, list] of Object.entries(config ?? {})) {
    const market = marketByCode(code);
    if (market) byMarket.set(market.code, list.map((entry) => tariffFromConfig(entry, market.timeZone)).sort((a, b) => a.validFromMs - b.validFromMs));
  }
  return (marketArea, atMs) => {
    const market = marketByCode(marketArea);
    const list = market ? byMarket.get(market.code) : undefined;
    if (!list) return undefined;
    let inForce: Tariff | undefined;
    for (const t of list) if (t.validFromMs <= atMs) inForce = t;
    return inForce;
  };
}
