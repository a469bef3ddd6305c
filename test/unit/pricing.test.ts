// Worked examples for src/pricing. Every price below was looked up in the real recorded
// files in ../shared/data/prices (NL day-ahead; the files give EUR/kWh, x1000 = EUR/MWh);
// the last block re-reads those files to prove the looked-up values are the real ones.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { PricePeriod } from '../../src/domain.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { checkReadings, priceSession, roundTo, sdacNativeDurationS, type EnergyReading } from '../../src/pricing/session-cost.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const H = 3600;
const Q = 900;
const at = (iso: string) => Date.parse(iso);
const p = (startIso: string, durationS: number, pricePerMwh: number): PricePeriod => ({ marketArea: 'NL', startMs: at(startIso), durationS, pricePerMwh });
const r = (iso: string, energyKwh: number): EnergyReading => ({ timestampMs: at(iso), energyKwh });

function priced(readings: EnergyReading[], periods: PricePeriod[]) {
  const result = priceSession(readings, periods);
  if (!result.ok) throw new Error(`unexpected missing period ${new Date(result.missing.startMs).toISOString()}`);
  return result;
}

// nl-2024-hourly-local.csv, 2024-01-15 (CET = UTC+1): 10:00 0,094890; 11:00 0,090200; 12:00 0,081180; 13:00 0,082200
const JAN_15 = [p('2024-01-15T09:00:00Z', H, 94.89), p('2024-01-15T10:00:00Z', H, 90.2), p('2024-01-15T11:00:00Z', H, 81.18), p('2024-01-15T12:00:00Z', H, 82.2)];

