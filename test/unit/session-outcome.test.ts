// The pure rule for "charging immediately" over a completed session's energy and time.
import { describe, expect, it } from 'vitest';
import { immediateCharging, sessionOutcomeCost } from '../../src/planning/session-outcome.js';
import { tariffFromConfig } from '../../src/pricing/tariff.js';

const T0 = Date.parse('2025-05-11T06:20:00Z');
const H = 3_600_000;
const hourly = (fromHour: number, prices: number[]) =>
  prices.map((pricePerMwh, i) => ({ marketArea: 'NL', startMs: Date.parse('2025-05-11T00:00:00Z') + (fromHour + i) * H, durationS: 3600, pricePerMwh }));

describe('immediateCharging', () => {
  it('starts at plug-in at the maximum power and ends when the energy is in', () => {
    expect(immediateCharging(T0, T0 + 10 * H, 22_080, 11_040)).toEqual({ startMs: T0, endMs: T0 + 2 * H, energyWh: 22_080, powerW: 11_040 });
  });

  it('takes the whole session at its average power when the maximum could not have delivered the energy by the end', () => {
    const r = immediateCharging(T0, T0 + H, 7_400, 3_680);
    expect(r).toMatchObject({ startMs: T0, endMs: T0 + H, energyWh: 7_400 });
    expect(r.powerW).toBeCloseTo(7_400, 6);
  });

  it('no energy: nothing charged', () => {
    expect(immediateCharging(T0, T0 + H, 0, 11_040)).toMatchObject({ endMs: T0, energyWh: 0 });
    expect(() => immediateCharging(T0, T0 + H, 1000, 0)).toThrow(RangeError);
  });
});

describe('sessionOutcomeCost', () => {
  it('prices the session and charging immediately on the same periods; says where a price is missing', () => {
    // 2 kWh evenly over 08:00-10:00 at 10 and 30 /MWh: 0.04; immediately at 2 kW from 08:00: all in the 10 /MWh hour, 0.02.
    const readings = [{ timestampMs: T0 - 20 * 60_000 + 2 * H, energyKwh: 0 }, { timestampMs: T0 - 20 * 60_000 + 4 * H, energyKwh: 2 }];
    const r = sessionOutcomeCost(readings, 2000, hourly(8, [10, 30]), () => 3600);
    expect(r).toMatchObject({ ok: true, actualCost: 0.04, immediateCost: 0.02, energyWh: 2000 });
    expect(sessionOutcomeCost(readings, 2000, hourly(8, [10]), () => 3600)).toEqual({ ok: false, missingFromMs: readings[0].timestampMs + H });
  });

  it('under a tariff both costs are what the cdr bills: energy, margin, grid fee and the session fee', () => {
    // 10 kWh evenly 08:00Z-10:00Z at 100 then 200 EUR/MWh: day-ahead 0.5 + 1.0 = 1.5; at 10 kW immediately all in the first hour: 1.0.
    // Margin 0.01 and grid fee 0.05 per kWh on 10 kWh = 0.6 each way, session fee 0.3 each way:
    // actual 1.5 + 0.6 + 0.3 = 2.4, immediately 1.0 + 0.6 + 0.3 = 1.9.
    const tariff = tariffFromConfig({ valid_from: '2025-01-01', day_ahead_multiplier: 1, supplier_margin_per_kwh: 0.01, grid_fee: { per_kwh: 0.05, zones: [] }, session_fee: 0.3, vat_rate: 0.21 }, 'Europe/Amsterdam');
    const readings = [
      { timestampMs: Date.parse('2025-05-11T08:00:00Z'), energyKwh: 0 },
      { timestampMs: Date.parse('2025-05-11T10:00:00Z'), energyKwh: 10 },
    ];
    expect(sessionOutcomeCost(readings, 10_000, hourly(8, [100, 200]), () => 3600)).toMatchObject({ ok: true, actualCost: 1.5, immediateCost: 1 });
    expect(sessionOutcomeCost(readings, 10_000, hourly(8, [100, 200]), () => 3600, tariff)).toMatchObject({ ok: true, actualCost: 2.4, immediateCost: 1.9 });
  });
});
