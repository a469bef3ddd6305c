// A plan as an OCPP SetChargingProfile request (src/ocpp/charging-profile.ts), on the worked
// example of docs/planning.md: real NL prices of Sunday 2025-05-11, plugged in at 06:20Z,
// leaving at 16:00Z, 30 kWh from a 16 A three-phase wallbox.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { chargingProfileRequest, chargingRateUnitFor, limitForCurrentA, limitForPowerW } from '../../src/ocpp/charging-profile.js';
import { planCharging } from '../../src/planning/plan.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

/** A SetChargingProfile with one period at this limit, as the gateway sends it. */
const requestWithLimit = (limit: number, unit: 'A' | 'W' = 'A') => ({
  connectorId: 1,
  csChargingProfiles: { chargingProfileId: 12, transactionId: 1, stackLevel: 0, chargingProfilePurpose: 'TxProfile', chargingProfileKind: 'Absolute', chargingSchedule: { chargingRateUnit: unit, chargingSchedulePeriod: [{ startPeriod: 0, limit }] } },
});
// The validators ocpp-rpc's strict mode uses (its copy of the OCPP 1.6 schemas and Ajv);
// CommonJS, and its typings do not match what it exports.
const standardValidators = createRequire(import.meta.url)('ocpp-rpc/lib/standard-validators.js') as Array<{ subprotocol: string; validate(schemaId: string, params: unknown): unknown }>;
const ocpp16 = standardValidators.find((v) => v.subprotocol === 'ocpp1.6')!;

describe('limitForCurrentA', () => {
  it('rounds down to a tenth of an ampere, never above the plan', () => {
    expect([16, 11.48, 11.5, 6, 6.49, 0, 11.4, 0.3, 0.1 + 0.2].map(limitForCurrentA)).toEqual([16, 11.4, 11.5, 6, 6.4, 0, 11.4, 0.3, 0.3]);
  });

  it('every tenth from 0 to 80 A it can send passes ocpp-rpc\'s strict OCPP 1.6 check (multipleOf 0.1), whole watts too', () => {
    const refused: number[] = [];
    for (let tenths = 0; tenths <= 800; tenths++) {
      const limit = limitForCurrentA(tenths / 10 + 0.04);
      try {
        ocpp16.validate('urn:SetChargingProfile.req', requestWithLimit(limit));
      } catch {
        refused.push(limit);
      }
    }
    expect(refused).toEqual([]);
    for (const currentA of [6, 11.48, 16, 31.7]) expect(() => ocpp16.validate('urn:SetChargingProfile.req', requestWithLimit(limitForPowerW(currentA * 690), 'W'))).not.toThrow();
    // The check still refuses what OCPP does not allow: two decimals.
    expect(() => ocpp16.validate('urn:SetChargingProfile.req', requestWithLimit(11.48))).toThrow(/multipleOf/);
  });
});

describe('chargingRateUnitFor', () => {
  it('W only for a charger that declares Power and not Current; A otherwise', () => {
    expect(['Power', 'W', ' power ', 'Current', 'Current,Power', 'Power,Current', 'A,W', '', null, undefined].map(chargingRateUnitFor)).toEqual(['W', 'W', 'W', 'A', 'A', 'A', 'A', 'A', 'A', 'A']);
  });
});

describe.skipIf(!hasSharedData)(`the worked example as a charging profile${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  it('charges 10:00-12:00 at 16 A and 12:00-13:00 at 11.4 A, 0 A before and after, until departure', () => {
    const nowMs = Date.parse('2025-05-11T06:20:00Z');
    const departureMs = Date.parse('2025-05-11T16:00:00Z');
    const periods = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL'))
      .periods.filter((p) => p.startMs >= nowMs - 3_600_000 && p.startMs < departureMs)
      .map((p) => ({ startMs: p.startMs, durationS: p.durationS, pricePerMwh: p.pricePerMwh, lowerPerMwh: p.pricePerMwh, upperPerMwh: p.pricePerMwh, forecast: false }));
    const plan = planCharging({ nowMs, departureMs, energyWh: 30_000, charger: { maxCurrentA: 16, minCurrentA: 6, phases: 3, voltageV: 230 }, periods });
    const withoutTx = chargingProfileRequest(plan, { connectorId: 1, transactionId: null, plannedAtMs: nowMs, departureMs });
    expect(withoutTx).toEqual({
      connectorId: 1,
      csChargingProfiles: {
        chargingProfileId: 11,
        stackLevel: 0,
        chargingProfilePurpose: 'TxDefaultProfile',
        chargingProfileKind: 'Absolute',
        validFrom: '2025-05-11T06:20:00.000Z',
        validTo: '2025-05-11T16:00:00.000Z',
        chargingSchedule: {
          duration: 34_800,
          startSchedule: '2025-05-11T06:20:00.000Z',
          chargingRateUnit: 'A',
          // 06:20 → 10:00 is 13,200 s; 12:00 is 20,400 s; 13:00 is 24,000 s. 11.48 A → 11.4 A.
          chargingSchedulePeriod: [
            { startPeriod: 0, limit: 0 },
            { startPeriod: 13_200, limit: 16 },
            { startPeriod: 20_400, limit: 11.4 },
            { startPeriod: 24_000, limit: 0 },
          ],
        },
      },
    });
    const withTx = chargingProfileRequest(plan, { connectorId: 2, transactionId: 17, plannedAtMs: nowMs + 400, departureMs });
    expect(withTx.csChargingProfiles).toMatchObject({ chargingProfileId: 22, transactionId: 17, chargingProfilePurpose: 'TxProfile' });
    expect(withTx.csChargingProfiles.chargingSchedule.startSchedule).toBe('2025-05-11T06:20:00.000Z');
  });

  it('a plan that charges nothing is one 0 A period', () => {
    const nowMs = Date.parse('2025-05-11T06:20:00Z');
    const plan = planCharging({ nowMs, departureMs: nowMs + 3_600_000, energyWh: 1000, charger: { maxCurrentA: 16, minCurrentA: 6, phases: 3, voltageV: 230 }, periods: [] });
    expect(chargingProfileRequest(plan, { connectorId: 1, transactionId: null, plannedAtMs: nowMs, departureMs: nowMs + 3_600_000 }).csChargingProfiles.chargingSchedule.chargingSchedulePeriod).toEqual([{ startPeriod: 0, limit: 0 }]);
  });
});
