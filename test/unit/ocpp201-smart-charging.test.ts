// Pure rules of 2.0.1 smart charging: the gateway's 1.6-shaped limit calls in their 2.0.1 form
// (src/ocpp/v201/charging-profiles.ts), each checked against the official 2.0.1 schema by our
// validator, and an external limit's schedule as a current now (src/planning/external-limit.ts),
// against hand-worked values; and what a station's device model says it takes, as the strategy
// ladder reads it (src/ocpp/v201/smart-charging-capabilities.ts).
import { describe, expect, it } from 'vitest';
import type { SetChargingProfileRequest } from '../../src/ocpp/charging-profile.js';
import { clearChargingProfile201, compositeScheduleAnswer16, limitCall201, setChargingProfile201 } from '../../src/ocpp/v201/charging-profiles.js';
import { chooseStrategy } from '../../src/ocpp/charging-strategy.js';
import { capabilitiesFromDeviceModel } from '../../src/ocpp/v201/smart-charging-capabilities.js';
import { ocpp201Validator } from '../../src/ocpp/validator.js';
import { lowestLimitA, scheduleLimitA } from '../../src/planning/external-limit.js';

const ids = { chargerTransactionId: (id: number) => (id === 7 ? 'station-tx-7' : null) };
const profile = (purpose: 'TxProfile' | 'TxDefaultProfile' | 'ChargePointMaxProfile', connectorId: number, transactionId?: number): SetChargingProfileRequest => ({
  connectorId,
  csChargingProfiles: {
    chargingProfileId: connectorId * 10 + 2,
    ...(transactionId === undefined ? {} : { transactionId }),
    stackLevel: 0,
    chargingProfilePurpose: purpose,
    chargingProfileKind: 'Absolute',
    validFrom: '2026-11-29T08:00:00.000Z',
    validTo: '2026-11-29T16:00:00.000Z',
    chargingSchedule: { duration: 28_800, startSchedule: '2026-11-29T08:00:00.000Z', chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 11.4 }, { startPeriod: 900, limit: 0, numberPhases: 1 }] },
  },
});
const valid = (call: ReturnType<typeof limitCall201>) => {
  if ('refused' in call) throw new Error(call.refused);
  ocpp201Validator().validate(`urn:${call.action}.req`, call.request);
  return call;
};

describe('the limit calls in their OCPP 2.0.1 form', () => {
  it('a TxProfile carries the station\'s transaction id and goes on its EVSE; the schedule is one array element with its id', () => {
    const call = valid(setChargingProfile201(profile('TxProfile', 2, 7), ids));
    expect(call).toEqual({
      action: 'SetChargingProfile',
      request: {
        evseId: 2,
        chargingProfile: {
          id: 22, stackLevel: 0, chargingProfilePurpose: 'TxProfile', chargingProfileKind: 'Absolute', validFrom: '2026-11-29T08:00:00.000Z', validTo: '2026-11-29T16:00:00.000Z', transactionId: 'station-tx-7',
          chargingSchedule: [{ id: 22, startSchedule: '2026-11-29T08:00:00.000Z', duration: 28_800, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 11.4 }, { startPeriod: 900, limit: 0, numberPhases: 1 }] }],
        },
      },
    });
    // A transaction the station never had: not sent (the dispatcher counts it as unanswered, not as a refusal).
    expect(setChargingProfile201(profile('TxProfile', 2, 8), ids)).toHaveProperty('refused');
  });

  it('a ChargePointMaxProfile is a ChargingStationMaxProfile on EVSE 0; a TxDefaultProfile has no transaction', () => {
    const max = valid(setChargingProfile201(profile('ChargePointMaxProfile', 0), ids));
    expect(max).toMatchObject({ request: { evseId: 0, chargingProfile: { chargingProfilePurpose: 'ChargingStationMaxProfile' } } });
    const def = valid(setChargingProfile201(profile('TxDefaultProfile', 1), ids));
    expect(def).toMatchObject({ request: { evseId: 1, chargingProfile: { chargingProfilePurpose: 'TxDefaultProfile' } } });
    expect(def.request.chargingProfile).not.toHaveProperty('transactionId');
  });

  it('ClearChargingProfile by id, or by criteria; nothing but SetChargingProfile among the gateway\'s own (the others go by the operator forms)', () => {
    expect(valid(clearChargingProfile201({ id: 21 }))).toEqual({ action: 'ClearChargingProfile', request: { chargingProfileId: 21 } });
    expect(valid(clearChargingProfile201({ connectorId: 0, chargingProfilePurpose: 'ChargePointMaxProfile', stackLevel: 1 }))).toEqual({ action: 'ClearChargingProfile', request: { chargingProfileCriteria: { evseId: 0, chargingProfilePurpose: 'ChargingStationMaxProfile', stackLevel: 1 } } });
    expect(limitCall201('ClearChargingProfile', { id: 21 }, ids)).toHaveProperty('refused');
    expect(limitCall201('GetConfiguration', {}, ids)).toHaveProperty('refused');
  });

  it('a composite schedule comes back in the 1.6 shape', () => {
    const schedule = { evseId: 1, duration: 300, scheduleStart: '2026-11-29T08:00:00Z', chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 10 }] };
    expect(compositeScheduleAnswer16({ status: 'Accepted', schedule })).toEqual({ status: 'Accepted', schedule, connectorId: 1, scheduleStart: '2026-11-29T08:00:00Z', chargingSchedule: { duration: 300, startSchedule: '2026-11-29T08:00:00Z', chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 10 }] } });
    expect(compositeScheduleAnswer16({ status: 'Rejected' })).toEqual({ status: 'Rejected' });
  });
});

