import { describe, expect, it } from 'vitest';
import { eicAt, MARKETS, marketByCode, nativeResolutionS, requireMarket } from '../../src/prices/markets.js';
import { periodStartMs } from '../../src/prices/resample.js';
import { addLocalDays, localDayStartMs, wallToUtc } from '../../src/prices/timezone.js';

describe('market registry', () => {
  it('knows NL, DE-LU and the further SDAC markets with EIC, zone and currency', () => {
    for (const code of ['NL', 'DE-LU', 'BE', 'FR', 'AT', 'DK1', 'DK2', 'NO1', 'SE3', 'PL']) expect(marketByCode(code), code).toBeDefined();
    const nl = requireMarket('nl');
    expect(nl).toMatchObject({ code: 'NL', timeZone: 'Europe/Amsterdam', currency: 'EUR' });
    expect(eicAt(nl, Date.UTC(2020, 0, 1))).toBe('10YNL----------L');
    expect(new Set(MARKETS.map((m) => m.code)).size).toBe(MARKETS.length);
    expect(() => requireMarket('XX')).toThrow(/unknown market area "XX" \(known: NL, DE-LU/);
  });

  it('DE-LU is DE-AT-LU before delivery 2018-10-01 (local day start 2018-09-30T22:00Z)', () => {
    const de = requireMarket('DE-LU');
    expect(eicAt(de, Date.UTC(2018, 8, 30, 21))).toBe('10Y1001A1001A63L');
    expect(eicAt(de, Date.UTC(2018, 8, 30, 22))).toBe('10Y1001A1001A82H');
    expect(eicAt(requireMarket('AT'), Date.UTC(2018, 0, 1))).toBe('10Y1001A1001A63L');
    expect(eicAt(requireMarket('AT'), Date.UTC(2019, 0, 1))).toBe('10YAT-APG------L');
  });

  it('switches from 60- to 15-minute periods for delivery from 2025-10-01 local', () => {
    for (const m of MARKETS.filter((x) => x.code !== 'DE-AT-LU')) {
      const switchMs = localDayStartMs(m.timeZone, '2025-10-01');
      expect(switchMs, m.code).toBe(Date.UTC(2025, 8, 30, 22));
      expect(nativeResolutionS(m, switchMs - 1)).toBe(3600);
      expect(nativeResolutionS(m, switchMs)).toBe(900);
    }
  });
});

describe('local time arithmetic', () => {
  it('finds no instant in the spring gap and two in the autumn overlap', () => {
    expect(wallToUtc('Europe/Amsterdam', Date.UTC(2024, 2, 31, 2, 30))).toEqual([]);
    expect(wallToUtc('Europe/Amsterdam', Date.UTC(2024, 9, 27, 2, 0))).toEqual([Date.UTC(2024, 9, 27, 0), Date.UTC(2024, 9, 27, 1)]);
  });

  it('has 23- and 25-hour days', () => {
    const tz = 'Europe/Amsterdam';
    const spring = localDayStartMs(tz, '2024-03-31');
    expect(addLocalDays(tz, spring, 1) - spring).toBe(23 * 3_600_000);
    const autumn = localDayStartMs(tz, '2024-10-27');
    expect(addLocalDays(tz, autumn, 1) - autumn).toBe(25 * 3_600_000);
  });

  it('aligns periods to the local clock', () => {
    // CET is a whole-hour offset: hours are whole UTC hours.
    expect(periodStartMs('Europe/Amsterdam', Date.UTC(2024, 9, 27, 1, 59), 3600)).toBe(Date.UTC(2024, 9, 27, 1));
    expect(periodStartMs('Europe/Amsterdam', Date.UTC(2024, 9, 27, 1, 59), 900)).toBe(Date.UTC(2024, 9, 27, 1, 45));
    // A half-hour zone shows that alignment is local, not UTC.
    expect(periodStartMs('Asia/Kolkata', Date.UTC(2024, 0, 1, 10, 10), 3600)).toBe(Date.UTC(2024, 0, 1, 9, 30));
  });
});
