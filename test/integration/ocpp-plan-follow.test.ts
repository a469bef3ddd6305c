// Following the plan (docs/planning.md "Following the plan"): a running gateway and a
// strict ocpp-rpc charger on REAL NL prices of 2025-11-12/13. The charger's MeterValues
// say how much it delivered; when it falls behind the TxProfile it accepted so that the
// rest cannot deliver the remaining energy by departure, the gateway plans the rest again
// and sends a new TxProfile — not sooner than the minimum interval, and at once when the
// connector comes back from Unavailable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Events } from '../../src/events.js';
import { FOLLOW_RULE } from '../../src/planning/progress.js';
import { acceptedTxProfile as acceptedTxProfileOf, energyMeterValues, limitAt, profileEnergyWh, startPlanGateway, type PlanGateway, type SentProfile, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';

const at = (iso: string) => Date.parse(iso);
const PLAN = '/api/v1/chargers/CP-FOLLOW/connectors/1/plan';
const METER_START = 1000;

/** The first instant at or after fromMs where the profile lets the charger draw. */
function firstChargingMs(profile: SentProfile, fromMs: number): number {
  const startMs = Date.parse(profile.csChargingProfiles.chargingSchedule.startSchedule);
  for (const p of profile.csChargingProfiles.chargingSchedule.chargingSchedulePeriod) {
    const ms = startMs + p.startPeriod * 1000;
    if (p.limit > 0 && ms >= fromMs) return ms;
    if (p.limit > 0 && limitAt(profile, (fromMs - startMs) / 1000) > 0) return fromMs;
  }
  throw new Error('the profile never charges');
}

describe.skipIf(!hasSharedData)(`plans followed against the charger's meter values${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let cp: SimulatedCharger;
  let transactionId = 0;
  const heard: Array<Events['plan.updated']> = [];
  let registerWh = METER_START;

  beforeAll(async () => {
    gw = await startPlanGateway({
      startMs: at('2025-11-12T12:00:00Z'),
      pricesFromMs: at('2025-11-12T00:00:00Z'),
      pricesToMs: at('2025-11-14T00:00:00Z'),
      chargers: [{ id: 'CP-FOLLOW' }],
    });
    gw.daemon.ctx.events.on('plan.updated', (e) => heard.push(e));
    cp = await gw.connect('CP-FOLLOW');
    await cp.client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  const meter = async (atMs: number, wh: number) => {
    registerWh = wh;
    await cp.client.call('MeterValues', energyMeterValues(1, transactionId, atMs, wh));
  };
  const lastProfile = () => cp.profiles[cp.profiles.length - 1]!;
  const acceptedTxProfile = (count: number) => acceptedTxProfileOf(gw, cp.profiles, PLAN, count);

  it('a session that draws what its TxProfile allows is not planned again', async () => {
    expect((await gw.api('PUT', PLAN, { departure_time: '2025-11-13T07:00:00Z', energy_wh: 30_000 })).status).toBe(201);
    gw.nowMs = at('2025-11-12T12:05:00Z');
    const start = (await cp.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: METER_START, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number };
    transactionId = start.transactionId;
    const tx = await acceptedTxProfile(2);
    heard.length = 0;
    // Fifteen minutes into its first charging period, exactly what the profile allowed.
    const chargingFromMs = firstChargingMs(tx, gw.nowMs);
    gw.nowMs = chargingFromMs + 15 * 60_000;
    await meter(gw.nowMs, METER_START + profileEnergyWh(tx, { toMs: gw.nowMs }));
    expect(heard).toEqual([]);
    expect(cp.profiles).toHaveLength(2);
    const got = (await gw.api('GET', PLAN)).body;
    expect(got.energy_delivered_wh).toBeCloseTo(registerWh - METER_START, 0);
    expect(got.energy_needed_wh).toBeCloseTo(30_000 - (registerWh - METER_START), 0);
  });

  it('a car that draws half of it falls behind: the rest is planned again and sent as a new TxProfile', async () => {
    const tx = lastProfile();
    const fromMs = gw.nowMs;
    gw.nowMs = fromMs + 30 * 60_000;
    const allowedWh = profileEnergyWh(tx, { fromMs, toMs: gw.nowMs });
    // The profile keeps charging through these 30 minutes; half of it is well above the threshold.
    expect(allowedWh / 2).toBeGreaterThan(FOLLOW_RULE.minBehindShare * 30_000);
    await meter(gw.nowMs, registerWh + allowedWh / 2);
    expect(heard.map((e) => e.reason)).toEqual(['behind-plan']);
    const deliveredWh = registerWh - METER_START;
    expect(heard[0]!.plan.energyNeededWh).toBeCloseTo(30_000 - deliveredWh, 6);
    const replanned = await acceptedTxProfile(3);
    expect(replanned.csChargingProfiles).toMatchObject({ chargingProfilePurpose: 'TxProfile', transactionId });
    expect(Date.parse(replanned.csChargingProfiles.chargingSchedule.startSchedule)).toBe(gw.nowMs);
    // The new schedule holds what remains (less what rounding the limits down takes off); the old one's rest did not.
    const remainingWh = 30_000 - deliveredWh;
    expect(profileEnergyWh(tx, { fromMs: gw.nowMs })).toBeLessThan(remainingWh - FOLLOW_RULE.minBehindShare * 30_000);
    expect(profileEnergyWh(replanned)).toBeLessThanOrEqual(remainingWh + 1);
    expect(profileEnergyWh(replanned)).toBeGreaterThan(remainingWh - 350);
    const got = (await gw.api('GET', PLAN)).body;
    expect(got).toMatchObject({ meets_target: true });
    expect(got.energy_delivered_wh).toBeCloseTo(deliveredWh, 0);
  });

  it('behind again within the minimum interval: not planned again yet', async () => {
    heard.length = 0;
    const tx = lastProfile();
    gw.nowMs += 10 * 60_000;
    // Nothing delivered for ten minutes of a charging period.
    expect(profileEnergyWh(tx, { fromMs: gw.nowMs - 10 * 60_000, toMs: gw.nowMs })).toBeGreaterThan(FOLLOW_RULE.minBehindWh * 1.5);
    await meter(gw.nowMs, registerWh);
    expect(heard).toEqual([]);
    expect(cp.profiles).toHaveLength(3);
  });

  it('a connector that was Unavailable through planned charging is planned again as soon as it is Available', async () => {
    heard.length = 0;
    const tx = lastProfile();
    const offFromMs = gw.nowMs;
    await cp.client.call('StatusNotification', { connectorId: 1, status: 'Unavailable', errorCode: 'NoError', timestamp: new Date(offFromMs).toISOString() });
    gw.nowMs = offFromMs + 4 * 60_000;
    // Back within the minimum interval of the last plan: coming back is checked at once anyway.
    expect(gw.nowMs - Date.parse(tx.csChargingProfiles.chargingSchedule.startSchedule)).toBeLessThan(FOLLOW_RULE.minReplanIntervalMs);
    await cp.client.call('StatusNotification', { connectorId: 1, status: 'Charging', errorCode: 'NoError', timestamp: new Date(gw.nowMs).toISOString() });
    expect(heard.map((e) => e.reason)).toEqual(['charger-available']);
    const replanned = await acceptedTxProfile(4);
    expect(profileEnergyWh(replanned)).toBeGreaterThan(30_000 - (registerWh - METER_START) - 350);
    // A status change that is not a return from Unavailable/Faulted plans nothing.
    heard.length = 0;
    await cp.client.call('StatusNotification', { connectorId: 1, status: 'SuspendedEV', errorCode: 'NoError', timestamp: new Date(gw.nowMs + 1000).toISOString() });
    expect(heard).toEqual([]);
  });
  it('a charger back on connector 0 and on the connector (as chargers report it) is planned again once', async () => {
    heard.length = 0;
    const offFromMs = gw.nowMs + 2000;
    for (const connectorId of [0, 1]) await cp.client.call('StatusNotification', { connectorId, status: 'Unavailable', errorCode: 'NoError', timestamp: new Date(offFromMs).toISOString() });
    gw.nowMs = offFromMs + 20 * 60_000;
    await cp.client.call('StatusNotification', { connectorId: 0, status: 'Available', errorCode: 'NoError', timestamp: new Date(gw.nowMs).toISOString() });
    await cp.client.call('StatusNotification', { connectorId: 1, status: 'Charging', errorCode: 'NoError', timestamp: new Date(gw.nowMs).toISOString() });
    // plan.updated is told while the StatusNotification is handled: all of it is heard by now.
    expect(heard.map((e) => e.reason)).toEqual(['charger-available']);
    await acceptedTxProfile(5);
    expect(cp.profiles).toHaveLength(5);
  });
});
