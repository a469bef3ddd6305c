// Exogenous columns of an ENTSO-E history file (Load_DA, Sol_DA, Won_DA, Woff_DA) as
// points, for offline backfill. The files write 0 where a value is missing: a zero load is
// missing (a zone never has none), and a local day on which a generation series is 0 in
// every row is missing too (solar is 0 every night, but no series is 0 all day unless the
// platform had nothing). The files hold the value of the first quarter-hour of each local
// hour where the platform published quarter-hours (shared data README), stored as hourly.
import type { HistoryRow } from '../sources/csv.js';
import { localDate } from '../timezone.js';
import { EXOGENOUS_SERIES_NAMES, HISTORY_COLUMNS, type ExogenousPoint, type ExogenousSeriesName } from './series.js';

export interface ExogenousCsvReport {
  /** Points per series taken from the file. */
  readonly points: Readonly<Partial<Record<ExogenousSeriesName, number>>>;
  /** Local days per series left out because the series was 0 (missing) all day. */
  readonly zeroDays: Readonly<Partial<Record<ExogenousSeriesName, number>>>;
}

export function exogenousFromHistory(rows: readonly HistoryRow[], marketArea: string, timeZone: string): { points: ExogenousPoint[]; report: ExogenousCsvReport } {
  const points: ExogenousPoint[] = [];
  const counts: Partial<Record<ExogenousSeriesName, number>> = {};
  const zeroDays: Partial<Record<ExogenousSeriesName, number>> = {};
  for (const series of EXOGENOUS_SERIES_NAMES) {
    const column = HISTORY_COLUMNS[series];
    const byDay = new Map<string, ExogenousPoint[]>();
    for (const r of rows) {
      const v = r.series[column];
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      if (series === 'load' && v === 0) continue;
      const day = localDate(timeZone, r.startMs);
      const list = byDay.get(day) ?? [];
      list.push({ marketArea, series, startMs: r.startMs, durationS: r.durationS, valueMw: v });
      byDay.set(day, list);
    }
    let n = 0;
    let zero = 0;
    for (const list of byDay.values()) {
      if (list.every((p) => p.valueMw === 0)) {
        zero++;
        continue;
      }
      points.push(...list);
      n += list.length;
    }
    if (n > 0) counts[series] = n;
    if (zero > 0) zeroDays[series] = zero;
  }
  return { points, report: { points: counts, zeroDays } };
}
