// The Belgian capacity tariff: the capacity objects of a real Fluvius (e-MUCS 1.7.1) telegram
// (../shared/data/dsmr/fluvius_v171.txt, read in place) and the quarter-hour cap rule
// (planning/capacity.ts, capacity-limit.ts), checked against figures worked out by hand in
// the comments and against a second-by-second reference of the quarter-hour.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { p1Demand } from '../../src/p1/demand.js';
import { interpretTelegram } from '../../src/p1/interpret.js';
import { parseTelegram } from '../../src/p1/telegram.js';
import { capKw, energyDrawnKwh, FLUVIUS_BILLING_FLOOR_KW, kwToCurrentPerPhaseA, newPeakCost, quarterHourAllowance, quarterHourStartMs, QUARTER_HOUR_MS } from '../../src/planning/capacity.js';
import { capacityLimit, type CapacitySettings } from '../../src/planning/capacity-limit.js';
import { mulberry32 } from '../../src/sim/prng.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';

const fluvius = () => readFileSync(sharedData('dsmr/fluvius_v171.txt'), 'latin1');
/** The telegram from '/' to '!' as the framer hands it on. */
const framed = (text: string) => text.slice(0, text.indexOf('!') + 1);

describe.skipIf(!hasSharedData)('the capacity objects of a real Fluvius telegram', () => {
  it('reads 1-0:1.4.0, 1-0:1.6.0 with its time and the three months of 0-0:98.1.0 (summer time S = UTC+2, winter W = UTC+1)', () => {
    const demand = p1Demand(parseTelegram(framed(fluvius())));
    expect(demand).toEqual({
      quarterHourAverageKw: 2.351,
      // 1-0:1.6.0(200509134558S)(02.589*kW)
      monthPeak: { month: '2020-05', closedAtMs: null, atMs: Date.parse('2020-05-09T11:45:58Z'), kw: 2.589 },
      // Each month as the meter closed it (the next month's first midnight), its peak's time and value: April, March, February.
      history: [
        { month: '2020-04', closedAtMs: Date.parse('2020-04-30T22:00:00Z'), atMs: Date.parse('2020-04-23T17:25:38Z'), kw: 3.695 },
        { month: '2020-03', closedAtMs: Date.parse('2020-03-31T22:00:00Z'), atMs: Date.parse('2020-03-05T10:21:39Z'), kw: 5.98 },
        // The meter writes the 1 March close with S; the peak of 10 February with W.
        { month: '2020-02', closedAtMs: Date.parse('2020-02-29T22:00:00Z'), atMs: Date.parse('2020-02-10T02:54:21Z'), kw: 4.318 },
      ],
    });
  });

  it('keeps them out of the measurement: the metrics are the contract vocabulary only', () => {
    const outcome = interpretTelegram(framed(fluvius()));
    if (outcome.kind !== 'ok') throw new Error(outcome.kind);
    expect(outcome.reading.demand?.monthPeak?.kw).toBe(2.589);
    const names = outcome.reading.metrics.map((m) => m.name);
    expect(names.filter((n) => /demand|peak/.test(n))).toEqual([]);
    expect(names).toContain('total_active_power');
  });

  it('refuses the whole telegram when a capacity object is garbled (a wrong unit, a history whose count does not match)', () => {
    const text = framed(fluvius());
    expect(interpretTelegram(text.replace('1-0:1.4.0(02.351*kW)', '1-0:1.4.0(02.351*kWh)')).kind).toBe('invalid');
    expect(interpretTelegram(text.replace('0-0:98.1.0(3)', '0-0:98.1.0(4)')).kind).toBe('invalid');
    expect(interpretTelegram(text.replace('1-0:1.6.0(200509134558S)', '1-0:1.6.0(200509136058S)')).kind).toBe('invalid');
  });

  it('a Dutch DSMR 5 telegram has none', () => {
    expect(p1Demand(parseTelegram(framed(readFileSync(sharedData('dsmr/v5.txt'), 'latin1'))))).toBeNull();
  });
});

