// `prices import`: reads a CSV file, parses it completely, then writes it in one
// transaction, so a bad row leaves the store untouched.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { ExogenousStore } from '../store/exogenous.js';
import { mergeExogenous } from './exogenous/exogenous-merge.js';
import type { PriceStore } from '../store/prices.js';
import { mergePrices, type PriceMergeReport } from './price-merge.js';
import { exogenousFromHistory, type ExogenousCsvReport } from './exogenous/csv.js';
import { requireMarket } from './markets.js';
import type { MergeOutcome, MergeRun } from './merge.js';
import { CsvImportError, parsePriceCsv, type CsvImportReport, type CsvParseOptions } from './sources/csv.js';

export interface ImportResult {
  readonly marketArea: string;
  readonly source: string;
  readonly written: number;
  readonly report: CsvImportReport;
  /** What the file's periods did to the stored ones. */
  readonly merge: PriceMergeReport;
  /** With `exogenous`: the file's Load_DA, Sol_DA, Won_DA, Woff_DA columns, and the rows they filled. */
  readonly exogenous?: ExogenousCsvReport & { readonly written: number };
}

export interface ImportOptions extends CsvParseOptions {
  /** Let the file replace finer stored prices and prices of a better source (`--replace`). */
  readonly replace?: boolean;
  /** Also import the exogenous columns of an ENTSO-E history file into this store (`--exogenous`). */
  readonly exogenous?: ExogenousStore;
}

export function importPriceFile(store: PriceStore, file: string, marketCode: string, nowMs: number, options: ImportOptions = {}): ImportResult {
  const market = requireMarket(marketCode);
  const { periods, report, history } = parsePriceCsv(readFileSync(file, 'utf8'), market, options);
  const source = `csv:${basename(file)}`;
  if (options.exogenous && !history) throw new CsvImportError(1, `--exogenous needs an ENTSO-E history file (,Price_DA,Load_DA,...); this one is ${report.layout}`);
  const exo = options.exogenous && history ? exogenousFromHistory(history, market.code, market.timeZone) : undefined;
  if (exo && exo.points.length === 0) throw new CsvImportError(1, 'the file has no Load_DA, Sol_DA, Won_DA or Woff_DA values');
  // Prices and exogenous columns in one transaction: a failure leaves both untouched.
  return store.transaction(() => {
    const merge = mergePrices(store, periods, { source, fetchedAtMs: nowMs }, { replace: options.replace });
    const written = exo && options.exogenous ? mergeExogenous(options.exogenous, exo.points, { source, fetchedAtMs: nowMs }).written : 0;
    return { marketArea: market.code, source, written: merge.written, report, merge, ...(exo ? { exogenous: { ...exo.report, written } } : {}) };
  });
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
  lines.push(...formatMerge(r.merge, requireMarket(r.marketArea).currency));
  if (r.exogenous) {
    const e = r.exogenous;
    const per = Object.entries(e.points).map(([k, n]) => `${k} ${n}`).join(', ');
    lines.push(`  exogenous: ${e.written} new point(s) stored (file: ${per}); stored values are kept`);
    for (const [k, n] of Object.entries(e.zeroDays)) lines.push(`  exogenous ${k}: ${n} local day(s) all 0 in the file, taken as missing`);
  }
  return lines.join('\n');
}

const MAX_RUNS_SHOWN = 20;

const WHAT: Record<Exclude<MergeOutcome, 'unchanged' | 'filled'>, string> = {
  corrected: 'corrected (same periods, another price)',
  refined: 'finer prices replaced coarser stored ones',
  replaced: 'replaced (--replace)',
  'kept-finer': 'not stored: finer prices are stored there (a coarser file only fills periods without a price; --replace replaces them)',
  'kept-better-source': 'not stored: the stored prices come from a better source (entsoe; --replace replaces them)',
  'kept-partial': 'not stored: finer periods that cover only part of a stored period',
  'kept-misaligned': 'not stored: overlaps stored periods on other boundaries',
};

const minutes = (s: number) => `${s / 60}-min`;

function describeRun(run: MergeRun, currency: string): string {
  const stored = run.storedPeriods === 0 ? '' : ` over ${run.storedPeriods} x ${run.storedDurationsS.map(minutes).join('/')} (${run.storedSources.join(', ')})`;
  const change = run.maxChangePerMwh === null || run.maxChangePerMwh === 0 ? '' : `, largest difference ${Math.round(run.maxChangePerMwh * 100) / 100} ${currency}/MWh`;
  return `    ${iso(run.fromMs)} .. ${iso(run.toMs)}: ${run.incomingPeriods} x ${minutes(run.incomingDurationS)}${stored}${change}`;
}

/** What the import did to prices already stored: one heading per outcome, then its runs. */
function formatMerge(m: PriceMergeReport, currency: string): string[] {
  const c = m.counts;
  const lines = [`  ${c.filled} new, ${c.unchanged} unchanged, ${c.corrected} corrected, ${c.refined} refining coarser ones, ${c.replaced} replaced, ${c['kept-finer'] + c['kept-better-source'] + c['kept-partial'] + c['kept-misaligned']} not stored`];
  for (const [outcome, what] of Object.entries(WHAT) as Array<[MergeOutcome, string]>) {
    const runs = m.runs.filter((r) => r.outcome === outcome);
    if (runs.length === 0) continue;
    lines.push(`  ${c[outcome]} period(s) ${what}:`);
    for (const run of runs.slice(0, MAX_RUNS_SHOWN)) lines.push(describeRun(run, currency));
    if (runs.length > MAX_RUNS_SHOWN) lines.push(`    ... and ${runs.length - MAX_RUNS_SHOWN} more stretch(es)`);
  }
  return lines;
}
