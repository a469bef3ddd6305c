// What the simulated charger lets a car draw under the profiles it was sent.
import { describe, expect, it } from 'vitest';
import { allowedCurrentA, clearProfiles, receivedProfile, type ReceivedProfile } from '../../src/sim/charge-limit.js';

const connector = { connectorId: 1, maxCurrentA: 16, phases: 3, voltageV: 230 };
const T0 = Date.parse('2026-11-29T12:00:00Z');

function profile(purpose: ReceivedProfile['purpose'], periods: Array<[number, number]>, o: Partial<ReceivedProfile> = {}): ReceivedProfile {
  return { connectorId: 1, chargingProfileId: 1, stackLevel: 0, purpose, startScheduleMs: T0, durationS: 7200, rateUnit: 'A', periods: periods.map(([s, limit]) => ({ startPeriodS: s, limit })), ...o };
}

describe('simulated charger: allowed current', () => {
  it('is the connector maximum without profiles', () => {
    expect(allowedCurrentA([], connector, T0, 7)).toBe(16);
  });
  it('follows a TxProfile of the running transaction period by period, and ends with its duration', () => {
    const p = profile('TxProfile', [[0, 0], [3600, 10]], { transactionId: 7 });
    expect(allowedCurrentA([p], connector, T0 + 60_000, 7)).toBe(0);
    expect(allowedCurrentA([p], connector, T0 + 3_600_000, 7)).toBe(10);
    expect(allowedCurrentA([p], connector, T0 + 7_200_000, 7)).toBe(16);
    // Another transaction's TxProfile does not apply.
    expect(allowedCurrentA([p], connector, T0 + 60_000, 8)).toBe(16);
  });
  it('takes the TxProfile over the TxDefaultProfile, caps both with ChargePointMaxProfile, and the highest stack level', () => {
    const def = profile('TxDefaultProfile', [[0, 8]], { chargingProfileId: 2 });
    const tx = profile('TxProfile', [[0, 12]], { chargingProfileId: 3 });
    const max = profile('ChargePointMaxProfile', [[0, 10]], { chargingProfileId: 4, connectorId: 0 });
    expect(allowedCurrentA([def], connector, T0, 1)).toBe(8);
    expect(allowedCurrentA([def, tx], connector, T0, 1)).toBe(12);
    expect(allowedCurrentA([def, tx, max], connector, T0, 1)).toBe(10);
    const higher = profile('TxProfile', [[0, 6]], { chargingProfileId: 5, stackLevel: 2 });
    expect(allowedCurrentA([tx, higher], connector, T0, 1)).toBe(6);
  });
  it('turns W into A per phase (3 × 230 V, or the period\'s numberPhases)', () => {
    const w = receivedProfile({ connectorId: 1, csChargingProfiles: { chargingProfileId: 9, stackLevel: 0, chargingProfilePurpose: 'TxDefaultProfile', chargingSchedule: { startSchedule: new Date(T0).toISOString(), chargingRateUnit: 'W', chargingSchedulePeriod: [{ startPeriod: 0, limit: 6900 }, { startPeriod: 60, limit: 2300, numberPhases: 1 }] } } }, T0);
    expect(allowedCurrentA([w], connector, T0, 1)).toBeCloseTo(10, 6);
    expect(allowedCurrentA([w], connector, T0 + 61_000, 1)).toBeCloseTo(10, 6);
  });
  it('clears by id, or by connector and purpose', () => {
    const a = profile('TxProfile', [[0, 6]], { chargingProfileId: 1 });
    const b = profile('TxDefaultProfile', [[0, 6]], { chargingProfileId: 2 });
    expect(clearProfiles([a, b], { id: 1 })).toEqual([b]);
    expect(clearProfiles([a, b], { connectorId: 1, chargingProfilePurpose: 'TxDefaultProfile' })).toEqual([a]);
    expect(clearProfiles([a, b], {})).toEqual([]);
  });
});