describe('the quarter-hour cap rule', () => {
  const start = Date.parse('2026-01-15T10:00:00Z');

  it('the cap is the larger of the month peak, the target and the 2.5 kW floor', () => {
    const s = { targetKw: null, marginKw: 0, floorKw: FLUVIUS_BILLING_FLOOR_KW };
    expect(capKw(null, s)).toBe(2.5);
    expect(capKw(1.2, s)).toBe(2.5);
    expect(capKw(4.1, s)).toBe(4.1);
    expect(capKw(4.1, { ...s, targetKw: 6 })).toBe(6);
    expect(capKw(4.1, { ...s, targetKw: 3 })).toBe(4.1);
  });

  it('quarter-hours start on UTC quarter-hours (Belgian time is UTC+1 or +2)', () => {
    expect(quarterHourStartMs(Date.parse('2026-03-29T01:14:59.999Z'))).toBe(Date.parse('2026-03-29T01:00:00Z'));
    expect(quarterHourStartMs(Date.parse('2026-03-29T01:15:00Z'))).toBe(Date.parse('2026-03-29T01:15:00Z'));
    expect(QUARTER_HOUR_MS).toBe(15 * 60_000);
  });

  it('at the start of the quarter-hour: cap − other load', () => {
    // budget 3 kW × 0.25 h = 0.75 kWh; other 1 kW × 0.25 h = 0.25 kWh; (0.75 − 0.25) / 0.25 h = 2 kW
    const a = quarterHourAllowance({ nowMs: start, quarterStartMs: start, energyDrawnKwh: 0, otherLoadKw: 1, capKw: 3 });
    expect(a).toMatchObject({ allowedKw: 2, restKw: 2, steadyKw: 2, projectedAverageKw: 3, secondsLeft: 900 });
  });

  it('half-way after drawing 4 kW on average: charging makes up for it in the rest', () => {
    // drawn 4 kW × 0.125 h = 0.5 kWh; left 0.75 − 0.5 = 0.25 kWh; other 1 kW × 0.125 h = 0.125; 0.125 kWh / 0.125 h = 1 kW
    const a = quarterHourAllowance({ nowMs: start + 450_000, quarterStartMs: start, energyDrawnKwh: 0.5, otherLoadKw: 1, capKw: 3 });
    expect(a).toMatchObject({ allowedKw: 1, restKw: 1, steadyKw: 2, projectedAverageKw: 3, secondsLeft: 450 });
  });

  it('half-way after drawing little: no catching up beyond cap − other load (it would carry over into the next quarter-hour)', () => {
    // drawn 1 kW × 0.125 h = 0.125 kWh; (0.75 − 0.125 − 0.125) / 0.125 = 4 kW, steady 3 − 1 = 2 kW
    const a = quarterHourAllowance({ nowMs: start + 450_000, quarterStartMs: start, energyDrawnKwh: 0.125, otherLoadKw: 1, capKw: 3 });
    expect(a).toMatchObject({ allowedKw: 2, restKw: 4, steadyKw: 2 });
  });

  it('nothing when the quarter-hour is already over the cap; solar fed in may be used', () => {
    // 6 kW for 10 min = 1 kWh > 0.75 kWh
    expect(quarterHourAllowance({ nowMs: start + 600_000, quarterStartMs: start, energyDrawnKwh: 1, otherLoadKw: 0.5, capKw: 3 }).allowedKw).toBe(0);
    // feeding in 2 kW: 2.5 + 2 = 4.5 kW of charging keeps the import at 2.5 kW
    expect(quarterHourAllowance({ nowMs: start, quarterStartMs: start, energyDrawnKwh: 0, otherLoadKw: -2, capKw: 2.5 }).allowedKw).toBe(4.5);
  });

  it('charging at the allowance to the end never takes the quarter-hour over the cap (500 random cases, stepped second by second)', () => {
    const random = mulberry32(34);
    let checked = 0;
    for (let i = 0; i < 500; i++) {
      const capKw = 2.5 + random() * 6;
      const elapsedS = Math.floor(random() * 899);
      const otherKw = random() * 5;
      const drawnKwh = (random() * 10 * elapsedS) / 3600;
      const a = quarterHourAllowance({ nowMs: start + elapsedS * 1000, quarterStartMs: start, energyDrawnKwh: drawnKwh, otherLoadKw: otherKw, capKw });
      // The reference: the energy of the quarter-hour, second by second, with charging at the allowance.
      let kwh = drawnKwh;
      for (let t = elapsedS; t < 900; t++) kwh += (otherKw + a.allowedKw) / 3600;
      const averageKw = kwh * 4;
      // Within the cap unless the other load alone already takes it over (then nothing is allowed).
      if (a.allowedKw > 0) {
        expect(averageKw).toBeLessThanOrEqual(capKw + 1e-3);
        checked++;
      } else {
        // Nothing allowed only where the other load alone fills the quarter-hour's budget, or draws the cap by itself.
        const fills = drawnKwh + (otherKw * (900 - elapsedS)) / 3600 >= capKw / 4 - 1e-3;
        expect(fills || otherKw >= capKw - 1e-3).toBe(true);
      }
    }
    expect(checked).toBeGreaterThan(200);
  });

  it('energy drawn so far: the meter\'s running average over the elapsed part, then the site\'s power since the telegram', () => {
    const at = start + 450_000;
    // 2 kW × 450 s + 3 kW × 10 s = 0.25 + 0.008333 kWh
    expect(energyDrawnKwh({ nowMs: at + 10_000, readingAtMs: at, averageKw: 2, sitePowerKw: 3 })).toBeCloseTo(0.25 + 30 / 3600, 9);
    // A telegram of the quarter-hour before: only the power since this one began counts.
    expect(energyDrawnKwh({ nowMs: start + 5_000, readingAtMs: start - 2_000, averageKw: 9, sitePowerKw: 3.6 })).toBeCloseTo(0.005, 9);
  });

  it('kW as a current per phase at the most phases; a new peak costs its rise × €/kW per month', () => {
    expect(kwToCurrentPerPhaseA(6.9, 3, 230)).toBeCloseTo(10, 9);
    expect(kwToCurrentPerPhaseA(2.3, 1, 230)).toBeCloseTo(10, 9);
    expect(newPeakCost(4, 5.5, 3.37)).toBeCloseTo(5.055, 9);
    expect(newPeakCost(4, 3, 3.37)).toBe(0);
  });
});

