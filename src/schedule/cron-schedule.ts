// Minute schedules written as five-field cron expressions (`*/15 13-17 * * *`), matched
// against a zone's wall clock from prices/timezone.ts. Replaces node-cron, which builds an
// Intl.DateTimeFormat per schedule (~11.5 MB of ICU data on Node 24, docs/architecture.md
// "Memory"). Each field takes `*`, N, A-B, and /S steps, comma lists; no names, seconds,
// L/W/#, and day-of-month together with day-of-week is refused (cron ORs them, a trap).
// A wall minute skipped by a clock change never fires; one repeated fires twice. Pure.
import { wallTime } from '../prices/timezone.js';

const MINUTE_MS = 60_000;

/** Allowed values of each field: minute, hour, day of month, month, day of week (0 = Sunday). */
const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
] as const;

export interface CronSchedule {
  readonly expression: string;
  readonly timeZone: string;
  /** Allowed values per field; day of week 7 is folded into 0. */
  readonly allowed: readonly (ReadonlySet<number> | null)[];
}

function parseField(text: string, field: (typeof FIELDS)[number]): Set<number> | null {
  if (text === '*') return null;
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^(?:(\*)|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!m) throw new RangeError(`"${part}" in the ${field.name} field is not N, A-B, * or one of them with /S`);
    const from = m[1] ? field.min : Number(m[2]);
    const to = m[1] ? field.max : m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? field.max : from;
    const step = m[4] !== undefined ? Number(m[4]) : 1;
    if (from < field.min || to > field.max || from > to || step < 1) throw new RangeError(`"${part}" in the ${field.name} field is outside ${field.min}-${field.max}`);
    for (let v = from; v <= to; v += step) out.add(field.name === 'day of week' && v === 7 ? 0 : v);
  }
  return out;
}

/** Parses a five-field expression; throws a RangeError saying what is wrong. */
export function parseCron(expression: string, timeZone: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new RangeError(`"${expression}" is not a cron expression: five fields (minute hour day-of-month month day-of-week) expected, got ${parts.length}`);
  let allowed: (Set<number> | null)[];
  try {
    allowed = parts.map((p, i) => parseField(p, FIELDS[i]!));
  } catch (e) {
    throw new RangeError(`"${expression}" is not a supported cron expression: ${(e as Error).message}`);
  }
  if (allowed[2] && allowed[4]) throw new RangeError(`"${expression}": restrict day of month or day of week, not both`);
  // The zone is checked now, so a bad one fails at start rather than at the first tick.
  wallTime(timeZone, Date.now());
  return { expression, timeZone, allowed };
}

/** Whether the schedule fires in the wall-clock minute containing `utcMs`. */
export function firesAt(schedule: CronSchedule, utcMs: number): boolean {
  const w = wallTime(schedule.timeZone, utcMs);
  const weekday = new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay();
  const values = [w.minute, w.hour, w.day, w.month, weekday];
  return schedule.allowed.every((set, i) => set === null || set.has(values[i]!));
}

/** The first whole minute at or after `atMs` at which the schedule fires, within `withinMs`; else null. */
export function nextRunMs(schedule: CronSchedule, atMs: number, withinMs = 400 * 86_400_000): number | null {
  // Every zone we support has whole-minute offsets, so UTC minute starts are wall minute starts.
  for (let t = Math.ceil(atMs / MINUTE_MS) * MINUTE_MS; t <= atMs + withinMs; t += MINUTE_MS) {
    if (firesAt(schedule, t)) return t;
  }
  return null;
}

export interface ScheduledJob {
  /** When the job runs next (null once stopped or when it never fires). */
  nextRun(): Date | null;
  stop(): void;
}

/** Longest single timer: re-armed after, so a far-off run or a stepped system clock stays exact. */
const MAX_TIMER_MS = 3_600_000;

/**
 * Runs `run` at every minute the schedule fires after now (by `now`, the injected clock). A run that
 * throws is reported to `onError` and does not stop the schedule.
 */
export function scheduleCron(schedule: CronSchedule, run: () => void, options: { now: () => number; onError: (err: unknown) => void }): ScheduledJob {
  // Strictly after the start, as cron does: a job started on a firing minute waits for the next.
  let next: number | null = nextRunMs(schedule, options.now() + 1);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const arm = () => {
    if (stopped || next === null) return;
    timer = setTimeout(tick, Math.min(Math.max(next - options.now(), 0), MAX_TIMER_MS));
  };
  const tick = () => {
    if (stopped || next === null) return;
    const now = options.now();
    if (now >= next) {
      try {
        run();
      } catch (err) {
        options.onError(err);
      }
      next = nextRunMs(schedule, Math.max(now, next + 1));
    }
    arm();
  };
  arm();
  return {
    nextRun: () => (stopped || next === null ? null : new Date(next)),
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
