// CSV price files -> native price periods. Pure: text in, periods and a report out.
//
// Layouts recognised from the header line:
//
// 1. `entsoe-history`: ENTSO-E hourly history as published by Kasra-Aliyon/Deepforkit:
//    `,Price_DA,Load_DA,Load_AC,Gen_SC,Sol_DA,Won_DA[,Woff_DA]`; first column the local
//    time of the market (`1/5/2015 0:00` or `2015-01-05 00:00:00`), EUR/MWh, trailing
//    empty `,,,,,,` lines. Every local day is forced to 24 rows: the spring-forward row
//    at 02:00 (a time that does not exist; the file repeats 01:00) is dropped, and the
//    single autumn 02:00 row is the MEAN of the two 02:00 hours (half-cent values,
//    x.5 MW loads), a price of neither hour, so both hours are left empty and reported.
// 2. `nl-eur-kwh`: Dutch price-site export: `datum;prijs_excl_belastingen` (local time)
//    or `datum_nl;datum_utc;prijs_excl_belastingen`; `;` separated, quoted timestamps,
//    EUR/kWh with a decimal comma. With a UTC column, it is used. Local-only files: an
//    autumn 02:00 that occurs once cannot say which of the two 02:00 hours it is, so by
//    default it is left out and both hours are reported missing (option
//    `singleAutumnHour: 'earlier' | 'later'` assigns it when the user knows).
// 3. `generic` (documented for users): header with
//      start          ISO 8601 with offset or Z (`2025-10-01T00:00:00+02:00`, `...Z`),
//                     or `start_utc` as `YYYY-MM-DD HH:MM[:SS]` in UTC;
//      price_per_mwh  EUR/MWh   (or price_per_kwh, EUR/kWh);
//      duration_s     optional period length in seconds (else the row spacing);
//      currency       optional ISO 4217 code per row (EUR).
//    Separator `,` or `;`; with `;` a decimal comma is accepted.
//
// Currency: layouts 1 and 2 are EUR by definition; a generic file says so per row or not
// at all. A file whose currency is not the market's (registry) is refused with the line,
// since its prices would be stored as if they were in the market's currency.
//
// Rows finer than the market's native resolution whose prices repeat within a native
// period (the 2025 file's quarter-hours before the 15-minute switch) are stored as one
// native period. That file sometimes writes an hour's first quarter with 5 decimals and
// the repeats rounded to 4 (0,079110 then 0,079100 x3, in September 2025): repeats that
// differ by no more than that rounding (0.05 EUR/MWh) still form one hour, priced by the
// first row. A bad row fails the whole file with its line number.
import type { PricePeriod } from '../../domain.js';
import { nativeResolutionS, type Market } from '../markets.js';
import { periodStartMs } from '../resample.js';
import { localDate, wallToUtc } from '../timezone.js';

export type CsvLayout = 'entsoe-history' | 'nl-eur-kwh' | 'generic';

export class CsvImportError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(line > 0 ? `line ${line}: ${message}` : message);
    this.name = 'CsvImportError';
  }
}

export interface DroppedRow {
  readonly line: number;
  readonly localTime: string;
  /** The row's price, EUR/MWh, where it had a readable one. */
  readonly pricePerMwh?: number;
  readonly reason: string;
}

export interface CsvImportReport {
  readonly layout: CsvLayout;
  /** Data rows read (blank and all-empty lines not counted). */
  readonly rows: number;
  readonly emptyLines: number;
  /** Native periods produced. */
  readonly periods: number;
  readonly firstStartMs: number | null;
  readonly lastEndMs: number | null;
  /** Rows not turned into prices, each with why. */
  readonly dropped: readonly DroppedRow[];
  /** Local DST-change days the file forces to 24 rows (entsoe-history). */
  readonly forced24HourDays: readonly string[];
  /** Holes between the first and last period (e.g. the missing autumn hour). */
  readonly missing: ReadonlyArray<{ fromMs: number; toMs: number }>;
  /** Rows merged into coarser native periods (repeated prices). */
  readonly mergedRows: number;
  /** Native periods whose repeated rows differed by rounding only (nl-eur-kwh), priced by their first row. */
  readonly roundedRepeats: number;
}

/** One period of an ENTSO-E history file with the exogenous series of its row (MW; the file writes 0 where missing). */
export interface HistoryRow {
  readonly line: number;
  readonly startMs: number;
  readonly durationS: number;
  readonly pricePerMwh: number;
  /** Load_DA, Load_AC, Gen_SC, Sol_DA, Won_DA, Woff_DA, ... as in the header; null = empty cell. */
  readonly series: Readonly<Record<string, number | null>>;
}

