// The site's other load from the site meter's latest reading (planning/site-load.ts): pure.
import { describe, expect, it } from 'vitest';
import { siteMeterReading, siteOtherLoad, type SiteLoadInput } from '../../src/planning/site-load.js';

const NOW = Date.parse('2025-05-11T06:20:00Z');
const settings = { maxReadingAgeMs: 30_000, includesChargers: true, voltageV: 230 };
const input = (over: Partial<SiteLoadInput>): SiteLoadInput => ({
  nowMs: NOW,
  resourceId: 'grid',
  reading: { resourceId: 'grid', sampledAtMs: NOW - 2000, currentsA: [10, 14, 8], powerW: 7400 },
  ownDraw: null,
  limitA: 25,
  minCurrentA: 6,
  clientOtherLoadA: 0,
  settings,
  ...over,
});

describe('siteOtherLoad', () => {
  it('a fresh reading: the highest phase current less the connector\'s own draw on that phase', () => {
    const load = siteOtherLoad(input({ ownDraw: { sampledAtMs: NOW - 5000, currentsA: [6, 6, 6] } }));
    expect(load).toMatchObject({ state: 'measured', otherLoadA: 8, meterLoadA: [10, 14, 8], ownDrawA: [6, 6, 6], perPhase: 'currents', note: null });
  });

  it('the own draw is not taken off when the meter does not measure the chargers, or when it is not known (then said)', () => {
    expect(siteOtherLoad(input({ settings: { ...settings, includesChargers: false }, ownDraw: { sampledAtMs: NOW, currentsA: [6, 6, 6] } })).otherLoadA).toBe(14);
    const unknown = siteOtherLoad(input({ ownDraw: { sampledAtMs: NOW - 120_000, currentsA: [6, 6, 6] } }));
    expect(unknown).toMatchObject({ otherLoadA: 14, ownDrawA: null });
    expect(unknown.note).toMatch(/own draw is not known/);
  });

  it('without per-phase currents the total power is spread over three phases; export is no load', () => {
    expect(siteOtherLoad(input({ reading: { resourceId: 'grid', sampledAtMs: NOW, currentsA: null, powerW: 6900 }, ownDraw: null, settings: { ...settings, includesChargers: false } }))).toMatchObject({ otherLoadA: 10, perPhase: 'power-split' });
    expect(siteOtherLoad(input({ reading: { resourceId: 'grid', sampledAtMs: NOW, currentsA: null, powerW: -3000 } })).otherLoadA).toBe(0);
  });

  it('never below what the client said', () => {
    expect(siteOtherLoad(input({ clientOtherLoadA: 20 })).otherLoadA).toBe(20);
  });

  it('stale or missing: everything but the minimum current is assumed taken, and said', () => {
    const stale = siteOtherLoad(input({ reading: { resourceId: 'grid', sampledAtMs: NOW - 31_000, currentsA: [1, 1, 1], powerW: 690 } }));
    expect(stale).toMatchObject({ state: 'stale', otherLoadA: 19, meterLoadA: null, sampledAtMs: NOW - 31_000 });
    expect(stale.note).toMatch(/last read 31 s ago \(more than 30 s\)/);
    expect(siteOtherLoad(input({ reading: null }))).toMatchObject({ state: 'no-reading', otherLoadA: 19 });
    expect(siteOtherLoad(input({ reading: null, clientOtherLoadA: 22 })).otherLoadA).toBe(22);
  });
});

describe('siteMeterReading', () => {
  it('takes the per-phase currents only when all three are there', () => {
    expect(siteMeterReading({ resourceId: 'g', sampledAtMs: 1, metrics: [{ name: 'total_active_power', value: 500 }, { name: 'current_l1', value: 2 }] })).toEqual({ resourceId: 'g', sampledAtMs: 1, currentsA: null, powerW: 500 });
    expect(siteMeterReading({ resourceId: 'g', sampledAtMs: 1, metrics: ['current_l1', 'current_l2', 'current_l3'].map((name, i) => ({ name, value: i })) }).currentsA).toEqual([0, 1, 2]);
  });
});
