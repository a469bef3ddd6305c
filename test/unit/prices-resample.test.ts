import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PricePeriod } from '../../src/domain.js';
import { requireMarket } from '../../src/prices/markets.js';
import { resample } from '../../src/prices/resample.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { localDayStartMs, addLocalDays } from '../../src/prices/timezone.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const NL = requireMarket('NL');
const day = (date: string) => {
  const from = localDayStartMs(NL.timeZone, date);
  return { fromMs: from, toMs: addLocalDays(NL.timeZone, from, 1) };
};

describe.skipIf(!hasSharedData)(`resampling real NL 2025 prices${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let native: PricePeriod[];
  beforeAll(() => {
    native = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), NL).periods;
  });
  const at = (date: string, intervalS: number) => resample(native, { marketArea: 'NL', timeZone: NL.timeZone, ...day(date), intervalS });

  it('repeats an hourly price in each quarter-hour (before the switch)', () => {
    const q = at('2025-05-11', 900);
    expect(q).toHaveLength(96);
    const hours = at('2025-05-11', 3600);
    expect(hours).toHaveLength(24);
    // The README's 2025 minimum: -0.35 EUR/kWh at 13:00 local = 11:00Z.
    const h13 = hours.find((p) => p.startMs === Date.UTC(2025, 4, 11, 11))!;
    expect(h13.pricePerMwh).toBe(-350);
    expect(q.filter((p) => p.startMs >= h13.startMs && p.startMs < h13.startMs + 3_600_000).map((p) => p.pricePerMwh)).toEqual([-350, -350, -350, -350]);
  });

  it('takes the time-weighted mean of quarter-hours for 30 and 60 minutes (after the switch)', () => {
    const d = day('2025-10-02');
    const quarters = native.filter((p) => p.startMs >= d.fromMs && p.startMs < d.toMs);
    expect(quarters).toHaveLength(96);
    expect(quarters.every((p) => p.durationS === 900)).toBe(true);
    const hours = at('2025-10-02', 3600);
    expect(hours).toHaveLength(24);
    hours.forEach((h, i) => {
      const mean = quarters.slice(i * 4, i * 4 + 4).reduce((s, p) => s + p.pricePerMwh, 0) / 4;
      expect(h.pricePerMwh).toBeCloseTo(mean, 6);
    });
    expect(at('2025-10-02', 1800)).toHaveLength(48);
  });

  it('gives 23 hours on the spring day and leaves out the missing autumn hour instead of inventing it', () => {
    expect(at('2025-03-30', 3600)).toHaveLength(23);
    expect(at('2025-03-30', 900)).toHaveLength(92);
    // 2025-10-26 has 25 hours; the file lacks 01:00-02:00Z.
    const autumn = at('2025-10-26', 3600);
    expect(autumn).toHaveLength(24);
    expect(autumn.some((p) => p.startMs === Date.UTC(2025, 9, 26, 1))).toBe(false);
    expect(at('2025-10-26', 900)).toHaveLength(96);
  });

  it('spans the 60 -> 15 minute switch', () => {
    const from = localDayStartMs(NL.timeZone, '2025-09-30');
    const out = resample(native, { marketArea: 'NL', timeZone: NL.timeZone, fromMs: from, toMs: from + 48 * 3_600_000, intervalS: 900 });
    expect(out).toHaveLength(192);
    expect(new Set(out.map((p) => p.durationS))).toEqual(new Set([900]));
  });
});