export interface CsvParseOptions {
  /**
   * Local-time-only files (nl-eur-kwh without datum_utc): what a 02:00 row that occurs
   * once on an autumn day is. Default 'drop' (report it; never guess).
   */
  readonly singleAutumnHour?: 'drop' | 'earlier' | 'later';
}

export interface ParsedPriceCsv {
  readonly periods: PricePeriod[];
  readonly report: CsvImportReport;
  /** For entsoe-history files: every stored period with its exogenous columns. */
  readonly history?: HistoryRow[];
}

interface RawRow {
  line: number;
  startMs: number;
  durationS?: number;
  pricePerMwh: number;
  /** The row's time as written, or a wall time (Date.UTC of its fields) formatted only when reported. */
  localTime: string | number;
  series?: Record<string, number | null>;
}

/** Splits one CSV line; double-quoted fields may contain the separator and "" escapes. */
export function splitCsvLine(line: string, sep: string): string[] {
  if (!line.includes('"')) return line.split(sep);
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === sep) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function parseNumber(raw: string, decimalComma: boolean, line: number, what: string): number {
  let s = raw.trim();
  if (decimalComma) s = s.replace(',', '.');
  if (s === '' || !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) throw new CsvImportError(line, `${what} "${raw}" is not a number`);
  return Number(s);
}

const MDY = /^(\d{1,2})\/(\d{1,2})\/(\d{4}) (\d{1,2}):(\d{2})(?::(\d{2}))?$/;
const YMD = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;
const ISO_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** Parses a naive wall time (`M/D/YYYY H:MM` or `YYYY-MM-DD HH:MM[:SS]`) to Date.UTC of its fields. */
function parseWall(raw: string, line: number): number {
  const s = raw.trim();
  let y: number, mo: number, d: number, h: number, mi: number, se: number;
  let m = MDY.exec(s);
  if (m) [mo, d, y, h, mi, se] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  else if ((m = YMD.exec(s))) [y, mo, d, h, mi, se] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  else throw new CsvImportError(line, `time "${raw}" is not M/D/YYYY H:MM or YYYY-MM-DD HH:MM[:SS]`);
  const t = Date.UTC(y, mo - 1, d, h, mi, se);
  const back = new Date(t);
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || se > 59) throw new CsvImportError(line, `time "${raw}" is not a valid date and time`);
  return t;
}

function parseIsoWithOffset(raw: string, line: number): number {
  const s = raw.trim();
  const m = ISO_OFFSET.exec(s);
  if (!m) throw new CsvImportError(line, `start "${raw}" must be ISO 8601 with an offset or Z (e.g. 2025-10-01T00:00:00+02:00)`);
  // Checked field by field: Date.parse rolls 2025-04-31 over to May 1 and reads 24:00 as the next day.
  const [y, mo, d, h, mi, se] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  const wall = Date.UTC(y, mo - 1, d, h, mi, se);
  const back = new Date(wall);
  const off = m[7] === 'Z' ? null : /^([+-])(\d{2}):?(\d{2})$/.exec(m[7]);
  const offH = off ? Number(off[2]) : 0;
  const offM = off ? Number(off[3]) : 0;
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || se > 59 || offH > 23 || offM > 59) {
    throw new CsvImportError(line, `start "${raw}" is not a valid time`);
  }
  const fraction = /\.(\d+)/.exec(s.slice(16))?.[1];
  const ms = fraction ? Math.floor(Number(`0.${fraction}`) * 1000) : 0;
  return wall + ms - (off ? (off[1] === '-' ? -1 : 1) * (offH * 60 + offM) * 60_000 : 0);
}

function shownTime(r: RawRow): string {
  return typeof r.localTime === 'number' ? formatWall(r.localTime) : r.localTime;
}

function formatWall(wallMs: number): string {
  return new Date(wallMs).toISOString().slice(0, 16).replace('T', ' ');
}

export function detectLayout(header: string[]): CsvLayout {
  const names = header.map((h) => h.trim().toLowerCase());
  if (names[0] === '' && names.includes('price_da')) return 'entsoe-history';
  if (names.includes('prijs_excl_belastingen')) return 'nl-eur-kwh';
  if ((names.includes('start') || names.includes('start_utc')) && (names.includes('price_per_mwh') || names.includes('price_per_kwh'))) return 'generic';
  throw new CsvImportError(1, `unknown CSV layout (header "${header.join(',')}"); expected ENTSO-E history (,Price_DA,...), datum[_nl][;datum_utc];prijs_excl_belastingen, or start,price_per_mwh[,duration_s]`);
}

