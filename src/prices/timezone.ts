// Wall-clock arithmetic in IANA time zones with nothing but Intl, so market days can
// have 23 or 25 hours. Pure apart from the (deterministic) Intl time-zone database.

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
const offsetCache = new Map<string, Map<number, number>>();
/** Offsets are looked up per quarter-hour slot: every real zone changes offset on a quarter-hour. */
const SLOT_MS = 15 * MINUTE_MS;

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export interface WallTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

/** The local wall time of a UTC instant (from the cached offset: no Intl call per instant). */
export function wallTime(timeZone: string, utcMs: number): WallTime {
  const d = new Date(utcMs + offsetMs(timeZone, utcMs));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
}

function intlWallTime(timeZone: string, utcMs: number): WallTime {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(utcMs))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

/** Local time minus UTC at an instant, in ms (e.g. +3,600,000 for CET, +7,200,000 for CEST). */
export function offsetMs(timeZone: string, utcMs: number): number {
  let cache = offsetCache.get(timeZone);
  if (!cache) {
    cache = new Map();
    offsetCache.set(timeZone, cache);
  }
  // Per UTC day: the offset when it is the same at both ends of the day (no change that
  // day, the common case), else NaN and the quarter-hour slot is looked up.
  const dayKey = -1 - Math.floor(utcMs / DAY_MS);
  let day = cache.get(dayKey);
  if (day === undefined) {
    const start = (-1 - dayKey) * DAY_MS;
    const a = slotOffset(timeZone, cache, start);
    day = a === slotOffset(timeZone, cache, start + DAY_MS - SLOT_MS) ? a : Number.NaN;
    cache.set(dayKey, day);
  }
  return Number.isNaN(day) ? slotOffset(timeZone, cache, utcMs) : day;
}

function slotOffset(timeZone: string, cache: Map<number, number>, utcMs: number): number {
  const slot = Math.floor(utcMs / SLOT_MS);
  let offset = cache.get(slot);
  if (offset === undefined) {
    const slotStart = slot * SLOT_MS;
    const w = intlWallTime(timeZone, slotStart);
    offset = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - slotStart;
    cache.set(slot, offset);
  }
  return offset;
}

/**
 * The UTC instants at which the local wall clock shows the given time: none in a
 * spring-forward gap, two in an autumn overlap (earlier first), one otherwise.
 * `wallMs` is the wall time encoded as if it were UTC (Date.UTC of its fields).
 */
export function wallToUtc(timeZone: string, wallMs: number): number[] {
  const candidates = new Set([offsetMs(timeZone, wallMs - 14 * HOUR_MS), offsetMs(timeZone, wallMs + 14 * HOUR_MS)]);
  const out: number[] = [];
  for (const o of candidates) {
    const t = wallMs - o;
    if (offsetMs(timeZone, t) === o) out.push(t);
  }
  return out.sort((a, b) => a - b);
}

/** UTC start of the local calendar day `YYYY-MM-DD`. */
export function localDayStartMs(timeZone: string, isoDate: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate);
  if (!m) throw new RangeError(`not a date (YYYY-MM-DD): ${isoDate}`);
  const wall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  const t = wallToUtc(timeZone, wall);
  // No zone we support skips midnight; if one did, its day starts at the end of the gap.
  return t.length > 0 ? t[0] : wall - offsetMs(timeZone, wall + 12 * HOUR_MS);
}

/** The local calendar date (YYYY-MM-DD) of an instant. */
export function localDate(timeZone: string, utcMs: number): string {
  return new Date(utcMs + offsetMs(timeZone, utcMs)).toISOString().slice(0, 10);
}

/** UTC start of the local day containing an instant. */
export function startOfLocalDayMs(timeZone: string, utcMs: number): number {
  return localDayStartMs(timeZone, localDate(timeZone, utcMs));
}

/** UTC start of the local day `days` after the local day that starts at `dayStartMs` (23/24/25 h apart). */
export function addLocalDays(timeZone: string, dayStartMs: number, days: number): number {
  const w = wallTime(timeZone, dayStartMs + 12 * HOUR_MS);
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + days));
  return localDayStartMs(timeZone, d.toISOString().slice(0, 10));
}

/** Adds whole calendar days to an ISO date. */
export function addDays(isoDate: string, days: number): string {
  const d = new Date(`${isoDate}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}
