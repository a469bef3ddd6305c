// A connector's default target (docs/chargers.md "Default targets"): a running gateway with
// `chargers[].connectors[].default_target` configured and a strict ocpp-rpc charger on REAL
// NL prices of 2025-11-12/13. A transaction that starts without a client's target gets the
// default one (the next 07:00 Amsterdam time, 20 kWh) as a TxProfile; a client's PUT
// replaces it; it ends with its transaction, and the next transaction gets it again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileEnergyWh, startPlanGateway, type PlanGateway, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

const at = (iso: string) => Date.parse(iso);
const plan = (connector: number) => `/api/v1/chargers/CP-DEFAULT/connectors/${connector}/plan`;

describe.skipIf(!hasSharedData)(`default targets per connector${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let cp: SimulatedCharger;
  let transactionId = 0;

  beforeAll(async () => {
    gw = await startPlanGateway({
      startMs: at('2025-11-12T17:00:00Z'),
      pricesFromMs: at('2025-11-12T00:00:00Z'),
      pricesToMs: at('2025-11-14T00:00:00Z'),
      chargers: [
        {
          id: 'CP-DEFAULT',
          connectors: [
            { connector_id: 1, max_current_a: 16, phases: 3, default_target: { departure_local_time: '07:00', energy_wh: 20_000 } },
            { connector_id: 2, max_current_a: 32 },
          ],
        },
      ],
    });
    cp = await gw.connect('CP-DEFAULT');
    await cp.client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Double' });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  it('a transaction on a connector without a target gets the default one as a TxProfile', async () => {
    expect((await gw.api('GET', plan(1))).status).toBe(404);
    const start = (await cp.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 0, timestamp: '2025-11-12T17:00:00Z' })) as { transactionId: number };
    transactionId = start.transactionId;
    await until(() => cp.profiles.length === 1, 'the TxProfile of the default target', 20_000);
    const profile = cp.profiles[0]!;
    expect(profile.csChargingProfiles).toMatchObject({ chargingProfilePurpose: 'TxProfile', transactionId, validTo: '2025-11-13T06:00:00.000Z' });
    const got = (await gw.api('GET', plan(1))).body;
    expect(got).toMatchObject({ source: 'default', departure_time: '2025-11-13T06:00:00Z', energy_needed_wh: 20_000, meets_target: true, charger: { max_current_a: 16, phases: 3, voltage_v: 230 } });
    // The schedule holds the 20 kWh (less what rounding the limits down takes off).
    expect(profileEnergyWh(profile)).toBeLessThanOrEqual(20_001);
    expect(profileEnergyWh(profile)).toBeGreaterThan(19_650);
    await until(async () => (await gw.api('GET', plan(1))).body.charger_profile?.status === 'Accepted', 'the answer stored', 20_000);
  });

  it('a client PUT replaces the default target', async () => {
    gw.nowMs = at('2025-11-12T17:10:00Z');
    const put = await gw.api('PUT', plan(1), { departure_time: '2025-11-13T05:00:00Z', energy_wh: 8000 });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ source: 'client', energy_needed_wh: 8000 });
    await until(() => cp.profiles.length === 2, 'the TxProfile of the client target', 20_000);
    expect(cp.profiles[1]!.csChargingProfiles).toMatchObject({ transactionId, validTo: '2025-11-13T05:00:00.000Z' });
  });

  it('a connector without a default target is left alone', async () => {
    await cp.client.call('StartTransaction', { connectorId: 2, idTag: 'TAG-2', meterStart: 0, timestamp: '2025-11-12T17:10:00Z' });
    await cp.client.call('Heartbeat', {});
    expect((await gw.api('GET', plan(2))).status).toBe(404);
    expect(cp.profiles.filter((p) => p.connectorId === 2)).toEqual([]);
  });

  it('the target ends with its transaction; the next transaction gets the default again', async () => {
    gw.nowMs = at('2025-11-12T19:00:00Z');
    await cp.client.call('StopTransaction', { transactionId, meterStop: 3000, timestamp: '2025-11-12T19:00:00Z' });
    await until(async () => (await gw.api('GET', plan(1))).body.ended_at === '2025-11-12T19:00:00Z', 'the target ended', 20_000);
    gw.nowMs = at('2025-11-13T06:30:00Z');
    const next = (await cp.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 3000, timestamp: '2025-11-13T06:30:00Z' })) as { transactionId: number };
    await until(() => cp.profiles.length === 3, 'the TxProfile of the default target again', 20_000);
    expect(cp.profiles[2]!.csChargingProfiles).toMatchObject({ transactionId: next.transactionId, validTo: '2025-11-14T06:00:00.000Z' });
    expect((await gw.api('GET', plan(1))).body).toMatchObject({ source: 'default', departure_time: '2025-11-14T06:00:00Z', ended_at: null });
  });
});
