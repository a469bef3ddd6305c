// A car's ISO 15118 charging needs (OCPP 2.0.1 NotifyEVChargingNeeds) as the connector's
// charging target (src/ocpp/v201/needs-target.ts), and the car's schedule against the
// connector's ceiling (ev-schedule-check.ts). Pure: hand-worked targets, no daemon; and the
// migration that lets a target's source be the car (an in-memory SQLite database).
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ConnectorConfig } from '../../src/config/types.js';
import { chooseStrategy, withCarScheduleTuples } from '../../src/ocpp/charging-strategy.js';
import { scheduleAboveCeiling } from '../../src/ocpp/v201/ev-schedule-check.js';
import { targetFromNeeds, type ChargingNeeds201, type NeedsInput } from '../../src/ocpp/v201/needs-target.js';
import { nextLocalTimeMs } from '../../src/planning/default-target.js';
import { planCharging } from '../../src/planning/plan.js';
import { ChargingTargetStore } from '../../src/store/charging-targets.js';
import { listMigrations, migrate } from '../../src/store/db.js';
import { EvChargingStore } from '../../src/store/ev-charging.js';

const NOW = Date.parse('2025-10-01T16:07:00Z');
const HOUR = 3_600_000;
const CONNECTOR: ConnectorConfig = { connector_id: 1, max_current_a: 16, min_current_a: 6, phases: 3, voltage_v: 230 };
const ac = (p: Partial<NonNullable<ChargingNeeds201['acChargingParameters']>> = {}) => ({ energyAmount: 18_000, evMinCurrent: 6, evMaxCurrent: 13, evMaxVoltage: 400, ...p });
const input = (needs: ChargingNeeds201, over: Partial<NeedsInput> = {}): NeedsInput => ({
  chargePointId: 'CS-1',
  evseId: 1,
  needs,
  connector: CONNECTOR,
  setting: 'chargers[0].connectors[0]',
  siteLimitA: 24,
  market: { code: 'NL', timeZone: 'Europe/Amsterdam' },
  nowMs: NOW,
  maxAheadMs: 8 * 24 * HOUR,
  ...over,
});
const target = (needs: ChargingNeeds201, over: Partial<NeedsInput> = {}) => {
  const made = targetFromNeeds(input(needs, over));
  if (made.kind !== 'target') throw new Error(`refused: ${JSON.stringify(made.refusal)}`);
  return made;
};
const refusal = (needs: ChargingNeeds201, over: Partial<NeedsInput> = {}) => {
  const made = targetFromNeeds(input(needs, over));
  if (made.kind !== 'refused') throw new Error('not refused');
  return made.refusal;
};

