// A session's cost covers exactly its stated window (issue 16 point 3): src/pricing/session-window.ts
// against the real NL day-ahead prices in ../shared/data/prices, read by the project's CSV parser.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { PricePeriod } from '../../src/domain.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { priceSession, type EnergyReading } from '../../src/pricing/session-cost.js';
import { clipToWindow, readingAt, unboundedEdges } from '../../src/pricing/session-window.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';

const at = (iso: string) => Date.parse(iso);
const r = (iso: string, energyKwh: number): EnergyReading => ({ timestampMs: at(iso), energyKwh });

function cost(readings: readonly EnergyReading[], periods: readonly PricePeriod[]): number {
  const res = priceSession(readings, periods);
  if (!res.ok) throw new Error(`missing price at ${new Date(res.missing.startMs).toISOString()}`);
  return res.exactCost;
}

describe('clipToWindow and unboundedEdges (no prices)', () => {
  it('interpolates at an edge with readings on both sides, linear in time', () => {
    expect(readingAt(r('2025-10-01T00:00:00Z', 100), r('2025-10-01T00:10:00Z', 102), at('2025-10-01T00:05:00Z'))).toEqual(r('2025-10-01T00:05:00Z', 101));
    const readings = [r('2025-10-01T00:00:00Z', 100), r('2025-10-01T00:10:00Z', 102), r('2025-10-01T00:20:00Z', 104.5), r('2025-10-01T00:30:00Z', 106)];
    expect(clipToWindow(readings, at('2025-10-01T00:05:00Z'), at('2025-10-01T00:25:00Z'))).toEqual([
      r('2025-10-01T00:05:00Z', 101), readings[1], readings[2], r('2025-10-01T00:25:00Z', 105.25),
    ]);
    // Edges on readings: nothing to interpolate; everything inside: the same array.
    expect(clipToWindow(readings, at('2025-10-01T00:10:00Z'), at('2025-10-01T00:20:00Z'))).toEqual([readings[1], readings[2]]);
    expect(clipToWindow(readings, at('2025-10-01T00:00:00Z'), at('2025-10-01T00:30:00Z'))).toBe(readings);
    // A window between two readings: both edges from the same interval.
    expect(clipToWindow(readings, at('2025-10-01T00:12:00Z'), at('2025-10-01T00:18:00Z'))).toEqual([r('2025-10-01T00:12:00Z', 102.5), r('2025-10-01T00:18:00Z', 104)]);
  });

  it('does not extend an edge with readings on one side only, and drops what lies wholly outside', () => {
    const readings = [r('2025-10-01T00:10:00Z', 102), r('2025-10-01T00:20:00Z', 104.5)];
    expect(clipToWindow(readings, at('2025-10-01T00:00:00Z'), at('2025-10-01T00:15:00Z'))).toEqual([readings[0], r('2025-10-01T00:15:00Z', 103.25)]);
    expect(clipToWindow(readings, at('2025-10-01T00:30:00Z'), at('2025-10-01T00:40:00Z'))).toEqual([]);
    expect(clipToWindow(readings, at('2025-10-01T00:00:00Z'), at('2025-10-01T00:05:00Z'))).toEqual([]);
  });

  it('names each edge whose nearest reading beyond it is too far or missing', () => {
    // 10-s polls with the meter offline from 00:10:00 to 00:20:00 (no reading in between).
    const readings: EnergyReading[] = [];
    for (let t = at('2025-10-01T00:00:00Z'); t <= at('2025-10-01T00:40:00Z'); t += 10_000) {
      if (t > at('2025-10-01T00:10:00Z') && t < at('2025-10-01T00:20:00Z')) continue;
      readings.push({ timestampMs: t, energyKwh: t / 3.6e6 });
    }
    const gap = 30_000;
    expect(unboundedEdges(readings, at('2025-10-01T00:05:05Z'), at('2025-10-01T00:25:05Z'), gap)).toEqual([]);
    expect(unboundedEdges(readings, at('2025-10-01T00:15:00Z'), at('2025-10-01T00:30:00Z'), gap)).toEqual([{ edge: 'start', gapMs: 300_000 }]);
    expect(unboundedEdges(readings, at('2025-10-01T00:05:00Z'), at('2025-10-01T00:15:00Z'), gap)).toEqual([{ edge: 'end', gapMs: 300_000 }]);
    expect(unboundedEdges(readings, at('2025-10-01T00:15:00Z'), at('2025-10-01T00:40:05Z'), gap)).toEqual([{ edge: 'start', gapMs: 300_000 }, { edge: 'end', gapMs: null }]);
    expect(unboundedEdges(readings, at('2025-09-30T23:59:59Z'), at('2025-10-01T00:01:00Z'), gap)).toEqual([{ edge: 'start', gapMs: null }]);
    // Exactly the gap away is close enough; a reading on the edge is 0 away.
    expect(unboundedEdges(readings, at('2025-10-01T00:10:30Z'), at('2025-10-01T00:30:00Z'), gap)).toEqual([]);
    expect(unboundedEdges(readings, at('2025-10-01T00:10:30.001Z'), at('2025-10-01T00:30:00Z'), gap)).toEqual([{ edge: 'start', gapMs: 30_001 }]);
  });
});

