// The demo's prices: eight weeks of real NL day-ahead prices shipped in config/demo-prices/
// (source and licence in its README), moved onto the weeks up to today (recorded-prices.ts)
// and stored as `prices import` would store them.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isoDate, localDayOf } from '../forecast/local-days.js';
import { requireMarket } from '../prices/markets.js';
import { parsePriceCsv } from '../prices/sources/csv.js';
import type { Db } from '../store/db.js';
import { mergePrices } from '../prices/price-merge.js';
import { PriceStore } from '../store/prices.js';
import { moveRecording, recordedDays, shiftOntoToday } from './recorded-prices.js';

export const DEMO_PRICES_URL = new URL('../../config/demo-prices/nl-2023-04-03-to-05-28-entsoe-hourly.csv', import.meta.url);

export interface StoredDemoPrices {
  readonly marketArea: string;
  readonly periods: number;
  /** The local dates recorded and the ones they now stand for. */
  readonly recorded: { readonly from: string; readonly to: string };
  readonly movedTo: { readonly from: string; readonly to: string };
  readonly file: string;
}

export function storeDemoPrices(db: Db, nowMs: number): StoredDemoPrices {
  const market = requireMarket('NL');
  const file = fileURLToPath(DEMO_PRICES_URL);
  const { periods } = parsePriceCsv(readFileSync(file, 'utf8'), market);
  const days = recordedDays(periods, market.timeZone);
  const moved = days && shiftOntoToday(days.first, days.last, localDayOf(market.timeZone, nowMs));
  if (!moved) throw new Error(`${file}: less than a week of prices`);
  const onToday = moveRecording(periods, market.timeZone, moved);
  mergePrices(new PriceStore(db), onToday, { source: `csv:${basename(file)} (recorded ${isoDate(moved.firstRecordedDay)}..${isoDate(moved.lastRecordedDay)})`, fetchedAtMs: nowMs });
  return {
    marketArea: market.code,
    periods: onToday.length,
    recorded: { from: isoDate(moved.firstRecordedDay), to: isoDate(moved.lastRecordedDay) },
    movedTo: { from: isoDate(moved.firstRecordedDay + moved.shiftDays), to: isoDate(moved.lastRecordedDay + moved.shiftDays) },
    file: basename(file),
  };
}