describe('the cap as the site headroom (capacity-limit.ts)', () => {
  const nowMs = Date.parse('2026-01-15T10:05:00Z');
  const settings: CapacitySettings = { eurPerKwMonth: 3.37, targetKw: null, marginKw: 0.2, raisePeakForDeparture: true, maxReadingAgeMs: 60_000 };

  it('month peak 5 kW, margin 0.2, 300 s at 3 kW average, site 4.6 kW of which the charging 2.3 kW: other 2.3 kW', () => {
    const l = capacityLimit({ nowMs, demand: { sampledAtMs: nowMs, quarterHourAverageKw: 3, monthPeakKw: 5, monthPeakAtMs: null }, sitePower: { w: 4600, sampledAtMs: nowMs }, plannedChargingW: 2300, phases: 3, voltageV: 230, settings });
    // limit 4.8; drawn 3 × 300/3600 = 0.25 kWh; budget 1.2; rest (1.2 − 0.25 − 2.3 × 600/3600) / (600/3600) = 3.4; steady 4.8 − 2.3 = 2.5
    expect(l).toMatchObject({ state: 'measured', capKw: 5, limitKw: 4.8, otherLoadKw: 2.3, allowedKw: 2.5, energyDrawnKwh: 0.25 });
    expect(l.headroomA).toBeCloseTo(Math.floor((2500 / 690) * 100) / 100, 9);
  });

  it('a silent site meter holds charging; a meter without 1-0:1.4.0 / 1-0:1.6.0 counts the quarter-hour at the floor cap and says why', () => {
    const stale = capacityLimit({ nowMs, demand: null, sitePower: { w: 1000, sampledAtMs: nowMs - 120_000 }, plannedChargingW: null, phases: 3, voltageV: 230, settings });
    expect(stale).toMatchObject({ state: 'stale', allowedKw: 0, headroomA: 0 });
    const blind = capacityLimit({ nowMs, demand: null, sitePower: { w: 1000, sampledAtMs: nowMs }, plannedChargingW: null, phases: 3, voltageV: 230, settings });
    expect(blind).toMatchObject({ state: 'no-demand', capKw: 2.5, limitKw: 2.3, allowedKw: 1.3 });
    expect(blind.note).toContain('Mijn Fluvius');
  });
});
