// Loads REAL recorded NL day-ahead prices into a gateway database for HTTP tests.
// Source: ../shared/data/prices/nl-2025-quarterhour-local-utc.csv (EUR/kWh with a decimal
// comma; the UTC column makes DST unambiguous). Before 2025-10-01 (CET) the file repeats
// each hourly price per quarter; those are folded back to native 60-min periods.
import { readFileSync } from 'node:fs';
import type { PricePeriod } from '../../src/domain.js';
import type { Db } from '../../src/store/db.js';
import { sharedData } from './shared-data.js';

const QUARTER_HOURS_FROM_MS = Date.UTC(2025, 8, 30, 22);

export function readNl2025Periods(): PricePeriod[] {
  const out: PricePeriod[] = [];
  const lines = readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8').split('\n').slice(1);
  for (const line of lines) {
    if (line.trim() === '') continue;
    const [, utc, price] = line.split(';');
    const startMs = Date.parse(`${utc.replaceAll('"', '').replace(' ', 'T')}Z`);
    const pricePerMwh = Math.round(Number(price.replace(',', '.')) * 1_000_000) / 1000;
    if (startMs >= QUARTER_HOURS_FROM_MS) out.push({ marketArea: 'NL', startMs, durationS: 900, pricePerMwh });
    else if (startMs % 3_600_000 === 0) out.push({ marketArea: 'NL', startMs, durationS: 3600, pricePerMwh });
  }
  return out;
}

export function loadNl2025Prices(db: Db): number {
  const periods = readNl2025Periods();
  const insert = db.prepare("INSERT OR REPLACE INTO prices (market_area, start_ms, duration_s, price_per_mwh, currency, source, fetched_at_ms) VALUES (?, ?, ?, ?, 'EUR', 'csv:nl-2025', 0)");
  db.transaction(() => {
    for (const p of periods) insert.run(p.marketArea, p.startMs, p.durationS, p.pricePerMwh);
  })();
  return periods.length;
}
