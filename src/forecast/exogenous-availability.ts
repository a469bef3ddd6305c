// Which exogenous series a live forecast may use (pure). A series is used only if it was
// known at the forecast's origin: every value fetched at or before the origin instant, the
// target day (the day after the origin day, D+1) complete, and enough of the training
// window covered to fit on. The load forecast decides: without it the forecast is price
// only, and says why. The calibration origins before the last one read each day's series
// as known one day ahead, as the CSV backtests do (docs/forecast-evaluation.md).
import { dayComplete, toDayMatrix, type SeriesPoint } from './day-matrix.js';
import { isoDate } from './local-days.js';

/** A stored value with the instant it was fetched (when the gateway first knew it). */
export interface PublishedPoint extends SeriesPoint {
  readonly fetchedAtMs: number;
}

export interface ExogenousChoice {
  /** Series to use, in the order given, restricted to what was fetched by the origin; undefined = price only. */
  readonly inputs?: Readonly<Record<string, SeriesPoint[]>>;
  readonly used: readonly string[];
  /** Why the forecast is price only, or which series were left out; '' when all were used. */
  readonly note: string;
}

/** Share of the training window's days a series must cover to be used. */
const MIN_HISTORY_SHARE = 0.8;

export function chooseExogenous(args: {
  readonly timeZone: string;
  /** Series name -> points with fetch times; the first name is the one that decides (load). */
  readonly series: Readonly<Record<string, readonly PublishedPoint[]>>;
  readonly originMs: number;
  /** D+1 of the last origin. */
  readonly targetDay: number;
  /** First day of the longest training window. */
  readonly windowFirstDay: number;
  readonly slots: number;
}): ExogenousChoice {
  const names = Object.keys(args.series);
  if (names.length === 0) return { used: [], note: 'price only: no exogenous series stored' };
  const inputs: Record<string, SeriesPoint[]> = {};
  const left: string[] = [];
  for (const name of names) {
    const known = asModelled(args.series[name].filter((p) => p.fetchedAtMs <= args.originMs), args.slots);
    const m = toDayMatrix(args.timeZone, known, args.windowFirstDay, args.targetDay, args.slots);
    if (!dayComplete(m, args.targetDay)) {
      left.push(`no ${name} forecast for ${isoDate(args.targetDay)} fetched by the origin`);
      continue;
    }
    let covered = 0;
    for (let d = args.windowFirstDay; d < args.targetDay; d++) if (dayComplete(m, d)) covered++;
    const span = args.targetDay - args.windowFirstDay;
    const share = span <= 0 ? 1 : covered / span;
    if (share < MIN_HISTORY_SHARE) {
      left.push(`${name} covers ${Math.round(share * 100)} % of the training window (needs ${MIN_HISTORY_SHARE * 100} %)`);
      continue;
    }
    inputs[name] = known.map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.value }));
  }
  const decisive = names[0];
  if (!(decisive in inputs)) return { used: [], note: `price only: ${left.join('; ')}` };
  const used = Object.keys(inputs);
  return { inputs, used, note: left.length === 0 ? '' : `left out: ${left.join('; ')}` };
}

const HOUR_MS = 3_600_000;

/**
 * For an hourly model, a quarter-hour series is read as the history files hold it (and as
 * the evaluated figures used it): the first quarter-hour of each hour stands for the hour,
 * not the hour's mean (../shared/data README). European zones' offsets are whole hours, so
 * a UTC hour start is a local one. Finer models take the series as published.
 */
function asModelled<P extends SeriesPoint>(points: readonly P[], slots: number): P[] {
  if (slots !== 24) return [...points];
  const out: P[] = [];
  for (const p of points) {
    if (p.durationS >= 3600) out.push(p);
    else if (p.startMs % HOUR_MS === 0) out.push({ ...p, durationS: 3600 });
  }
  return out;
}
