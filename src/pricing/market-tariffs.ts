// The configured tariffs by market area code (config `tariffs`), each in its market's time
// zone. A market without an entry has none: it is priced on the day-ahead price alone.
import type { TariffConfig } from '../config/types.js';
import { marketByCode } from '../prices/markets.js';
import { tariffFromConfig, type Tariff } from './tariff.js';

export type TariffOf = (marketArea: string) => Tariff | undefined;

/** Unknown market codes are refused by the config's checks (config/load.ts); here they are skipped. */
export function marketTariffs(config: Readonly<Record<string, TariffConfig>> | undefined): TariffOf {
  const byMarket = new Map<string, Tariff>();
  for (const [code, entry] of Object.entries(config ?? {})) {
    const market = marketByCode(code);
    if (market) byMarket.set(market.code, tariffFromConfig(entry, market.timeZone));
  }
  return (marketArea) => {
    const market = marketByCode(marketArea);
    return market ? byMarket.get(market.code) : undefined;
  };
}