describe('targetFromNeeds', () => {
  it('AC three-phase with departure and energy: the target a client would type (charger.max_current_a 13, min 6), source ev, counted from now; the same plan', () => {
    const departure = '2025-10-02T06:00:00Z';
    const made = target({ requestedEnergyTransfer: 'AC_three_phase', departureTime: departure, acChargingParameters: ac() });
    const typed = { chargePointId: 'CS-1', connectorId: 1, marketArea: 'NL', departureMs: Date.parse(departure), energyWh: 18_000, maxCurrentA: 13, minCurrentA: 6, phases: 3, voltageV: 230, siteLimitA: null, siteOtherLoadA: null, updatedAtMs: NOW };
    expect(made.target).toEqual({ ...typed, source: 'ev' });
    expect(made.clamps).toEqual([]);
    expect(made.filledFromDefault).toEqual([]);
    // The plan is a function of the target's values only: the car's is the typed one's.
    const periods = Array.from({ length: 16 }, (_, i) => ({ startMs: Date.parse('2025-10-01T16:00:00Z') + i * HOUR, durationS: 3600, pricePerMwh: [90, 40, 120, 10, 10, 75][i % 6]!, lowerPerMwh: 0, upperPerMwh: 0, forecast: false }));
    const planOf = (t: Pick<typeof typed, 'departureMs' | 'energyWh' | 'maxCurrentA' | 'minCurrentA' | 'phases' | 'voltageV'>) => planCharging({ nowMs: NOW, departureMs: t.departureMs, energyWh: t.energyWh, charger: { maxCurrentA: t.maxCurrentA, minCurrentA: t.minCurrentA, phases: t.phases, voltageV: t.voltageV }, site: { limitA: 24 }, periods });
    expect(planOf(made.target)).toEqual(planOf(typed));
  });

  it('the car\'s limits are ceilings within the connector\'s: evMaxCurrent 32 on a 16 A connector is 16, evMinCurrent 2 under its 6 A minimum is 6 (both said as clamps)', () => {
    const made = target({ requestedEnergyTransfer: 'AC_three_phase', departureTime: '2025-10-02T06:00:00Z', acChargingParameters: ac({ evMaxCurrent: 32, evMinCurrent: 2 }) });
    expect([made.target.maxCurrentA, made.target.minCurrentA]).toEqual([16, 6]);
    expect(made.clamps.map((c) => [c.field, c.requested, c.applied, c.setting])).toEqual([
      ['charger.max_current_a', 32, 16, 'chargers[0].connectors[0].max_current_a'],
      ['charger.min_current_a', 2, 6, 'chargers[0].connectors[0].min_current_a'],
    ]);
    // A higher car minimum is kept (the car cannot charge below it).
    expect(target({ requestedEnergyTransfer: 'AC_three_phase', departureTime: '2025-10-02T06:00:00Z', acChargingParameters: ac({ evMinCurrent: 8 }) }).target.minCurrentA).toBe(8);
  });

  it('phases from requestedEnergyTransfer: single 1, two-phase planned as 1 (never counted above what the car takes), three 3 but never above a 1-phase connector\'s', () => {
    const phasesOf = (mode: ChargingNeeds201['requestedEnergyTransfer'], connector = CONNECTOR) => target({ requestedEnergyTransfer: mode, departureTime: '2025-10-02T06:00:00Z', acChargingParameters: ac() }, { connector }).target.phases;
    expect(phasesOf('AC_single_phase')).toBe(1);
    expect(phasesOf('AC_two_phase')).toBe(1);
    expect(phasesOf('AC_three_phase')).toBe(3);
    expect(phasesOf('AC_three_phase', { ...CONNECTOR, phases: 1 })).toBe(1);
  });

  it('DC: the car\'s most power as a current per phase of the supply (11 kW on 3 × 230 V: 15.9 A; without evMaxPower, evMaxCurrent × evMaxVoltage), at most the connector\'s', () => {
    const dc = (p: object) => target({ requestedEnergyTransfer: 'DC', departureTime: '2025-10-02T06:00:00Z', dcChargingParameters: { evMaxCurrent: 125, evMaxVoltage: 400, energyAmount: 30_000, ...p } }).target;
    expect(dc({ evMaxPower: 11_000 })).toMatchObject({ maxCurrentA: 15.9, minCurrentA: 6, phases: 3, energyWh: 30_000 });
    expect(dc({ evMaxCurrent: 20, evMaxVoltage: 400 }).maxCurrentA).toBe(11.5); // 8000 W / 690 V = 11.59
    expect(dc({}).maxCurrentA).toBe(16); // 50 kW: the connector's 16 A
  });

  it('what the car leaves out comes from the connector\'s default target; without one the needs are refused MissingParam', () => {
    const withDefault = { ...CONNECTOR, default_target: { departure_local_time: '07:30', energy_wh: 12_000 } };
    const noDeparture = target({ requestedEnergyTransfer: 'AC_three_phase', acChargingParameters: ac() }, { connector: withDefault });
    expect(noDeparture.target.departureMs).toBe(nextLocalTimeMs('Europe/Amsterdam', NOW, '07:30'));
    expect(noDeparture.target.departureMs).toBe(Date.parse('2025-10-02T05:30:00Z'));
    expect(noDeparture.filledFromDefault).toEqual(['departure']);
    const dcNoEnergy = target({ requestedEnergyTransfer: 'DC', departureTime: '2025-10-02T06:00:00Z', dcChargingParameters: { evMaxCurrent: 100, evMaxVoltage: 400 } }, { connector: withDefault });
    expect([dcNoEnergy.target.energyWh, dcNoEnergy.filledFromDefault]).toEqual([12_000, ['energy']]);
    // OCTT's ISO15118SmartCharging state sends requestedEnergyTransfer alone.
    expect(refusal({ requestedEnergyTransfer: 'AC_three_phase' })).toMatchObject({ status: 'Rejected', reasonCode: 'MissingParam' });
    expect(refusal({ requestedEnergyTransfer: 'AC_three_phase', acChargingParameters: ac() }).additionalInfo).toMatch(/no departureTime/);
  });

  it('refused with the reason: an EVSE not configured, a departure past or beyond 8 days, no energy, a car minimum above the connector\'s maximum', () => {
    const needs = (p: Partial<ChargingNeeds201>): ChargingNeeds201 => ({ requestedEnergyTransfer: 'AC_three_phase', departureTime: '2025-10-02T06:00:00Z', acChargingParameters: ac(), ...p });
    expect(refusal(needs({}), { connector: null })).toMatchObject({ reasonCode: 'UnknownEvse' });
    expect(refusal(needs({ departureTime: '2025-10-01T16:00:00Z' }))).toMatchObject({ reasonCode: 'ValueOutOfRange' });
    expect(refusal(needs({ departureTime: '2025-10-10T06:00:00Z' })).additionalInfo).toMatch(/8 days/);
    expect(refusal(needs({ acChargingParameters: ac({ energyAmount: 0 }) }))).toMatchObject({ reasonCode: 'ValueOutOfRange' });
    expect(refusal(needs({ acChargingParameters: ac({ evMinCurrent: 20, evMaxCurrent: 32 }) })).additionalInfo).toMatch(/minimum current \(20 A\) is above .*16 A/);
  });
});

