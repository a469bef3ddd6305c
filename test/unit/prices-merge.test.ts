// The merge rule (src/prices/merge.ts, pure) on real NL prices: the cases the store tests
// do not reach — a lower-ranked source with replace, misaligned periods, a batch that
// mixes filling and keeping.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PricePeriod } from '../../src/domain.js';
import { requireMarket } from '../../src/prices/markets.js';
import { planMerge, sourceRank, type StoredPeriod } from '../../src/prices/merge.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const NL = requireMarket('NL');

describe.skipIf(!hasSharedData)(`planMerge on real NL 2025 prices${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let quarters: PricePeriod[];
  const stored = (periods: readonly PricePeriod[], source: string): StoredPeriod[] => periods.map((p) => ({ ...p, source }));

  beforeAll(() => {
    const all = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), NL).periods;
    // 2025-10-02 06:00Z .. 08:00Z: eight real quarter-hours.
    quarters = all.filter((p) => p.startMs >= Date.parse('2025-10-02T06:00:00Z') && p.startMs < Date.parse('2025-10-02T08:00:00Z'));
  });

  it('ranks the platform above files and anything else', () => {
    expect([sourceRank('entsoe'), sourceRank('csv:x.csv'), sourceRank('test')]).toEqual([2, 1, 1]);
  });

  it('same periods from a lower-ranked source: kept, or replaced when asked, and reported either way', () => {
    expect(quarters).toHaveLength(8);
    const changed = quarters.map((p, i) => (i === 3 ? { ...p, pricePerMwh: quarters[2].pricePerMwh } : p));
    const kept = planMerge(stored(quarters, 'entsoe'), changed, { source: 'csv:q.csv' });
    expect(kept.write).toEqual([]); // equal prices keep the better source's provenance too
    expect(kept.counts).toMatchObject({ unchanged: 7, 'kept-better-source': 1 });
    expect(kept.runs).toEqual([expect.objectContaining({ outcome: 'kept-better-source', fromMs: quarters[3].startMs, storedSources: ['entsoe'], maxChangePerMwh: Math.abs(quarters[3].pricePerMwh - quarters[2].pricePerMwh) })]);
    const replaced = planMerge(stored(quarters, 'entsoe'), changed, { source: 'csv:q.csv', replace: true });
    expect(replaced.write).toEqual([changed[3]]);
    expect(replaced.counts).toMatchObject({ unchanged: 7, replaced: 1 });
  });

  it('periods on other boundaries (hours shifted by 30 minutes over stored hours) are never stored, not even with replace', () => {
    const hour = (k: number, shiftMs = 0): PricePeriod => ({ marketArea: 'NL', startMs: quarters[4 * k].startMs + shiftMs, durationS: 3600, pricePerMwh: quarters[4 * k].pricePerMwh });
    const hours = [hour(0), hour(1)];
    const shifted = [hour(0, 1_800_000), hour(1, 1_800_000)];
    for (const replace of [false, true]) {
      const plan = planMerge(stored(hours, 'csv:h.csv'), shifted, { source: 'entsoe', replace });
      expect(plan.write).toEqual([]);
      expect(plan.deleteStartMs).toEqual([]);
      expect(plan.counts['kept-misaligned']).toBe(2);
      expect(plan.runs).toEqual([expect.objectContaining({ outcome: 'kept-misaligned', fromMs: shifted[0].startMs, toMs: shifted[1].startMs + 3_600_000, incomingPeriods: 2, storedPeriods: 2 })]);
    }
  });

  it('one batch: the hour over stored quarter-hours is kept out, the hour without prices is filled', () => {
    const hours: PricePeriod[] = [0, 4].map((k) => ({ marketArea: 'NL', startMs: quarters[k].startMs, durationS: 3600, pricePerMwh: quarters[k].pricePerMwh }));
    const plan = planMerge(stored(quarters.slice(0, 4), 'entsoe'), hours, { source: 'csv:h.csv' });
    expect(plan.write).toEqual([hours[1]]);
    expect(plan.runs.map((r) => [r.outcome, r.incomingPeriods, r.storedPeriods, r.storedDurationsS])).toEqual([
      ['kept-finer', 1, 4, [900]],
      ['filled', 1, 0, []],
    ]);
  });
});
