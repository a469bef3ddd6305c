// UTC offsets of the time zones in zones.json by the EU summer-time rule, in plain
// arithmetic: Intl's time-zone data costs ~11.5 MB of RSS on Node 24 (docs/architecture.md
// "Memory"). A zone not in the table, or an instant before its valid_from, is refused
// (RangeError), never answered approximately. Pure.
import { readFileSync } from 'node:fs';

interface ZoneJson {
  standard_offset_min: number;
  summer_time: 'eu' | 'none';
}
interface ZonesJson {
  valid_from: string;
  zones: Record<string, ZoneJson>;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const doc = JSON.parse(readFileSync(new URL('./zones.json', import.meta.url), 'utf8')) as ZonesJson;
const validFromMs = Date.parse(doc.valid_from);
const zones = new Map(Object.entries(doc.zones));

/** The time zones this module knows. */
export function supportedTimeZones(): string[] {
  return [...zones.keys()];
}

/** Throws a clear error unless `timeZone` is one this module computes exactly. */
export function requireSupportedTimeZone(timeZone: string, what = 'time zone'): void {
  if (!zones.has(timeZone)) {
    throw new RangeError(`${what} ${timeZone} is not supported: src/prices/zones.json lists the zones whose offsets are computed (${supportedTimeZones().join(', ')})`);
  }
}

/** UTC ms of 01:00 UTC on the last Sunday of `month0` (0-based) in `year`. */
function lastSundayAt0100Utc(year: number, month0: number): number {
  const lastDay = Date.UTC(year, month0 + 1, 0);
  return lastDay - new Date(lastDay).getUTCDay() * DAY_MS + HOUR_MS;
}

/** The EU summer-time interval [start, end) of a year, UTC ms. */
export function euSummerTimeMs(year: number): { startMs: number; endMs: number } {
  return { startMs: lastSundayAt0100Utc(year, 2), endMs: lastSundayAt0100Utc(year, 9) };
}

/** Local time minus UTC at an instant, in ms (+3,600,000 for CET, +7,200,000 for CEST). */
export function zoneOffsetMs(timeZone: string, utcMs: number): number {
  const zone = zones.get(timeZone);
  if (!zone) requireSupportedTimeZone(timeZone);
  if (!(utcMs >= validFromMs)) throw new RangeError(`${new Date(utcMs).toISOString()} is before ${doc.valid_from}, from which src/prices/zones.json is exact`);
  const standardMs = zone!.standard_offset_min * MINUTE_MS;
  if (zone!.summer_time === 'none') return standardMs;
  const { startMs, endMs } = euSummerTimeMs(new Date(utcMs).getUTCFullYear());
  return utcMs >= startMs && utcMs < endMs ? standardMs + HOUR_MS : standardMs;
}