describe('scheduleAboveCeiling', () => {
  it('within the connector\'s 16 A (or 16 A × phases × 230 V in W): null; above: which period', () => {
    expect(scheduleAboveCeiling({ chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }, { startPeriod: 900, limit: 0 }] }, CONNECTOR)).toBeNull();
    expect(scheduleAboveCeiling({ chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 6 }, { startPeriod: 900, limit: 16.1 }] }, CONNECTOR)).toMatch(/900 s asks 16.1 A/);
    expect(scheduleAboveCeiling({ chargingRateUnit: 'W', chargingSchedulePeriod: [{ startPeriod: 0, limit: 11_040 }] }, CONNECTOR)).toBeNull();
    expect(scheduleAboveCeiling({ chargingRateUnit: 'W', chargingSchedulePeriod: [{ startPeriod: 0, limit: 11_040, numberPhases: 1 }] }, CONNECTOR)).toMatch(/above the connector's 3680 W/);
  });
});

describe('migration 275 (charging_targets remade for source ev)', () => {
  it('keeps every stored target as it was; ev is a source from then on, an unknown one still refused', () => {
    const db = new Database(':memory:');
    migrate(db, listMigrations().filter((m) => m.version < 275));
    db.prepare(
      `INSERT INTO charging_targets (charge_point_id, connector_id, market_area, departure_ms, energy_wh, max_current_a, min_current_a, phases, voltage_v, site_limit_a, site_other_load_a, updated_at_ms, ended_at_ms, source)
       VALUES ('CP-1', 2, 'NL', 1000, 5000, 16, 6, 3, 230, 25, 3.5, 10, 900, 'default')`,
    ).run();
    const before = db.prepare('SELECT * FROM charging_targets').all();
    migrate(db);
    expect(db.prepare('SELECT * FROM charging_targets').all()).toEqual(before);
    const store = new ChargingTargetStore(db);
    store.put({ chargePointId: 'CS-1', connectorId: 1, marketArea: 'NL', departureMs: 2000, energyWh: 1000, maxCurrentA: 13, minCurrentA: 6, phases: 3, voltageV: 230, siteLimitA: null, siteOtherLoadA: null, updatedAtMs: 20, source: 'ev' });
    expect(store.get('CS-1', 1)?.source).toBe('ev');
    expect(() => db.prepare("UPDATE charging_targets SET source = 'car' WHERE connector_id = 1").run()).toThrow(/CHECK/);
    db.close();
  });
});

