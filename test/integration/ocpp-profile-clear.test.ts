// Clearing the profiles the gateway set (docs/chargers.md "Clearing profiles"): a running
// gateway and a strict ocpp-rpc charger (it validates every ClearChargingProfile against
// the OCPP 1.6 schema) on REAL NL prices of 2025-11-12/13. A target deleted over HTTP, or
// the transaction it was for stopped, has the gateway send ClearChargingProfile for the
// profile ids it used on the connector — at once, or when a charger that was away connects
// again — and store the answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Events } from '../../src/events.js';
import { startPlanGateway, type PlanGateway, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

const at = (iso: string) => Date.parse(iso);
const plan = (connector: number) => `/api/v1/chargers/CP-CLEAR/connectors/${connector}/plan`;
const TARGET = { departure_time: '2025-11-13T07:00:00Z', energy_wh: 20_000 };

describe.skipIf(!hasSharedData)(`charging profiles cleared when their target goes${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let cp: SimulatedCharger;

  beforeAll(async () => {
    gw = await startPlanGateway({ startMs: at('2025-11-12T12:00:00Z'), pricesFromMs: at('2025-11-12T00:00:00Z'), pricesToMs: at('2025-11-14T00:00:00Z'), chargers: [{ id: 'CP-CLEAR' }] });
    cp = await gw.connect('CP-CLEAR');
    await cp.client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  const storedClears = (connectorId: number) =>
    gw.daemon.ctx.db.prepare('SELECT charging_profile_id, reason, status, sent_at_ms FROM ocpp_profile_clears WHERE charge_point_id = ? AND connector_id = ? ORDER BY charging_profile_id').all('CP-CLEAR', connectorId) as Array<{ charging_profile_id: number; reason: string; status: string; sent_at_ms: number | null }>;

  it('DELETE removes the target and clears the TxDefaultProfile (and the TxProfile id) on the charger', async () => {
    expect((await gw.api('PUT', plan(1), TARGET)).status).toBe(201);
    await until(() => cp.profiles.length === 1, 'the TxDefaultProfile', 20_000);
    expect(cp.profiles[0]!.csChargingProfiles).toMatchObject({ chargingProfileId: 11, chargingProfilePurpose: 'TxDefaultProfile' });
    const del = await gw.api('DELETE', plan(1));
    expect(del.status).toBe(204);
    await until(() => cp.clears.length === 2, 'two ClearChargingProfile', 20_000);
    expect(cp.clears).toEqual([{ id: 11 }, { id: 12 }]);
    expect((await gw.api('GET', plan(1))).status).toBe(404);
    expect((await gw.api('DELETE', plan(1))).status).toBe(404);
    await until(() => storedClears(1).every((c) => c.status === 'Accepted'), 'the answers stored', 20_000);
    expect(storedClears(1)).toMatchObject([
      { charging_profile_id: 11, reason: 'target-deleted', status: 'Accepted' },
      { charging_profile_id: 12, reason: 'target-deleted', status: 'Accepted' },
    ]);
  });

  it('a charger that was away when its target was deleted gets the clears when it reconnects, before any new plan', async () => {
    expect((await gw.api('PUT', plan(2), TARGET)).status).toBe(201);
    await until(() => cp.profiles.length === 2, 'the TxDefaultProfile of connector 2', 20_000);
    await cp.client.close();
    await until(async () => !(await gw.connected('CP-CLEAR')), 'the gateway sees the charger gone', 20_000);
    expect((await gw.api('DELETE', plan(2))).status).toBe(204);
    expect(storedClears(2).map((c) => c.status)).toEqual(['pending', 'pending']);
    // Connector 1 has a new target meanwhile: its plan must come after the clears.
    expect((await gw.api('PUT', plan(1), TARGET)).status).toBe(201);
    cp = await gw.connect('CP-CLEAR');
    await until(() => cp.clears.length === 2 && cp.profiles.length === 1, 'the pending clears and the plan after the reconnect', 20_000);
    expect(cp.clears).toEqual([{ id: 21 }, { id: 22 }]);
    expect(cp.profiles[0]!.csChargingProfiles.chargingProfileId).toBe(11);
    await until(() => storedClears(2).every((c) => c.status === 'Accepted'), 'the answers stored', 20_000);
  });

  it('a transaction that stops ends its target: its profiles are cleared and it is planned no more', async () => {
    gw.nowMs = at('2025-11-12T12:10:00Z');
    const start = (await cp.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 0, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number };
    await until(() => cp.profiles.length === 2, 'the TxProfile', 20_000);
    expect(cp.profiles[1]!.csChargingProfiles).toMatchObject({ chargingProfileId: 12, transactionId: start.transactionId });
    cp.clears.length = 0;
    gw.nowMs = at('2025-11-12T13:00:00Z');
    await cp.client.call('StopTransaction', { transactionId: start.transactionId, meterStop: 4000, timestamp: new Date(gw.nowMs).toISOString() });
    await until(() => cp.clears.length === 2, 'ClearChargingProfile after StopTransaction', 20_000);
    expect(cp.clears).toEqual([{ id: 11 }, { id: 12 }]);
    await until(async () => (await gw.api('GET', plan(1))).body.charger_profile_clears.every((c: { status: string }) => c.status === 'Accepted'), 'the answers stored', 20_000);
    const got = (await gw.api('GET', plan(1))).body;
    expect(got.ended_at).toBe('2025-11-12T13:00:00Z');
    expect(got.charger_profile_clears).toMatchObject([
      { charging_profile_id: 11, reason: 'transaction-stopped', status: 'Accepted', sent_at: '2025-11-12T13:00:00Z' },
      { charging_profile_id: 12, reason: 'transaction-stopped', status: 'Accepted' },
    ]);
    // New prices plan the targets in force only: nothing for the ended one.
    const heard: Array<Events['plan.updated']> = [];
    const off = gw.daemon.ctx.events.on('plan.updated', (e) => heard.push(e));
    gw.daemon.ctx.events.emit('prices.updated', { marketArea: 'NL', fromMs: at('2025-11-13T00:00:00Z'), toMs: at('2025-11-14T00:00:00Z'), periods: 96 });
    off();
    expect(heard).toEqual([]);
    // A new PUT starts it again.
    const put = await gw.api('PUT', plan(1), TARGET);
    expect(put.status).toBe(200);
    await until(() => cp.profiles.length === 3, 'the TxDefaultProfile again', 20_000);
    expect((await gw.api('GET', plan(1))).body.ended_at).toBeNull();
  });
});