describe.skipIf(!hasSharedData)('the cost of a clipped session (real NL 2025 prices)', () => {
  const periods = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL')).periods;

  it('bills only start..end: worked example', () => {
    // nl-2025-quarterhour-local-utc.csv: "2025-10-01 02:00:00";"2025-10-01 00:00:00";0,081900 and 00:15Z 0,081500
    const file = readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8');
    expect(file).toContain('"2025-10-01 02:00:00";"2025-10-01 00:00:00";0,081900');
    expect(file).toContain('"2025-10-01 02:15:00";"2025-10-01 00:15:00";0,081500');
    const readings = [r('2025-10-01T00:00:00Z', 100), r('2025-10-01T00:10:00Z', 102), r('2025-10-01T00:20:00Z', 104.5), r('2025-10-01T00:30:00Z', 106)];
    // Window 00:05..00:25: 00:05-00:10 1 kWh and 00:10-00:15 1.25 kWh in the 00:00Z quarter (81.9),
    // 00:15-00:20 1.25 kWh and 00:20-00:25 0.75 kWh in the 00:15Z quarter (81.5):
    // 2.25 x 81.9 + 2.0 x 81.5 = 184.275 + 163 = 347.275 -> 0.347275 EUR (all readings: 0.4903)
    const clipped = priceSession(clipToWindow(readings, at('2025-10-01T00:05:00Z'), at('2025-10-01T00:25:00Z')), periods);
    expect(clipped.ok && clipped.exactCost).toBeCloseTo(0.347275, 12);
    expect(clipped.ok && clipped.totalCostExclVat).toBe(0.3473);
    expect(clipped.ok && clipped.energyKwh).toBeCloseTo(4.25, 12);
    const whole = priceSession(readings, periods);
    expect(whole.ok && whole.totalCostExclVat).toBe(0.4903);
  });

  it('at steady power equals power x overlap x price summed over the periods (independent computation), 300 random windows', () => {
    let seed = 16;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const from = at('2025-09-29T00:00:00Z'); // hourly until 2025-09-30T22:00Z, quarter-hours after
    for (let n = 0; n < 300; n++) {
      const powerKw = 1 + rand() * 21;
      // Irregular readings (1 s to 20 min apart) over about a day, energy linear in time.
      const readings: EnergyReading[] = [];
      let t = from + Math.floor(rand() * 86_400_000);
      for (let i = 0; i < 200; i++) {
        readings.push({ timestampMs: t, energyKwh: 5000 + (powerKw * (t - from)) / 3.6e6 });
        t += 1000 + Math.floor(rand() * 1_200_000);
      }
      const first = readings[0].timestampMs;
      const last = readings[readings.length - 1].timestampMs;
      // Windows that cut readings on both sides, or reach beyond them.
      const startMs = first - 600_000 + Math.floor(rand() * (last - first) * 0.4);
      const endMs = last + 600_000 - Math.floor(rand() * (last - first) * 0.4);
      const billedFrom = Math.max(startMs, first);
      const billedTo = Math.min(endMs, last);
      let expected = 0;
      for (const p of periods) {
        const overlapMs = Math.min(p.startMs + p.durationS * 1000, billedTo) - Math.max(p.startMs, billedFrom);
        if (overlapMs > 0) expected += ((powerKw * overlapMs) / 3.6e6) * p.pricePerMwh;
      }
      const clipped = clipToWindow(readings, startMs, endMs);
      expect(clipped[0].timestampMs).toBe(billedFrom);
      expect(clipped[clipped.length - 1].timestampMs).toBe(billedTo);
      expect(cost(clipped, periods)).toBeCloseTo(expected / 1000, 9);
      // Nothing is lost or billed twice: before + window + after = all readings.
      if (startMs > first && endMs < last) {
        const split = cost(clipToWindow(readings, first, startMs), periods) + cost(clipped, periods) + cost(clipToWindow(readings, endMs, last), periods);
        expect(split).toBeCloseTo(cost(readings, periods), 9);
      }
    }
  });
});