/** Resolves naive local wall times to UTC, tracking the autumn repeat (second 02:00 = later instant). */
class LocalResolver {
  private readonly seenAmbiguous = new Set<number>();
  constructor(private readonly timeZone: string) {}
  /** UTC instants for a wall time: [] in a spring gap, else the one it denotes. */
  resolve(wallMs: number): { utcMs: number | null; ambiguous: boolean } {
    const c = wallToUtc(this.timeZone, wallMs);
    if (c.length === 0) return { utcMs: null, ambiguous: false };
    if (c.length === 1) return { utcMs: c[0], ambiguous: false };
    if (this.seenAmbiguous.has(wallMs)) return { utcMs: c[1], ambiguous: true };
    this.seenAmbiguous.add(wallMs);
    return { utcMs: c[0], ambiguous: true };
  }
}

/**
 * Parses a price CSV for one market. Throws CsvImportError (with the line number) on the
 * first bad row; nothing is returned half-parsed.
 */
export function parsePriceCsv(text: string, market: Market, options: CsvParseOptions = {}): ParsedPriceCsv {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop(); // the final newline ends a line; it is not an empty line
  if (lines[0]?.charCodeAt(0) === 0xfeff) lines[0] = lines[0].slice(1);
  const sep = (lines[0] ?? '').includes(';') ? ';' : ',';
  const header = splitCsvLine(lines[0] ?? '', sep).map((h) => h.trim());
  const layout = detectLayout(header);
  const col = (name: string) => header.findIndex((h) => h.toLowerCase() === name);
  if (layout !== 'generic' && market.currency !== 'EUR') {
    throw new CsvImportError(1, `${layout} files are in EUR, but ${market.code}'s day-ahead prices are in ${market.currency} (src/prices/markets.json); nothing imported`);
  }
  const decimalComma = sep === ';';
  const dropped: DroppedRow[] = [];
  const forcedDays = new Set<string>();
  const raw: RawRow[] = [];
  let emptyLines = 0;
  const resolver = new LocalResolver(market.timeZone);
  const seriesNames = layout === 'entsoe-history' ? header.slice(2) : [];
  // Rows at an autumn wall time that occurs twice; one that the file has only once is dealt with below.
  const autumnRows: Array<{ line: number; wallMs: number }> = [];

  for (let i = 1; i < lines.length; i++) {
    const lineNo = i + 1;
    const text = lines[i];
    const fields = splitCsvLine(text, sep);
    if (text.trim() === '' || fields.every((f) => f.trim() === '')) {
      emptyLines++;
      continue;
    }
    if (fields.length < header.length) throw new CsvImportError(lineNo, `expected ${header.length} fields, found ${fields.length}`);
    if (layout === 'entsoe-history') {
      const wall = parseWall(fields[0], lineNo);
      const price = parseNumber(fields[1], false, lineNo, 'Price_DA');
      const series: Record<string, number | null> = {};
      seriesNames.forEach((name, k) => {
        const v = fields[k + 2].trim();
        const x = Number(v);
        series[name] = v === '' ? null : Number.isFinite(x) ? x : parseNumber(v, false, lineNo, name);
      });
      const { utcMs, ambiguous } = resolver.resolve(wall);
      if (utcMs === null) {
        forcedDays.add(formatWall(wall).slice(0, 10));
        dropped.push({ line: lineNo, localTime: formatWall(wall), pricePerMwh: price, reason: `does not exist in ${market.timeZone} (clocks spring forward); the file repeats the previous hour here` });
        continue;
      }
      if (ambiguous) autumnRows.push({ line: lineNo, wallMs: wall });
      raw.push({ line: lineNo, startMs: utcMs, durationS: 3600, pricePerMwh: price, localTime: wall, series });
    } else if (layout === 'nl-eur-kwh') {
      const iUtc = col('datum_utc');
      const iLocal = col('datum_nl') >= 0 ? col('datum_nl') : col('datum');
      const iPrice = col('prijs_excl_belastingen');
      if (iLocal < 0 && iUtc < 0) throw new CsvImportError(1, 'no datum, datum_nl or datum_utc column');
      const price = Math.round(parseNumber(fields[iPrice], true, lineNo, 'prijs_excl_belastingen') * 1e6) / 1e3; // EUR/kWh -> EUR/MWh
      let startMs: number;
      let localTime: string | number;
      if (iUtc >= 0) {
        startMs = parseWall(fields[iUtc], lineNo);
        localTime = iLocal >= 0 ? fields[iLocal].trim() : fields[iUtc].trim();
      } else {
        const wall = parseWall(fields[iLocal], lineNo);
        const { utcMs, ambiguous } = resolver.resolve(wall);
        if (ambiguous) autumnRows.push({ line: lineNo, wallMs: wall });
        if (utcMs === null) {
          dropped.push({ line: lineNo, localTime: formatWall(wall), pricePerMwh: price, reason: `does not exist in ${market.timeZone} (clocks spring forward)` });
          continue;
        }
        startMs = utcMs;
        localTime = wall;
      }
      raw.push({ line: lineNo, startMs, pricePerMwh: price, localTime });
    } else {
      const iStart = col('start');
      const iStartUtc = col('start_utc');
      const iMwh = col('price_per_mwh');
      const iKwh = col('price_per_kwh');
      const iDur = col('duration_s');
      const iCurrency = col('currency');
      if (iCurrency >= 0 && fields[iCurrency].trim().toUpperCase() !== market.currency.toUpperCase()) {
        throw new CsvImportError(lineNo, `currency "${fields[iCurrency].trim()}", but ${market.code}'s day-ahead prices are in ${market.currency} (src/prices/markets.json); nothing imported`);
      }
      const startMs = iStart >= 0 ? parseIsoWithOffset(fields[iStart], lineNo) : parseWall(fields[iStartUtc], lineNo);
      const price = iMwh >= 0 ? parseNumber(fields[iMwh], decimalComma, lineNo, 'price_per_mwh') : Math.round(parseNumber(fields[iKwh], decimalComma, lineNo, 'price_per_kwh') * 1e6) / 1e3;
      let durationS: number | undefined;
      if (iDur >= 0 && fields[iDur].trim() !== '') {
        durationS = parseNumber(fields[iDur], false, lineNo, 'duration_s');
        if (!Number.isInteger(durationS) || durationS <= 0 || 86400 % durationS !== 0) throw new CsvImportError(lineNo, `duration_s ${durationS} must divide a day (900, 1800, 3600, ...)`);
      }
      raw.push({ line: lineNo, startMs, durationS, pricePerMwh: price, localTime: fields[iStart >= 0 ? iStart : iStartUtc].trim() });
    }
  }

  // A 02:00 that occurs once on an autumn day: in entsoe-history it is the mean of both
  // 02:00 hours; in a local-only file it is one of them, but which one is unknown.
  if (autumnRows.length > 0) {
    const count = new Map<number, number>();
    for (const a of autumnRows) count.set(a.wallMs, (count.get(a.wallMs) ?? 0) + 1);
    const singles = new Map(autumnRows.filter((a) => count.get(a.wallMs) === 1).map((a) => [a.line, a.wallMs]));
    const choice = layout === 'entsoe-history' ? 'drop' : (options.singleAutumnHour ?? 'drop');
    for (let k = raw.length - 1; k >= 0; k--) {
      const wallMs = singles.get(raw[k].line);
      if (wallMs === undefined) continue;
      if (layout === 'entsoe-history') forcedDays.add(shownTime(raw[k]).slice(0, 10));
      if (choice === 'later') {
        raw[k].startMs = wallToUtc(market.timeZone, wallMs)[1];
      } else if (choice === 'drop') {
        const reason =
          layout === 'entsoe-history'
            ? 'the one 02:00 row of a 25-hour day is the mean of both 02:00 hours, a price of neither; both hours left empty'
            : 'this 02:00 occurs twice on this day but once in the file, and local time cannot say which hour it is; left out (singleAutumnHour=earlier|later assigns it)';
        dropped.push({ line: raw[k].line, localTime: shownTime(raw[k]), pricePerMwh: raw[k].pricePerMwh, reason });
        raw.splice(k, 1);
      }
    }
  }

  raw.sort((a, b) => a.startMs - b.startMs);
  for (let k = 1; k < raw.length; k++) {
    if (raw[k].startMs === raw[k - 1].startMs) throw new CsvImportError(raw[k].line, `time ${shownTime(raw[k])} repeats line ${raw[k - 1].line}`);
  }
  assignDurations(raw, market.timeZone);
  for (let k = 1; k < raw.length; k++) {
    const prevEnd = raw[k - 1].startMs + raw[k - 1].durationS! * 1000;
    if (raw[k].startMs < prevEnd) throw new CsvImportError(raw[k].line, `period at ${shownTime(raw[k])} overlaps the period of line ${raw[k - 1].line}`);
  }
  const { periods, mergedRows, roundedRepeats, keptRaw } = toNativePeriods(raw, market, layout === 'nl-eur-kwh' ? 0.05 : 0);

  const missing: Array<{ fromMs: number; toMs: number }> = [];
  for (let k = 1; k < periods.length; k++) {
    const prevEnd = periods[k - 1].startMs + periods[k - 1].durationS * 1000;
    if (periods[k].startMs > prevEnd) missing.push({ fromMs: prevEnd, toMs: periods[k].startMs });
  }
  const last = periods[periods.length - 1];
  const report: CsvImportReport = {
    layout,
    rows: raw.length + dropped.length,
    emptyLines,
    periods: periods.length,
    firstStartMs: periods[0]?.startMs ?? null,
    lastEndMs: last ? last.startMs + last.durationS * 1000 : null,
    dropped: dropped.sort((a, b) => a.line - b.line),
    forced24HourDays: [...forcedDays].sort(),
    missing,
    mergedRows,
    roundedRepeats,
  };
  const history =
    layout === 'entsoe-history'
      ? keptRaw.map((r) => ({ line: r.line, startMs: r.startMs, durationS: r.durationS!, pricePerMwh: r.pricePerMwh, series: r.series ?? {} }))
      : undefined;
  return history ? { periods, report, history } : { periods, report };
}