describe('EvChargingStore', () => {
  it('keeps the last needs and schedule per EVSE, and the car\'s maxScheduleTuples (from needs since its transaction began) for the profile sent to it', () => {
    const db = new Database(':memory:');
    migrate(db);
    const ev = new EvChargingStore(db);
    expect(ev.maxScheduleTuples('CS-1', 1, 0)).toBeNull();
    const request = { evseId: 1, maxScheduleTuples: 12, chargingNeeds: { requestedEnergyTransfer: 'AC_three_phase' } };
    ev.putNeeds({ chargePointId: 'CS-1', evseId: 1, receivedAtMs: 5, request, status: 'Rejected', reasonCode: 'MissingParam', additionalInfo: 'no departureTime', outcome: 'none' });
    ev.putNeeds({ chargePointId: 'CS-1', evseId: 1, receivedAtMs: 6, request: { ...request, maxScheduleTuples: 24 }, status: 'Accepted', reasonCode: null, additionalInfo: null, outcome: 'target' });
    expect(ev.needs('CS-1', 1)).toMatchObject({ receivedAtMs: 6, status: 'Accepted', outcome: 'target', reasonCode: null });
    expect(ev.maxScheduleTuples('CS-1', 1, 6)).toBe(24);
    // Needs from before the car's transaction began (another car's) do not count.
    expect(ev.maxScheduleTuples('CS-1', 1, 7)).toBeNull();
    expect(ev.needs('CS-1', 2)).toBeUndefined();
    ev.putSchedule({ chargePointId: 'CS-1', evseId: 1, receivedAtMs: 7, timeBaseMs: 1000, schedule: { id: 1, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 6 }] } });
    expect(ev.schedule('CS-1', 1)).toEqual({ chargePointId: 'CS-1', evseId: 1, receivedAtMs: 7, timeBaseMs: 1000, schedule: { id: 1, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 6 }] } });
    db.close();
  });
});

describe('withCarScheduleTuples', () => {
  const caps = { supportedFeatureProfiles: null, maxStackLevel: null, allowedChargingRateUnit: null, maxPeriods: null };
  it('the car\'s maxScheduleTuples bounds the periods per profile as ChargingScheduleMaxPeriods does, the lower of the two; no car limit changes nothing', () => {
    expect(withCarScheduleTuples(caps, 3).maxPeriods).toBe(3);
    expect(withCarScheduleTuples({ ...caps, maxPeriods: 2 }, 3).maxPeriods).toBe(2);
    expect(withCarScheduleTuples({ ...caps, maxPeriods: 24 }, 3).maxPeriods).toBe(3);
    expect(withCarScheduleTuples({ ...caps, maxPeriods: 24 }, null)).toEqual({ ...caps, maxPeriods: 24 });
    expect(withCarScheduleTuples(caps, 0)).toEqual(caps);
    // A plan longer than the car takes goes a few periods at a time (the by-period strategy).
    expect(chooseStrategy({ capabilities: withCarScheduleTuples(caps, 3), refusals: [], transactionOpen: true, planPeriods: 5, soleConnector: false, pausedByRemoteStop: false })).toMatchObject({ name: 'tx-profile-by-period', periodsPerProfile: 3 });
    expect(chooseStrategy({ capabilities: withCarScheduleTuples(caps, 10), refusals: [], transactionOpen: true, planPeriods: 5, soleConnector: false, pausedByRemoteStop: false })).toMatchObject({ name: 'tx-profile', periodsPerProfile: null });
  });
});
