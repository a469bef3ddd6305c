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
    expect(siteMeterReading({ resourceId: 'g', sampledAtMs: 1, metrics: [{ name: 'total_active_power', value: 500 }, { name: 'current_l1', value: 2 }] })).toEqual({ resourceId: 'g', sampledAtMs: 1, currentsA: null, powerW: 500, phasePowersW: null, voltagesV: null });
    expect(siteMeterReading({ resourceId: 'g', sampledAtMs: 1, metrics: ['current_l1', 'current_l2', 'current_l3'].map((name, i) => ({ name, value: i })) }).currentsA).toEqual([0, 1, 2]);
  });
});

describe('a P1 meter as the site meter: its per-phase power', () => {
  it('per-phase power over each phase voltage, a phase feeding in counting as no load, before the whole-ampere currents', () => {
    // As the P1 source publishes a DSMR 5 telegram: power per phase (signed), voltages, currents in whole amperes.
    const metrics = [
      { name: 'total_active_power', value: 2600 },
      { name: 'active_power_l1', value: -1150 },
      { name: 'active_power_l2', value: 3680 },
      { name: 'active_power_l3', value: 69 },
      { name: 'voltage_l1', value: 230 },
      { name: 'voltage_l2', value: 230 },
      { name: 'voltage_l3', value: 230 },
      { name: 'current_l1', value: 5 },
      { name: 'current_l2', value: 16 },
      { name: 'current_l3', value: 0 },
    ];
    const reading = siteMeterReading({ resourceId: 'grid', sampledAtMs: NOW - 2000, metrics });
    expect(reading.phasePowersW).toEqual([-1150, 3680, 69]);
    const load = siteOtherLoad(input({ reading, ownDraw: null, settings: { ...settings, includesChargers: false } }));
    expect(load).toMatchObject({ state: 'measured', perPhase: 'phase-powers', meterLoadA: [0, 16, 0.3], otherLoadA: 16 });
    // Without voltages the configured one is used.
    const noVolts = siteOtherLoad(input({ reading: { ...reading, voltagesV: null }, ownDraw: null, settings: { ...settings, includesChargers: false, voltageV: 230 } }));
    expect(noVolts.meterLoadA).toEqual([0, 16, 0.3]);
    // A drawing phase whose current exceeds P/V (power factor 0.8) is loaded by its current.
    const reactive = siteMeterReading({ resourceId: 'grid', sampledAtMs: NOW - 2000, metrics: metrics.map((m) => (m.name === 'current_l2' ? { ...m, value: 20 } : m)) });
    const reactiveLoad = siteOtherLoad(input({ reading: reactive, ownDraw: null, settings: { ...settings, includesChargers: false } }));
    expect(reactiveLoad).toMatchObject({ perPhase: 'phase-powers', meterLoadA: [0, 20, 0.3], otherLoadA: 20 });
  });
});
