import { describe, expect, it } from 'vitest';
import { checkReading } from '../../src/modbus/sanity.js';

const limits = { maxPowerW: 50_000 };
const r = (sampledAtMs: number, values: Record<string, number>) => ({ sampledAtMs, values });

describe('sanity checks', () => {
  it('accepts a plausible sequence', () => {
    const a = r(0, { total_active_power: 2000, active_energy_import: 1_000_000 });
    const b = r(10_000, { total_active_power: 2100, active_energy_import: 1_000_006 });
    expect(checkReading(a, null, limits)).toEqual({ ok: true });
    expect(checkReading(b, a, limits)).toEqual({ ok: true });
  });

  it('drops NaN, infinities and empty readings', () => {
    expect(checkReading(r(0, { total_active_power: NaN }), null, limits)).toMatchObject({ ok: false, reason: 'not_a_number' });
    expect(checkReading(r(0, { voltage_l1: Infinity }), null, limits)).toMatchObject({ ok: false, reason: 'infinite' });
    expect(checkReading(r(0, { total_active_power: -Infinity }), null, limits)).toMatchObject({ ok: false, reason: 'infinite' });
    expect(checkReading(r(0, {}), null, limits)).toMatchObject({ ok: false, reason: 'no_value' });
  });

  it('drops power beyond the meter limit, either direction', () => {
    expect(checkReading(r(0, { total_active_power: 60_000 }), null, limits)).toMatchObject({ ok: false, reason: 'power_out_of_range' });
    expect(checkReading(r(0, { total_active_power: -60_000 }), null, limits)).toMatchObject({ ok: false, reason: 'power_out_of_range' });
    expect(checkReading(r(0, { total_active_power: -40_000 }), null, limits)).toEqual({ ok: true });
  });

  it('drops energy counters going backwards', () => {
    const a = r(0, { active_energy_import: 1_000_000, active_energy_export: 50 });
    expect(checkReading(r(10_000, { active_energy_import: 999_999, active_energy_export: 50 }), a, limits)).toMatchObject({ ok: false, reason: 'energy_backwards' });
    expect(checkReading(r(10_000, { active_energy_import: 1_000_000, active_energy_export: 40 }), a, limits)).toMatchObject({ ok: false, reason: 'energy_backwards' });
  });

  it('drops energy rising faster than the maximum power allows, but not after a long gap', () => {
    const a = r(0, { active_energy_import: 1_000_000 });
    // 50 kW for 10 s is 139 Wh; +1 kWh slack for coarse counters; 1,000 kWh is a glitch
    expect(checkReading(r(10_000, { active_energy_import: 2_000_000 }), a, limits)).toMatchObject({ ok: false, reason: 'energy_jump' });
    expect(checkReading(r(10_000, { active_energy_import: 1_000_900 }), a, limits)).toEqual({ ok: true });
    // after a day offline, 100 kWh more is plausible
    expect(checkReading(r(86_400_000, { active_energy_import: 1_100_000 }), a, limits)).toEqual({ ok: true });
  });
});
