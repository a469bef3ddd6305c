// `prices import`: reads a CSV file, parses it completely, then writes it in one
// transaction, so a bad row leaves the store untouched.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { PriceStore } from '../store/prices.js';
import { requireMarket } from './markets.js';
import { parsePriceCsv, type CsvImportReport, type CsvParseOptions } from './sources/csv.js';

export interface ImportResult {
  readonly marketArea: string;
  readonly source: string;
  readonly written: number;
  readonly report: CsvImportReport;
}

export function importPriceFile(store: PriceStore, file: string, marketCode: string, nowMs: number, options: CsvParseOptions = {}): ImportResult {
  const market = requireMarket(marketCode);
  const { periods, report } = parsePriceCsv(readFileSync(file, 'utf8'), market, options);
  const source = `csv:${basename(file)}`;
  const written = store.upsert(periods, { source, fetchedAtMs: nowMs });
  return { marketArea: market.code, source, written, report };
}

const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString().replace(':00.000Z', 'Z'));

/** Human-readable summary of an import, one finding per line. */
export function formatImportResult(r: ImportResult): string {
  const rep = r.report;
  const lines = [
    `${r.source} -> ${r.marketArea}: ${rep.rows} rows (${rep.layout}), ${r.written} periods stored, ${iso(rep.firstStartMs)} .. ${iso(rep.lastEndMs)}`,
  ];
  if (rep.mergedRows > 0) lines.push(`  ${rep.mergedRows} rows merged: finer rows repeating one price stored as the market's native period`);
  if (rep.roundedRepeats > 0) lines.push(`  ${rep.roundedRepeats} native period(s) whose repeated rows differ by rounding only (<= 0.05 EUR/MWh): priced by their first row`);
  if (rep.emptyLines > 0) lines.push(`  ${rep.emptyLines} empty line(s) skipped`);
  if (rep.forced24HourDays.length > 0) lines.push(`  ${rep.forced24HourDays.length} DST day(s) forced to 24 rows by the file: ${rep.forced24HourDays.join(', ')}`);
  for (const d of rep.dropped) lines.push(`  line ${d.line} (${d.localTime} local) not imported: ${d.reason}`);
  for (const g of rep.missing) lines.push(`  no price ${iso(g.fromMs)} .. ${iso(g.toMs)} (${(g.toMs - g.fromMs) / 3_600_000} h)`);
  return lines.join('\n');
}
