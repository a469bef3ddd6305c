// zone-offset.ts against Intl (the reference the daemon no longer loads): every zone of
// zones.json at every 5th hour 1996-2040, every hour of the two days around each transition
// and one second either side of it.
import { describe, expect, it } from 'vitest';
import { euSummerTimeMs, requireSupportedTimeZone, supportedTimeZones, zoneOffsetMs } from '../../src/prices/zone-offset.js';
import { MARKETS } from '../../src/prices/markets.js';
import { SCHEDULE_TIME_ZONE } from '../../src/prices/sync.js';

const HOUR_MS = 3_600_000;

// format() and a regex: a third of formatToParts' cost, which matters over 400,000 hours a zone.
const WALL = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/;
function intlOffsetMs(f: Intl.DateTimeFormat, utcMs: number): number {
  const text = f.format(utcMs);
  const m = WALL.exec(text);
  if (!m) throw new Error(`unexpected Intl format: ${JSON.stringify(text)}`);
  const [month, day, year, hour, minute, second] = m.slice(1).map(Number);
  return Date.UTC(year!, month! - 1, day!, hour!, minute!, second!) - (utcMs - (utcMs % 1000));
}

function formatter(timeZone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
}

describe('zone offsets without Intl', () => {
  it('covers every market time zone and the schedule zone', () => {
    for (const m of MARKETS) expect(supportedTimeZones()).toContain(m.timeZone);
    expect(supportedTimeZones()).toContain(SCHEDULE_TIME_ZONE);
  });

  for (const zone of supportedTimeZones()) {
    it(`${zone} equals Intl at every 5th hour 1996-2040 and around each transition (every hour, ±1 s)`, () => {
      const f = formatter(zone);
      let mismatches = 0;
      const first: string[] = [];
      const check = (t: number) => {
        const ours = zoneOffsetMs(zone, t);
        const intl = intlOffsetMs(f, t);
        if (ours !== intl) {
          mismatches++;
          if (first.length < 5) first.push(`${new Date(t).toISOString()}: ${ours} vs Intl ${intl}`);
        }
      };
      // Every 5th hour (5 and 24 coprime: every hour of the day comes round) is enough away from
      // the transitions, where an offset can only be wrong as a whole; near each, every hour of the
      // two days around it and one second either side (every hour throughout was 22 s of CPU).
      for (let t = Date.UTC(1996, 0, 1); t < Date.UTC(2041, 0, 1); t += 5 * HOUR_MS) check(t);
      for (let y = 1996; y <= 2040; y++) {
        const { startMs, endMs } = euSummerTimeMs(y);
        for (const edge of [startMs, endMs]) {
          for (const d of [-1000, 0, 1000]) check(edge + d);
          for (let h = -24; h <= 24; h++) check(edge + h * HOUR_MS);
        }
      }
      expect(first).toEqual([]);
      expect(mismatches).toBe(0);
    }, 120_000);
  }

  it('changes at 01:00 UTC on the last Sundays of March and October', () => {
    expect(zoneOffsetMs('Europe/Amsterdam', Date.UTC(2024, 2, 31, 1) - 1)).toBe(HOUR_MS);
    expect(zoneOffsetMs('Europe/Amsterdam', Date.UTC(2024, 2, 31, 1))).toBe(2 * HOUR_MS);
    expect(zoneOffsetMs('Europe/London', Date.UTC(2024, 9, 27, 1) - 1)).toBe(HOUR_MS);
    expect(zoneOffsetMs('Europe/London', Date.UTC(2024, 9, 27, 1))).toBe(0);
  });

  it('refuses a zone it does not know, and instants before its table holds', () => {
    expect(() => zoneOffsetMs('America/New_York', Date.UTC(2024, 0, 1))).toThrow(/America\/New_York is not supported/);
    expect(() => requireSupportedTimeZone('Europe/Lisbon', 'market PT: time_zone')).toThrow(/market PT: time_zone Europe\/Lisbon is not supported/);
    expect(() => zoneOffsetMs('Europe/Amsterdam', Date.UTC(1990, 5, 1))).toThrow(/before 1995-11-01/);
  });
});