describe('priceSession worked examples (real NL prices)', () => {
  it('one interval inside one period', () => {
    // 5.5 kWh between 09:10Z and 09:40Z, all in the 09:00Z hour at 94.89 EUR/MWh:
    // 5.5 x 94.89 / 1000 = 0.521895 -> 0.5219
    const res = priced([r('2024-01-15T09:10:00Z', 100), r('2024-01-15T09:40:00Z', 105.5)], JAN_15);
    expect(res.exactCost).toBeCloseTo(0.521895, 12);
    expect(res.totalCostExclVat).toBe(0.5219);
    expect(res.energyKwh).toBeCloseTo(5.5, 12);
  });

  it('irregular gaps: energy spread evenly over each interval and split at period boundaries', () => {
    // 09:30Z 0 -> 09:50Z 2 kWh            : 2 kWh in 09Z
    // 09:50Z 2 -> 10:30Z 8 kWh (40 min)   : 6 kWh at 0.15 kWh/min -> 10 min = 1.5 in 09Z, 30 min = 4.5 in 10Z
    // 10:30Z 8 -> 11:45Z 14 kWh (75 min)  : 6 kWh at 0.08 kWh/min -> 30 min = 2.4 in 10Z, 45 min = 3.6 in 11Z
    // 09Z 3.5 x 94.89 = 332.115; 10Z 6.9 x 90.20 = 622.38; 11Z 3.6 x 81.18 = 292.248
    // (332.115 + 622.38 + 292.248) / 1000 = 1.246743 -> 1.2467
    const res = priced([r('2024-01-15T09:30:00Z', 0), r('2024-01-15T09:50:00Z', 2), r('2024-01-15T10:30:00Z', 8), r('2024-01-15T11:45:00Z', 14)], JAN_15);
    expect(res.exactCost).toBeCloseTo(1.246743, 12);
    expect(res.totalCostExclVat).toBe(1.2467);
  });

  it('spring DST (2024-03-31, 02:00 CET -> 03:00 CEST): one hour of wall time that reads two', () => {
    // nl-2024-hourly-local.csv: 01:00 CET (00:00Z) 0,074570; 03:00 CEST (01:00Z) 0,064980 (02:00 local does not exist)
    const periods = [p('2024-03-31T00:00:00Z', H, 74.57), p('2024-03-31T01:00:00Z', H, 64.98)];
    // 01:30+01:00 (00:30Z) -> 03:30+02:00 (01:30Z) is ONE hour: 11 kWh at 11 kW, 5.5 kWh in each hour.
    // 5.5 x 74.57 = 410.135; 5.5 x 64.98 = 357.39; 767.525 / 1000 = 0.767525 -> 0.7675
    const res = priced([r('2024-03-31T01:30:00+01:00', 0), r('2024-03-31T03:30:00+02:00', 11)], periods);
    expect(res.endMs - res.startMs).toBe(3_600_000);
    expect(res.exactCost).toBeCloseTo(0.767525, 12);
    expect(res.totalCostExclVat).toBe(0.7675);
  });

  it('autumn DST (2025-10-26, 03:00 CEST -> 02:00 CET): start and end read the same wall time', () => {
    // nl-2025-quarterhour-local-utc.csv, UTC column: 00:00Z 0,002900; 00:15Z 0,002500; 00:30Z 0,002100; 00:45Z 0,000600
    // then 02:00Z 0,001200 — the file has no price for 01:00-02:00Z (the repeated local hour).
    const periods = [
      p('2025-10-26T00:00:00Z', Q, 2.9), p('2025-10-26T00:15:00Z', Q, 2.5), p('2025-10-26T00:30:00Z', Q, 2.1), p('2025-10-26T00:45:00Z', Q, 0.6),
      p('2025-10-26T02:00:00Z', Q, 1.2),
    ];
    // 02:00+02:00 (00:00Z) -> 02:00+01:00 (01:00Z): 11 kWh over one hour, 2.75 kWh per quarter:
    // 2.75 x (2.9 + 2.5 + 2.1 + 0.6) = 2.75 x 8.1 = 22.275; / 1000 = 0.022275 -> 0.0223
    const res = priced([r('2025-10-26T02:00:00+02:00', 0), r('2025-10-26T02:30:00+02:00', 5.5), r('2025-10-26T02:00:00+01:00', 11)], periods);
    expect(res.endMs - res.startMs).toBe(3_600_000);
    expect(res.exactCost).toBeCloseTo(0.022275, 12);
    expect(res.totalCostExclVat).toBe(0.0223);
    // Going on into the repeated hour hits the real gap; the first missing period is named.
    const gap = priceSession([r('2025-10-26T02:00:00+02:00', 0), r('2025-10-26T03:15:00+01:00', 20)], periods);
    expect(gap).toEqual({ ok: false, missing: { startMs: at('2025-10-26T01:00:00Z'), durationS: Q } });
  });

  it('across 2025-10-01 00:00 CET: hourly periods before, quarter-hours after', () => {
    // nl-2025-quarterhour-local-utc.csv: 2025-09-30 23:00 local (21:00Z) 0,090000 for the whole hour;
    // 2025-10-01 00:00 (22:00Z) 0,102600; 00:15 (22:15Z) 0,092200; 00:30 (22:30Z) 0,082700
    const periods = [p('2025-09-30T21:00:00Z', H, 90), p('2025-09-30T22:00:00Z', Q, 102.6), p('2025-09-30T22:15:00Z', Q, 92.2), p('2025-09-30T22:30:00Z', Q, 82.7)];
    // 21:30Z -> 22:30Z at 11 kW: 5.5 kWh x 90 = 495; 2.75 x 102.6 = 282.15; 2.75 x 92.2 = 253.55
    // (495 + 282.15 + 253.55) / 1000 = 1.0307
    const res = priced([r('2025-09-30T23:30:00+02:00', 0), r('2025-10-01T00:30:00+02:00', 11)], periods);
    expect(res.exactCost).toBeCloseTo(1.0307, 12);
    expect(res.totalCostExclVat).toBe(1.0307);
    expect(sdacNativeDurationS(at('2025-09-30T21:59:59Z'))).toBe(H);
    expect(sdacNativeDurationS(at('2025-09-30T22:00:00Z'))).toBe(Q);
  });

  it('negative prices count negative', () => {
    // nl-2024-hourly-local.csv 2024-05-01 (CEST = UTC+2): 12:00 -0,102660 (10:00Z); 13:00 -0,200000 (11:00Z, the year's minimum)
    const periods = [p('2024-05-01T10:00:00Z', H, -102.66), p('2024-05-01T11:00:00Z', H, -200)];
    // 10:30Z -> 11:30Z, 11 kWh: 5.5 x -102.66 = -564.63; 5.5 x -200 = -1100; -1664.63 / 1000 = -1.66463 -> -1.6646
    const res = priced([r('2024-05-01T10:30:00Z', 3), r('2024-05-01T11:30:00Z', 14)], periods);
    expect(res.exactCost).toBeCloseTo(-1.66463, 12);
    expect(res.totalCostExclVat).toBe(-1.6646);
  });

  it('names the first missing period before, inside and after the stored prices', () => {
    const before = priceSession([r('2024-01-15T08:20:00Z', 0), r('2024-01-15T09:20:00Z', 1)], JAN_15);
    expect(before).toEqual({ ok: false, missing: { startMs: at('2024-01-15T08:00:00Z'), durationS: H } });
    const after = priceSession([r('2024-01-15T12:20:00Z', 0), r('2024-01-15T13:20:00Z', 1)], JAN_15);
    expect(after).toEqual({ ok: false, missing: { startMs: at('2024-01-15T13:00:00Z'), durationS: H } });
    const holed = priceSession([r('2024-01-15T09:20:00Z', 0), r('2024-01-15T12:20:00Z', 1)], [JAN_15[0], JAN_15[2], JAN_15[3]]);
    expect(holed).toEqual({ ok: false, missing: { startMs: at('2024-01-15T10:00:00Z'), durationS: H } });
    // A session that ends exactly where the prices end needs nothing more.
    expect(priceSession([r('2024-01-15T12:20:00Z', 0), r('2024-01-15T13:00:00Z', 1)], JAN_15).ok).toBe(true);
  });
});

