// Schedules in A or W (docs/chargers.md "Schedules in A or W"): a running gateway and two
// strict ocpp-rpc chargers on REAL NL prices of 2025-11-12/13. After BootNotification the
// gateway asks each for ChargingScheduleAllowedChargingRateUnit (GetConfiguration) and
// stores it; the one that declares only Power gets its schedules in W (A × phases ×
// voltage), the one that takes Current in A (tenths of an ampere). A charger that reconnects
// without booting is not asked again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { energyMeterValues, limitAt, profileEnergyWh, startPlanGateway, type PlanGateway, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

const at = (iso: string) => Date.parse(iso);
const TARGET = { departure_time: '2025-11-13T07:00:00Z', energy_wh: 30_000, charger: { max_current_a: 16, phases: 3, voltage_v: 230 } };

describe.skipIf(!hasSharedData)(`charging schedules in the unit the charger declares${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let watts: SimulatedCharger;
  let amps: SimulatedCharger;

  beforeAll(async () => {
    gw = await startPlanGateway({ startMs: at('2025-11-12T12:00:00Z'), pricesFromMs: at('2025-11-12T00:00:00Z'), pricesToMs: at('2025-11-14T00:00:00Z'), chargers: [{ id: 'CP-WATT' }, { id: 'CP-AMP' }] });
    watts = await gw.connect('CP-WATT', { rateUnits: 'Power' });
    amps = await gw.connect('CP-AMP', { rateUnits: 'Current,Power' });
    await watts.client.call('BootNotification', { chargePointVendor: 'Vendor', chargePointModel: 'W only' });
    await amps.client.call('BootNotification', { chargePointVendor: 'Vendor', chargePointModel: 'A and W' });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  const stored = (id: string) => gw.daemon.ctx.db.prepare("SELECT value, readonly FROM ocpp_charger_configuration WHERE charge_point_id = ? AND key = 'ChargingScheduleAllowedChargingRateUnit'").get(id);

  it('asks each charger after its BootNotification and stores what it declares', async () => {
    await until(() => watts.configurationRequests.length === 1 && amps.configurationRequests.length === 1, 'GetConfiguration after boot', 20_000);
    expect(watts.configurationRequests[0]).toEqual({ key: ['SupportedFeatureProfiles', 'ChargeProfileMaxStackLevel', 'ChargingScheduleAllowedChargingRateUnit', 'ChargingScheduleMaxPeriods'] });
    await until(() => stored('CP-WATT') !== undefined && stored('CP-AMP') !== undefined, 'the answers stored', 20_000);
    expect(stored('CP-WATT')).toEqual({ value: 'Power', readonly: 1 });
    expect(stored('CP-AMP')).toEqual({ value: 'Current,Power', readonly: 1 });
  });

  it('a charger that takes only W gets the plan in W, one that takes A in tenths of an ampere', async () => {
    const w = await gw.api('PUT', '/api/v1/chargers/CP-WATT/connectors/1/plan', TARGET);
    const a = await gw.api('PUT', '/api/v1/chargers/CP-AMP/connectors/1/plan', TARGET);
    await until(() => watts.profiles.length === 1 && amps.profiles.length === 1, 'both profiles', 20_000);
    const inW = watts.profiles[0]!.csChargingProfiles.chargingSchedule;
    const inA = amps.profiles[0]!.csChargingProfiles.chargingSchedule;
    expect(inW.chargingRateUnit).toBe('W');
    expect(inA.chargingRateUnit).toBe('A');
    // The same plan: each period's power is its current × 3 phases × 230 V, rounded down to a watt.
    const startMs = Date.parse(inW.startSchedule);
    for (const period of w.body.planned.periods as Array<{ start: string; current_a: number; power_w: number }>) {
      const s = (Date.parse(period.start) - startMs) / 1000;
      expect(limitAt(watts.profiles[0]!, s)).toBe(Math.floor(period.power_w + 1e-6));
      expect(limitAt(amps.profiles[0]!, s)).toBe(Math.floor(period.current_a * 10 + 1e-6) / 10);
    }
    expect(w.body.planned.periods.some((p: { current_a: number }) => p.current_a < 16)).toBe(true);
    expect(a.body.planned.energy_wh).toBeCloseTo(w.body.planned.energy_wh, 6);
    // In W nothing is lost to rounding the current; in tenths of an ampere at most 69 W per partial period.
    expect(profileEnergyWh(watts.profiles[0]!)).toBeGreaterThan(30_000 - 1);
    expect(profileEnergyWh(amps.profiles[0]!)).toBeGreaterThan(30_000 - 70);
    await until(async () => (await gw.api('GET', '/api/v1/chargers/CP-WATT/connectors/1/plan')).body.charger_profile?.status === 'Accepted', 'the W profile accepted', 20_000);
  });

  it('the plan follower reads a W schedule as power', async () => {
    gw.nowMs = at('2025-11-12T12:05:00Z');
    const start = (await watts.client.call('StartTransaction', { connectorId: 1, idTag: 'T', meterStart: 0, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number };
    await until(() => watts.profiles.length === 2, 'the TxProfile in W', 20_000);
    const tx = watts.profiles[1]!;
    expect(tx.csChargingProfiles.chargingSchedule.chargingRateUnit).toBe('W');
    await until(async () => (await gw.api('GET', '/api/v1/chargers/CP-WATT/connectors/1/plan')).body.charger_profile?.purpose === 'TxProfile', 'the TxProfile answer stored', 20_000);
    // At the end of its first hour of charging it delivered what the W schedule allowed: on plan.
    const startMs = Date.parse(tx.csChargingProfiles.chargingSchedule.startSchedule);
    const firstS = tx.csChargingProfiles.chargingSchedule.chargingSchedulePeriod.find((p) => p.limit > 0)!.startPeriod;
    gw.nowMs = startMs + firstS * 1000 + 3_600_000;
    const heard: string[] = [];
    const off = gw.daemon.ctx.events.on('plan.updated', (e) => heard.push(e.reason));
    await watts.client.call('MeterValues', energyMeterValues(1, start.transactionId, gw.nowMs, Math.round(profileEnergyWh(tx, { toMs: gw.nowMs }))));
    expect(heard).toEqual([]);
    // Half of it: behind, planned again — in W.
    gw.nowMs += 3_600_000;
    await watts.client.call('MeterValues', energyMeterValues(1, start.transactionId, gw.nowMs, Math.round(profileEnergyWh(tx, { toMs: gw.nowMs - 3_600_000 }) + profileEnergyWh(tx, { fromMs: gw.nowMs - 3_600_000, toMs: gw.nowMs }) / 2)));
    off();
    expect(heard).toEqual(['behind-plan']);
    await until(() => watts.profiles.length === 3, 'the new TxProfile', 20_000);
    expect(watts.profiles[2]!.csChargingProfiles.chargingSchedule.chargingRateUnit).toBe('W');
  });

  it('a charger that reconnects without booting keeps the stored unit and is not asked again', async () => {
    await watts.client.close();
    watts = await gw.connect('CP-WATT', { rateUnits: 'Current' });
    await until(() => watts.profiles.length === 1, 'its plan again after the reconnect', 20_000);
    expect(watts.configurationRequests).toEqual([]);
    expect(watts.profiles[0]!.csChargingProfiles.chargingSchedule.chargingRateUnit).toBe('W');
  });
});
