// Wall-clock arithmetic in the market time zones, so market days can have 23 or 25 hours.
// Offsets come from zone-offset.ts (the EU summer-time rule over a table of zones), not
// Intl: its time-zone data costs ~11.5 MB of RSS on Node 24 (docs/architecture.md
// "Memory"). A zone outside src/prices/zones.json is refused with a RangeError. Pure.
import { zoneOffsetMs } from './zone-offset.js';

const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export interface WallTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

/** The local wall time of a UTC instant. */
export function wallTime(timeZone: string, utcMs: number): WallTime {
  const d = new Date(utcMs + offsetMs(timeZone, utcMs));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
}

/** Local time minus UTC at an instant, in ms (e.g. +3,600,000 for CET, +7,200,000 for CEST). */
export function offsetMs(timeZone: string, utcMs: number): number {
  return zoneOffsetMs(timeZone, utcMs);
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