describe('checkReadings', () => {
  it('finds too few, duplicate, unsorted and decreasing readings', () => {
    expect(checkReadings([r('2024-01-15T09:00:00Z', 1)])[0].message).toMatch(/at least 2/);
    expect(checkReadings([r('2024-01-15T09:00:00Z', 1), r('2024-01-15T09:00:00Z', 2)])).toEqual([{ index: 1, field: 'timestamp', message: 'duplicates the timestamp of reading 0' }]);
    expect(checkReadings([r('2024-01-15T09:00:10Z', 1), r('2024-01-15T09:00:00Z', 2)])[0]).toMatchObject({ index: 1, field: 'timestamp' });
    expect(checkReadings([r('2024-01-15T09:00:00Z', 2), r('2024-01-15T09:00:10Z', 1.5)])[0]).toMatchObject({ index: 1, field: 'reading_kwh' });
    expect(checkReadings([r('2024-01-15T09:00:00Z', 2), r('2024-01-15T09:00:10Z', 2)])).toEqual([]);
  });

  it('roundTo rounds half away from zero and never gives -0', () => {
    expect(roundTo(0.767525)).toBe(0.7675);
    expect(roundTo(0.00005)).toBe(0.0001);
    expect(roundTo(-0.00005)).toBe(-0.0001);
    expect(Object.is(roundTo(-0.00001), 0)).toBe(true);
    expect(roundTo(1.00005)).toBe(1.0001);
  });
});

/** NL 2024 hourly prices as UTC periods, through the project's CSV parser. */
function nl2024Periods(): PricePeriod[] {
  return parsePriceCsv(readFileSync(sharedData('prices/nl-2024-hourly-local.csv'), 'utf8'), requireMarket('NL')).periods;
}

describe.skipIf(!hasSharedData)('against the real files', () => {
  it('the looked-up prices above are the ones in the files', () => {
    const nl2024 = readFileSync(sharedData('prices/nl-2024-hourly-local.csv'), 'utf8');
    for (const line of ['"2024-01-15 10:00:00";0,094890', '"2024-01-15 11:00:00";0,090200', '"2024-01-15 12:00:00";0,081180', '"2024-03-31 01:00:00";0,074570', '"2024-03-31 03:00:00";0,064980', '"2024-05-01 12:00:00";-0,102660', '"2024-05-01 13:00:00";-0,200000']) {
      expect(nl2024).toContain(line);
    }
    const nl2025 = readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8');
    for (const line of ['"2025-10-26 02:00:00";"2025-10-26 00:00:00";0,002900', '"2025-10-26 02:45:00";"2025-10-26 00:45:00";0,000600', '"2025-10-26 03:00:00";"2025-10-26 02:00:00";0,001200', '"2025-09-30 23:45:00";"2025-09-30 21:45:00";0,090000', '"2025-10-01 00:00:00";"2025-09-30 22:00:00";0,102600', '"2025-10-01 00:15:00";"2025-09-30 22:15:00";0,092200']) {
      expect(nl2025).toContain(line);
    }
    expect(nl2025).not.toContain(';"2025-10-26 01:00:00";');
  });

  it('10-s readings over a week (60,481 readings, 2024-01-15..22) at a steady 11 kW', () => {
    const periods = nl2024Periods();
    const fromMs = at('2024-01-15T00:00:00Z');
    const readings: EnergyReading[] = [];
    // Steady 11 kW: 11 kWh per hour -> expected cost = 11 x (sum of the 168 hourly prices) / 1000.
    for (let i = 0; i <= 7 * 24 * 360; i++) readings.push({ timestampMs: fromMs + i * 10_000, energyKwh: 5000 + (i * 11) / 360 });
    expect(readings).toHaveLength(60_481);
    expect(checkReadings(readings)).toEqual([]);
    const week = periods.filter((x) => x.startMs >= fromMs && x.startMs < fromMs + 7 * 86_400_000);
    expect(week).toHaveLength(168);
    const priceSum = week.reduce((s, x) => s + x.pricePerMwh, 0);
    // Looked up: the 168 hourly NL prices of 2024-01-15T00Z .. 2024-01-21T23Z sum to 13764.31 EUR/MWh.
    expect(priceSum).toBeCloseTo(13764.31, 6);
    const res = priced(readings, periods);
    expect(res.exactCost).toBeCloseTo((11 * 13764.31) / 1000, 9);
    expect(res.totalCostExclVat).toBe(roundTo((11 * 13764.31) / 1000));
    expect(res.energyKwh).toBeCloseTo(7 * 24 * 11, 6);
  });
});