/** Rows without an explicit length get the most common spacing of their local day (else of the file). */
function assignDurations(raw: RawRow[], timeZone: string): void {
  const fileMode = modeOf(raw.slice(1).map((r, k) => (r.startMs - raw[k].startMs) / 1000));
  const byDay = new Map<string, number[]>();
  for (let k = 0; k < raw.length; k++) {
    if (raw[k].durationS !== undefined) continue;
    const day = localDate(timeZone, raw[k].startMs);
    let list = byDay.get(day);
    if (!list) byDay.set(day, (list = []));
    list.push(k);
  }
  for (const idx of byDay.values()) {
    const diffs: number[] = [];
    for (const k of idx) if (k + 1 < raw.length) diffs.push((raw[k + 1].startMs - raw[k].startMs) / 1000);
    const mode = modeOf(diffs.length >= 2 ? diffs : []) ?? fileMode ?? 3600;
    for (const k of idx) raw[k].durationS = mode;
  }
}

function modeOf(values: number[]): number | undefined {
  const count = new Map<number, number>();
  let best: number | undefined;
  let bestN = 0;
  for (const v of values) {
    if (v <= 0) continue;
    const n = (count.get(v) ?? 0) + 1;
    count.set(v, n);
    if (n > bestN) [best, bestN] = [v, n];
  }
  return best;
}

