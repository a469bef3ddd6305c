// Recorded day-ahead prices moved onto the demo's dates. Pure: periods in, periods out.
//
// The demo ships eight weeks of real NL prices (config/demo-prices/, with their source).
// To show a forecast, a plan and a priced session on today's dates, each recorded local day
// is moved to a day of the last weeks up to today, by whole weeks of the calendar so that a
// Monday stays a Monday (weekday and weekend prices differ), and each period keeps its
// local wall-clock time: a recorded 18:00 is today's 18:00, in summer and winter time.
// The recording's last days are dropped until its last weekday is today's; today is the
// last priced day, as before the day-ahead auction (tomorrow is forecast).
import { dayOfWeek, localDayOf, localMidnightMs, localMinuteOfDay, localTimeMs } from '../forecast/local-days.js';

export interface MovablePeriod {
  readonly startMs: number;
  readonly durationS: number;
}

export interface MovedRecording {
  /** Days added to every recorded local day (a multiple of 7). */
  readonly shiftDays: number;
  /** The recorded local days used, first and last (local day numbers). */
  readonly firstRecordedDay: number;
  readonly lastRecordedDay: number;
}

/**
 * The shift that ends the recording on `today` (a local day number) at the same weekday:
 * its last day with today's weekday becomes today. Null when the recording holds less
 * than a week.
 */
export function shiftOntoToday(firstRecordedDay: number, lastRecordedDay: number, today: number): MovedRecording | null {
  if (lastRecordedDay - firstRecordedDay < 6) return null;
  const back = (dayOfWeek(lastRecordedDay) - dayOfWeek(today) + 7) % 7;
  const last = lastRecordedDay - back;
  return { shiftDays: today - last, firstRecordedDay, lastRecordedDay: last };
}

/**
 * Moves periods (prices or exogenous points) of the recorded days by `moved.shiftDays`
 * local days, keeping each one's wall-clock time in `timeZone`. Periods after the last
 * recorded day used are left out; where the target day has fewer hours (spring forward),
 * a period that lands on an instant already taken is left out too.
 */
export function moveRecording<P extends MovablePeriod>(periods: readonly P[], timeZone: string, moved: MovedRecording): P[] {
  const out: P[] = [];
  const taken = new Set<number>();
  for (const p of periods) {
    const day = localDayOf(timeZone, p.startMs);
    if (day < moved.firstRecordedDay || day > moved.lastRecordedDay) continue;
    const target = day + moved.shiftDays;
    const startMs = localTimeMs(timeZone, target, localMinuteOfDay(timeZone, p.startMs));
    // A wall time the target day does not have (spring forward) lands on one already taken
    // or past the day's end: not kept. The autumn day's second 02:00 stays without a price.
    if (localDayOf(timeZone, startMs) !== target || startMs + p.durationS * 1000 > localMidnightMs(timeZone, target + 1) || taken.has(startMs)) continue;
    taken.add(startMs);
    out.push({ ...p, startMs });
  }
  return out.sort((a, b) => a.startMs - b.startMs);
}

/** First and last local day of a recording's periods. */
export function recordedDays(periods: readonly MovablePeriod[], timeZone: string): { first: number; last: number } | null {
  if (periods.length === 0) return null;
  let first = Infinity;
  let last = -Infinity;
  for (const p of periods) {
    first = Math.min(first, localDayOf(timeZone, p.startMs));
    last = Math.max(last, localDayOf(timeZone, p.startMs + p.durationS * 1000 - 1));
  }
  return { first, last };
}

