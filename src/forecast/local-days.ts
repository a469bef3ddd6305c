// Local calendar days of a market time zone, as plain integers (days since 1970-01-01 of
// the local date), and their UTC boundaries. Day boundaries follow the market time zone,
// so a day lasts 23, 24 or 25 hours.

import { offsetMs } from '../prices/timezone.js';

const MS_PER_DAY = 86_400_000;

/** Offset of local time from UTC at an instant, in minutes (e.g. +120 in CEST). */
export function utcOffsetMinutes(timeZone: string, atMs: number): number {
  return offsetMs(timeZone, atMs) / 60_000;
}

/** Local day number (days since 1970-01-01 of the local calendar) of an instant. */
export function localDayOf(timeZone: string, atMs: number): number {
  return Math.floor((atMs + utcOffsetMinutes(timeZone, atMs) * 60_000) / MS_PER_DAY);
}

/** Minutes since local midnight (wall clock) of an instant. */
export function localMinuteOfDay(timeZone: string, atMs: number): number {
  const local = atMs + utcOffsetMinutes(timeZone, atMs) * 60_000;
  return Math.floor((local - Math.floor(local / MS_PER_DAY) * MS_PER_DAY) / 60_000);
}

/** UTC instant of local midnight starting the given local day. */
export function localMidnightMs(timeZone: string, day: number): number {
  const wall = day * MS_PER_DAY;
  // Two fixed-point steps settle the offset; midnight is never inside a DST gap in Europe.
  let guess = wall - utcOffsetMinutes(timeZone, wall) * 60_000;
  guess = wall - utcOffsetMinutes(timeZone, guess) * 60_000;
  return guess;
}

/** UTC instant of a local wall-clock time (minutes after midnight) on a local day. */
export function localTimeMs(timeZone: string, day: number, minuteOfDay: number): number {
  const wall = day * MS_PER_DAY + minuteOfDay * 60_000;
  let guess = wall - utcOffsetMinutes(timeZone, wall) * 60_000;
  guess = wall - utcOffsetMinutes(timeZone, guess) * 60_000;
  return guess;
}

/** 0 = Sunday .. 6 = Saturday. */
export function dayOfWeek(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** `YYYY-MM-DD` of a local day number. */
export function isoDate(day: number): string {
  return new Date(day * MS_PER_DAY).toISOString().slice(0, 10);
}

/** Local day number of a `YYYY-MM-DD` date. */
export function dayFromIso(date: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) throw new Error(`not a date: ${date}`);
  return Math.floor(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / MS_PER_DAY);
}

/** Periods of `intervalS` seconds covering one local day, as UTC starts (92/96/100 at 900 s on DST days). */
export function periodStartsOfDay(timeZone: string, day: number, intervalS: number): number[] {
  const start = localMidnightMs(timeZone, day);
  const end = localMidnightMs(timeZone, day + 1);
  const out: number[] = [];
  for (let t = start; t < end; t += intervalS * 1000) out.push(t);
  return out;
}

/** ISO 8601 with the local offset, e.g. `2026-03-29T03:00:00+02:00`. */
export function formatLocalIso(timeZone: string, atMs: number): string {
  const offset = utcOffsetMinutes(timeZone, atMs);
  const local = new Date(atMs + offset * 60_000).toISOString().slice(0, 19);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${local}${sign}${hh}:${mm}`;
}
