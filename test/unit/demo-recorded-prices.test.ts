// The demo's recorded prices moved onto today: the same weekday, the same local wall-clock
// hour (recorded in summer time, shown in winter time), today the last priced day.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dayOfWeek, localDayOf, localMinuteOfDay } from '../../src/forecast/local-days.js';
import { moveRecording, recordedDays, shiftOntoToday } from '../../src/demo/recorded-prices.js';
import { DEMO_PRICES_URL } from '../../src/demo/demo-prices.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';

const NL = requireMarket('NL');
const recorded = parsePriceCsv(readFileSync(DEMO_PRICES_URL, 'utf8'), NL).periods;

describe('demo prices moved onto today', () => {
  it('ships eight weeks of hourly NL prices, Monday 2023-04-03 .. Sunday 2023-05-28', () => {
    expect(recorded).toHaveLength(8 * 7 * 24);
    const days = recordedDays(recorded, NL.timeZone)!;
    expect(dayOfWeek(days.first)).toBe(1);
    expect(dayOfWeek(days.last)).toBe(0);
  });

  for (const now of ['2026-11-29T10:00:00Z', '2026-12-02T23:30:00Z', '2027-03-28T12:00:00Z', '2027-07-15T06:00:00Z']) {
    it(`ends today on today's weekday, each price at its recorded local hour (${now})`, () => {
      const nowMs = Date.parse(now);
      const today = localDayOf(NL.timeZone, nowMs);
      const days = recordedDays(recorded, NL.timeZone)!;
      const moved = shiftOntoToday(days.first, days.last, today)!;
      expect(moved.shiftDays % 7).toBe(0);
      expect(moved.lastRecordedDay + moved.shiftDays).toBe(today);
      const periods = moveRecording(recorded, NL.timeZone, moved);
      expect(localDayOf(NL.timeZone, periods.at(-1)!.startMs)).toBe(today);
      // At least seven weeks, in time order without overlaps.
      expect(periods.length).toBeGreaterThanOrEqual(7 * 7 * 24 - 1);
      for (let i = 1; i < periods.length; i++) expect(periods[i]!.startMs).toBeGreaterThanOrEqual(periods[i - 1]!.startMs + 3_600_000);
      // The recorded -400 EUR/MWh at 14:00 local on Sunday 2023-05-28 (when kept) is at 14:00 local on a Sunday.
      const low = periods.find((p) => p.pricePerMwh === -400);
      if (low) {
        expect(localMinuteOfDay(NL.timeZone, low.startMs)).toBe(14 * 60);
        expect(dayOfWeek(localDayOf(NL.timeZone, low.startMs))).toBe(0);
      }
    });
  }

  it('needs at least a week', () => {
    expect(shiftOntoToday(100, 104, 200)).toBeNull();
  });
});
