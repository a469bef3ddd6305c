// Following the plan across a gateway restart (docs/planning.md "Following the plan"): a
// connector that went Unavailable before the restart and comes back after it is planned
// again at once (reason charger-available), because the status before is the stored one
// (ocpp_connector_status), not one held in memory. A strict ocpp-rpc charger on REAL NL
// prices of 2025-11-12/13; the gateway is stopped and a new one started on the same SQLite
// file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Events } from '../../src/events.js';
import { FOLLOW_RULE } from '../../src/planning/progress.js';
import { FollowStateStore } from '../../src/store/charging-follow-state.js';
import { acceptedTxProfile as acceptedTxProfileOf, energyMeterValues, limitAt, profileEnergyWh, startPlanGateway, type PlanGateway, type SentProfile, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';

const at = (iso: string) => Date.parse(iso);
const PLAN = '/api/v1/chargers/CP-RESTART/connectors/1/plan';
const METER_START = 5000;

/** The first instant at or after fromMs where the profile lets the charger draw. */
function firstChargingMs(profile: SentProfile, fromMs: number): number {
  const startMs = Date.parse(profile.csChargingProfiles.chargingSchedule.startSchedule);
  if (limitAt(profile, (fromMs - startMs) / 1000) > 0) return fromMs;
  for (const p of profile.csChargingProfiles.chargingSchedule.chargingSchedulePeriod) {
    const ms = startMs + p.startPeriod * 1000;
    if (p.limit > 0 && ms >= fromMs) return ms;
  }
  throw new Error('the profile never charges');
}

describe.skipIf(!hasSharedData)(`plans followed across a gateway restart${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  const profiles: SentProfile[] = [];
  let cp: SimulatedCharger;
  let transactionId = 0;

  beforeAll(async () => {
    gw = await startPlanGateway({
      startMs: at('2025-11-12T12:00:00Z'),
      pricesFromMs: at('2025-11-12T00:00:00Z'),
      pricesToMs: at('2025-11-14T00:00:00Z'),
      chargers: [{ id: 'CP-RESTART' }],
    });
    cp = await gw.connect('CP-RESTART', { profiles });
    await cp.client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  const acceptedTxProfile = (count: number) => acceptedTxProfileOf(gw, profiles, PLAN, count);

  it('Unavailable before a restart, Charging after it: planned again at once', { timeout: 120_000 }, async () => {
    expect((await gw.api('PUT', PLAN, { departure_time: '2025-11-13T07:00:00Z', energy_wh: 30_000 })).status).toBe(201);
    gw.nowMs = at('2025-11-12T12:05:00Z');
    transactionId = ((await cp.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: METER_START, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number }).transactionId;
    const first = await acceptedTxProfile(2);
    // On plan for 15 minutes of charging.
    gw.nowMs = firstChargingMs(first, gw.nowMs) + 15 * 60_000;
    const registerWh = METER_START + profileEnergyWh(first, { toMs: gw.nowMs });
    await cp.client.call('MeterValues', energyMeterValues(1, transactionId, gw.nowMs, registerWh));
    const offFromMs = gw.nowMs;
    await cp.client.call('StatusNotification', { connectorId: 1, status: 'Unavailable', errorCode: 'NoError', timestamp: new Date(offFromMs).toISOString() });

    await gw.restart();
    const heard: Array<Events['plan.updated']> = [];
    gw.daemon.ctx.events.on('plan.updated', (e) => heard.push(e));
    // The charger connects again without a boot: the gateway sends the stored target's plan.
    cp = await gw.connect('CP-RESTART', { profiles });
    const afterRestart = await acceptedTxProfile(3);
    expect(afterRestart.csChargingProfiles.transactionId).toBe(transactionId);
    // Still off through ten minutes of what that plan charges, then back.
    gw.nowMs = firstChargingMs(afterRestart, gw.nowMs) + 10 * 60_000;
    expect(profileEnergyWh(afterRestart, { toMs: gw.nowMs })).toBeGreaterThan(Math.max(FOLLOW_RULE.minBehindWh, FOLLOW_RULE.minBehindShare * 30_000) * 1.5);
    heard.length = 0;
    await cp.client.call('StatusNotification', { connectorId: 1, status: 'Charging', errorCode: 'NoError', timestamp: new Date(gw.nowMs).toISOString() });
    expect(heard.map((e) => e.reason)).toEqual(['charger-available']);
    const replanned = await acceptedTxProfile(4);
    expect(Date.parse(replanned.csChargingProfiles.chargingSchedule.startSchedule)).toBe(gw.nowMs);
    // The whole remaining energy is in the new schedule (less what rounding the limits down takes off).
    const remainingWh = 30_000 - (registerWh - METER_START);
    expect(profileEnergyWh(replanned)).toBeGreaterThan(remainingWh - 350);
    expect(profileEnergyWh(replanned)).toBeLessThanOrEqual(remainingWh + 1);
    // When it was planned again is stored (the minimum interval counts from it after another restart).
    expect(new FollowStateStore(gw.daemon.ctx.db).get('CP-RESTART', 1).replannedAtMs).toBe(gw.nowMs);
  });
});
