// The §14a rule (planning/dimmed-limit.ts) against BK6-22-300 Annex 1 Ziff. 4.5.2 worked by hand.
import { describe, expect, it } from 'vitest';
import { dimmedChargerCurrentA, minimumPowerW, patternLimit, simultaneityFactor } from '../../src/planning/dimmed-limit.js';

describe('P_min,14a (BK6-22-300 Annex 1 Ziff. 4.5)', () => {
  it('one charge point keeps 4.2 kW', () => {
    expect(minimumPowerW(1, [])).toBe(4200);
  });
  it('several devices behind one EMS: 4.2 kW + (n - 1) x GZF x 4.2 kW', () => {
    // n = 3: GZF 0.75 -> 4.2 + 2 x 0.75 x 4.2 = 10.5 kW
    expect(minimumPowerW(3, [])).toBe(10500);
    // n = 2: 4.2 + 0.8 x 4.2 = 7.56 kW; 9 and more: 0.45
    expect(minimumPowerW(2, [])).toBe(7560);
    expect(simultaneityFactor(9)).toBe(0.45);
    expect(simultaneityFactor(40)).toBe(0.45);
    expect(minimumPowerW(10, [])).toBe(Math.round((4.2 + 9 * 0.45 * 4.2) * 1000));
  });
  it('heat pumps count as one device of their summed power; above 11 kW it keeps 0.4 x that sum', () => {
    // two chargers + heat pumps 8 + 6 kW (one device of 14 kW > 11 kW): max(0.4 x 14) + 2 x 0.75 x 4.2
    expect(minimumPowerW(2, [{ kind: 'heat-pump', connectionPowerKw: 8 }, { kind: 'heat-pump', connectionPowerKw: 6 }])).toBe(Math.round((5.6 + 2 * 0.75 * 4.2) * 1000));
    // a 3 kW battery is no controllable device: not counted
    expect(minimumPowerW(1, [{ kind: 'storage', connectionPowerKw: 3 }])).toBe(4200);
  });
});

describe('the dimmed current and the contact patterns', () => {
  it('takes the fixed loads off and spreads the rest over the phases, rounded down', () => {
    // 10.5 kW - 2 kW heat pump on 3 x 230 V: 8500 / 690 = 12.318... -> 12.31 A
    expect(dimmedChargerCurrentA(10500, 2000, 230, 3)).toBe(12.31);
    expect(dimmedChargerCurrentA(4200, 6000, 230, 3)).toBe(0);
  });
  it('an unknown pattern is the most restrictive configured limit, never no limit', () => {
    const patterns = [
      { contacts: [false, false], limit: 'none' as const },
      { contacts: [true, false], limit: 'minimum' as const },
    ];
    expect(patternLimit([false, false], patterns)).toBe('none');
    expect(patternLimit([true, false], patterns)).toBe('minimum');
    expect(patternLimit([true, true], patterns)).toBe('minimum');
  });
});