describe('an external limit now', () => {
  const at = Date.parse('2026-11-29T08:00:00Z');
  const connector = { phases: 3, voltageV: 230 };
  it('the period in force of an absolute schedule; none before it or after its duration', () => {
    const s = { startSchedule: '2026-11-29T08:00:00Z', duration: 3600, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 10 }, { startPeriod: 1800, limit: 6 }] };
    expect(scheduleLimitA(s, 0, at - 1, connector)).toBeNull();
    expect(scheduleLimitA(s, 0, at + 1799_000, connector)).toBe(10);
    expect(scheduleLimitA(s, 0, at + 1800_000, connector)).toBe(6);
    expect(scheduleLimitA(s, 0, at + 3600_000, connector)).toBeNull();
  });
  it('a relative schedule runs from when it was received; W at the period\'s phases (3 by default) and the connector\'s voltage; the lowest of several', () => {
    const w = { chargingRateUnit: 'W', chargingSchedulePeriod: [{ startPeriod: 0, limit: 6900 }] };
    // 6900 W / (3 × 230 V) = 10 A; on one phase 30 A.
    expect(scheduleLimitA(w, at, at + 5000, connector)).toBeCloseTo(10, 9);
    expect(scheduleLimitA({ ...w, chargingSchedulePeriod: [{ startPeriod: 0, limit: 6900, numberPhases: 1 }] }, at, at, connector)).toBeCloseTo(30, 9);
    expect(scheduleLimitA(w, at, at - 1, connector)).toBeNull();
    expect(lowestLimitA([{ schedule: w, receivedAtMs: at }, { schedule: { chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 8 }] }, receivedAtMs: at }], at, connector)).toBe(8);
  });
});

describe('what a 2.0.1 station takes, from its device model', () => {
  const model = (values: Record<string, string>) => (component: string, variable: string) => (component === 'SmartChargingCtrlr' ? values[variable] : undefined);
  it('SmartChargingCtrlr RateUnit, PeriodsPerSchedule, ProfileStackLevel as the 1.6 keys; Enabled false is no smart charging; nothing reported, nothing known', () => {
    expect(capabilitiesFromDeviceModel(model({ Enabled: 'true', RateUnit: 'A,W', PeriodsPerSchedule: '24', ProfileStackLevel: '8' }))).toEqual({ supportedFeatureProfiles: null, allowedChargingRateUnit: 'A,W', maxPeriods: 24, maxStackLevel: 8 });
    expect(capabilitiesFromDeviceModel(model({ Enabled: 'False', RateUnit: 'W', PeriodsPerSchedule: 'many' }))).toEqual({ supportedFeatureProfiles: ['Core'], allowedChargingRateUnit: 'W', maxPeriods: null, maxStackLevel: null });
    expect(capabilitiesFromDeviceModel(model({}))).toEqual({ supportedFeatureProfiles: null, allowedChargingRateUnit: null, maxPeriods: null, maxStackLevel: null });
  });
  it('the strategy ladder takes them: W only, a plan longer than PeriodsPerSchedule goes by period; disabled, remote-start-stop', () => {
    const choose = (values: Record<string, string>, planPeriods: number) => chooseStrategy({ capabilities: capabilitiesFromDeviceModel(model(values)), refusals: [], transactionOpen: true, planPeriods, soleConnector: false });
    expect(choose({ RateUnit: 'W' }, 4)).toMatchObject({ name: 'tx-profile', rateUnit: 'W' });
    expect(choose({ PeriodsPerSchedule: '3' }, 10)).toMatchObject({ name: 'tx-profile-by-period', periodsPerProfile: 3 });
    expect(choose({ Enabled: 'false' }, 4)).toMatchObject({ name: 'remote-start-stop' });
  });
});
