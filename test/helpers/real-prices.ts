// Loads REAL recorded NL day-ahead prices into a gateway database for HTTP tests and
// benchmarks, through the project's own CSV importer (src/prices/import.ts):
// ../shared/data/prices/nl-2025-quarterhour-local-utc.csv (hourly until 2025-09-30,
// quarter-hours from 2025-10-01; the file has no price for 2025-10-26 01:00-02:00Z) and,
// with `with2024`, nl-2024-hourly-local.csv.
import { readFileSync } from 'node:fs';
import { toDayMatrix, type DayMatrix, type SeriesPoint } from '../../src/forecast/day-matrix.js';
import { dayFromIso } from '../../src/forecast/local-days.js';
import { importPriceFile } from '../../src/prices/import.js';
import { requireMarket, type Market } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import type { Db } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { sharedData } from './shared-data.js';

export function loadNl2025Prices(db: Db, opts: { with2024?: boolean } = {}): number {
  const store = new PriceStore(db);
  let written = importPriceFile(store, sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'NL', 0).written;
  if (opts.with2024) written += importPriceFile(store, sharedData('prices/nl-2024-hourly-local.csv'), 'NL', 0).written;
  return written;
}

/**
 * Real NL prices of a shared-data file (path under ../shared/data) as the forecaster's
 * points, and their hourly day matrix over local days fromIso..toIso.
 */
export function nlHourlyDays(file: string, fromIso: string, toIso: string): { nl: Market; points: SeriesPoint[]; first: number; last: number; prices: DayMatrix } {
  const nl = requireMarket('NL');
  const points = parsePriceCsv(readFileSync(sharedData(file), 'utf8'), nl).periods.map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.pricePerMwh }));
  const first = dayFromIso(fromIso);
  const last = dayFromIso(toIso);
  return { nl, points, first, last, prices: toDayMatrix(nl.timeZone, points, first, last, 24) };
}