/** Merges complete runs of finer rows with one repeated price into the native period they fill. */
function toNativePeriods(raw: RawRow[], market: Market, toleranceMwh: number): { periods: PricePeriod[]; mergedRows: number; roundedRepeats: number; keptRaw: RawRow[] } {
  const periods: PricePeriod[] = [];
  const keptRaw: RawRow[] = [];
  let mergedRows = 0;
  let roundedRepeats = 0;
  const tolerance = toleranceMwh + 1e-9;
  let k = 0;
  while (k < raw.length) {
    const r = raw[k];
    const native = nativeResolutionS(market, r.startMs);
    const dur = r.durationS!;
    if (dur < native && native % dur === 0 && periodStartMs(market.timeZone, r.startMs, native) === r.startMs) {
      const n = native / dur;
      const group = raw.slice(k, k + n);
      const complete = group.length === n && group.every((g, j) => g.durationS === dur && g.startMs === r.startMs + j * dur * 1000 && Math.abs(g.pricePerMwh - r.pricePerMwh) <= tolerance);
      if (complete) {
        if (group.some((g) => g.pricePerMwh !== r.pricePerMwh)) roundedRepeats++;
        periods.push({ marketArea: market.code, startMs: r.startMs, durationS: native, pricePerMwh: r.pricePerMwh });
        keptRaw.push({ ...r, durationS: native });
        mergedRows += n - 1;
        k += n;
        continue;
      }
    }
    periods.push({ marketArea: market.code, startMs: r.startMs, durationS: dur, pricePerMwh: r.pricePerMwh });
    keptRaw.push(r);
    k++;
  }
  return { periods, mergedRows, roundedRepeats, keptRaw };
}
