// A charger without smart charging under site.limit_a (docs/chargers.md "Chargers that say
// no", "Pausing by remote stop"): it has no profile to lower, so its car runs at the
// connector's configured 16 A or not at all. Alone on a 20 A site it charges; when a second
// car joins and the site's share falls to 10 A each, the site follower has its plan made
// again and the gateway stops it with RemoteStopTransaction, so site.limit_a stays a
// ceiling. When the second car leaves, the first is started again (RemoteStartTransaction)
// once site.raise_interval_s has passed since its stop, not at its plan's next boundary.
// A running gateway on real NL prices of 2025-11-12 and its own clock; strict ocpp-rpc chargers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlanGateway, type PlanGateway, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

const at = (iso: string) => Date.parse(iso);
// Two hours for 22 kWh at 11.04 kW: the plan charges in every period from now on.
const TARGET = { departure_time: '2025-11-12T14:00:00Z', energy_wh: 22_000 };
const planPath = (id: string) => `/api/v1/chargers/${id}/connectors/1/plan`;

type ConnectOptions = Parameters<PlanGateway['connect']>[1];

/**
 * A gateway at 2025-11-12 12:00 UTC with that day's real prices, `site` as its site section
 * and one 16 A connector per charger; each charger connected with its options, booted, and
 * what it supports read by the gateway. Returns the gateway and the chargers in order.
 */
async function siteGateway(site: Record<string, unknown>, chargers: Array<[id: string, options: ConnectOptions]>): Promise<{ gw: PlanGateway; chargers: SimulatedCharger[] }> {
  const gw = await startPlanGateway({
    startMs: at('2025-11-12T12:00:00Z'),
    pricesFromMs: at('2025-11-12T00:00:00Z'),
    pricesToMs: at('2025-11-13T00:00:00Z'),
    site,
    chargers: chargers.map(([id]) => ({ id, connectors: [{ connector_id: 1, max_current_a: 16 }] })),
  });
  const connected: SimulatedCharger[] = [];
  for (const [id, options] of chargers) connected.push(await gw.connect(id, options));
  for (const ch of connected) await ch.client.call('BootNotification', { chargePointVendor: 'Vendor', chargePointModel: 'm' });
  const read = (id: string) => gw.daemon.ctx.db.prepare("SELECT COUNT(*) AS n FROM ocpp_charger_configuration WHERE charge_point_id = ? AND key = 'SupportedFeatureProfiles'").get(id) as { n: number };
  await until(() => chargers.every(([id]) => read(id).n === 1), 'the chargers read', 30_000);
  return { gw, chargers: connected };
}

/** The site cap the site follower stored for a charger's connector 1 (0: stopped for the site). */
const siteCapOf = (gw: PlanGateway, id: string) =>
  (gw.daemon.ctx.db.prepare('SELECT site_cap_a FROM charging_follow_state WHERE charge_point_id = ? AND connector_id = 1').get(id) as { site_cap_a: number | null } | undefined)?.site_cap_a ?? null;
const startTransaction = async (gw: PlanGateway, ch: SimulatedCharger, tag: string, meterStart = 0) =>
  ((await ch.client.call('StartTransaction', { connectorId: 1, idTag: tag, meterStart, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number }).transactionId;
const stopTransaction = (gw: PlanGateway, ch: SimulatedCharger, transactionId: number, reason?: string) =>
  ch.client.call('StopTransaction', { transactionId, meterStop: 500, timestamp: new Date(gw.nowMs).toISOString(), ...(reason ? { reason } : {}) });

describe.skipIf(!hasSharedData)(`a charger without smart charging stays within site.limit_a${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let pausedTxId = 0;
  let otherTxId = 0;
  let noSc: SimulatedCharger;
  let other: SimulatedCharger;

  beforeAll(async () => {
    // No site meter: the follower's timer checks every max_reading_age_s / 2 (1 s), as it raises again after a car left.
    ({ gw, chargers: [noSc, other] } = await siteGateway({ limit_a: 20, max_reading_age_s: 2 }, [
      ['CP-NO-SC', { refusal: 'no-smart-charging' }],
      ['CP-OTHER', { rateUnits: 'Current' }],
    ]) as { gw: PlanGateway; chargers: [SimulatedCharger, SimulatedCharger] });
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
  });

  const plan = async (id: string) => (await gw.api('GET', planPath(id))).body;

  it('alone on the site it charges; when a second car joins it is stopped', async () => {
    expect((await gw.api('PUT', planPath('CP-NO-SC'), TARGET)).status).toBe(201);
    await until(async () => (await plan('CP-NO-SC')).charging_strategy?.strategy === 'remote-start-stop', 'remote-start-stop', 20_000);
    const alone = await plan('CP-NO-SC');
    expect(alone.allowed_current_a).toBe(16);
    expect(Date.parse(alone.planned.periods[0].start)).toBeLessThanOrEqual(gw.nowMs);
    gw.nowMs = at('2025-11-12T12:01:00Z');
    const txId = ((await noSc.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-A', meterStart: 0, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number }).transactionId;
    // Two round trips through the gateway after the start: its plan was applied meanwhile, and it charges.
    await plan('CP-NO-SC');
    expect((await plan('CP-NO-SC')).charging_strategy.paused_transaction_id).toBeNull();
    expect(noSc.remote).toEqual([]);
    // A second car joins: the site's 20 A are shared, 10 A each, less than the 16 A the first one draws.
    expect((await gw.api('PUT', planPath('CP-OTHER'), TARGET)).status).toBe(201);
    otherTxId = ((await other.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-B', meterStart: 0, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number }).transactionId;
    await until(() => noSc.remote.length === 1, 'the first car stopped', 20_000);
    expect(noSc.remote[0]).toEqual({ method: 'RemoteStopTransaction', params: { transactionId: txId } });
    expect((await plan('CP-NO-SC')).allowed_current_a).toBe(10);
    // The smart one is held within its share by its profile.
    await until(() => other.profiles.some((p) => p.csChargingProfiles.chargingProfilePurpose === 'TxProfile'), 'the second car\'s TxProfile', 20_000);
    const tx = other.profiles.filter((p) => p.csChargingProfiles.chargingProfilePurpose === 'TxProfile').at(-1)!;
    expect(Math.max(...tx.csChargingProfiles.chargingSchedule.chargingSchedulePeriod.map((p) => p.limit))).toBeLessThanOrEqual(10);
    expect(noSc.profiles).toEqual([]);
    pausedTxId = txId;
  });

  it('started again as soon as the site leaves it its current (plus the hysteresis), after the raise interval since its stop', async () => {
    // The charger carries out the stop.
    await noSc.client.call('StopTransaction', { transactionId: pausedTxId, meterStop: 500, timestamp: new Date(gw.nowMs).toISOString(), reason: 'Remote' });
    await until(async () => (await plan('CP-NO-SC')).charging_strategy?.paused_transaction_id === pausedTxId, 'the pause kept (the target goes on)', 20_000);
    // The second car leaves at 12:02: 20 A left for the first, but its stop was only a minute ago (site.raise_interval_s 300).
    gw.nowMs = at('2025-11-12T12:02:00Z');
    await other.client.call('StopTransaction', { transactionId: otherTxId, meterStop: 500, timestamp: new Date(gw.nowMs).toISOString() });
    expect((await plan('CP-NO-SC')).allowed_current_a).toBe(16);
    await plan('CP-NO-SC');
    expect(noSc.remote).toHaveLength(1);
    // Past the raise interval: started again with the paused transaction's id tag, well before its plan's next boundary.
    gw.nowMs = at('2025-11-12T12:06:05Z');
    await until(() => noSc.remote.length === 2, 'the first car started again', 30_000);
    expect(noSc.remote[1]).toEqual({ method: 'RemoteStartTransaction', params: { connectorId: 1, idTag: 'TAG-A' } });
    await noSc.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-A', meterStart: 500, timestamp: new Date(gw.nowMs).toISOString() });
    await until(async () => (await plan('CP-NO-SC')).charging_strategy?.paused_transaction_id === null, 'the pause over', 20_000);
    // Still the one start: the readings after it do not start it again.
    gw.nowMs = at('2025-11-12T12:06:07Z');
    await plan('CP-NO-SC');
    expect(noSc.remote).toHaveLength(2);
  });
});

// Two chargers without smart charging at 16 A on a 30 A site, both stopped for the site (each
// by a smart car joining while it ran). When the site frees up, each alone would get 30 A:
// started together they would draw 32 A and be stopped again, every raise interval. One is
// started; the other waits while the first draws its 16 A (30 − 16 < 16 + the hysteresis).
describe.skipIf(!hasSharedData)(`two stopped cars are not started together past site.limit_a${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let b: SimulatedCharger;
  let c: SimulatedCharger;
  let d: SimulatedCharger;

  beforeAll(async () => {
    ({ gw, chargers: [b, c, d] } = await siteGateway({ limit_a: 30, max_reading_age_s: 2, raise_hysteresis_a: 2, raise_interval_s: 300 }, [
      ['CP-B', { refusal: 'no-smart-charging' }],
      ['CP-C', { refusal: 'no-smart-charging' }],
      ['CP-D', { rateUnits: 'Current' }],
    ]) as { gw: PlanGateway; chargers: [SimulatedCharger, SimulatedCharger, SimulatedCharger] });
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
  });

  const plan = async (id: string) => (await gw.api('GET', planPath(id))).body;
  const siteCap = (id: string) => siteCapOf(gw, id);
  const start = (ch: SimulatedCharger, tag: string, meterStart = 0) => startTransaction(gw, ch, tag, meterStart);
  const stop = (ch: SimulatedCharger, transactionId: number, reason?: string) => stopTransaction(gw, ch, transactionId, reason);

  /** The car on ch runs alone, then the smart car joins: ch's car is stopped for the site (site cap 0), then both leave. */
  const stoppedForTheSite = async (ch: SimulatedCharger, id: string, tag: string) => {
    const tx = await start(ch, tag);
    await plan(id);
    expect(ch.remote).toEqual([]);
    expect([200, 201]).toContain((await gw.api('PUT', planPath('CP-D'), TARGET)).status);
    const dTx = await start(d, `D-${tag}`);
    await until(() => ch.remote.length === 1, `${id}'s car stopped`, 20_000);
    expect(ch.remote[0]).toEqual({ method: 'RemoteStopTransaction', params: { transactionId: tx } });
    expect(siteCap(id)).toBe(0);
    await stop(ch, tx, 'Remote');
    await until(async () => (await plan(id)).charging_strategy?.paused_transaction_id === tx, `${id}'s pause kept`, 20_000);
    await stop(d, dTx);
  };

  it('both stopped for the site; after the raise interval one is started, the other waits', async () => {
    for (const id of ['CP-B', 'CP-C']) expect((await gw.api('PUT', planPath(id), TARGET)).status).toBe(201);
    await until(async () => (await plan('CP-B')).charging_strategy?.strategy === 'remote-start-stop' && (await plan('CP-C')).charging_strategy?.strategy === 'remote-start-stop', 'remote-start-stop', 20_000);
    gw.nowMs = at('2025-11-12T12:01:00Z');
    await stoppedForTheSite(b, 'CP-B', 'TAG-B');
    gw.nowMs = at('2025-11-12T12:02:00Z');
    await stoppedForTheSite(c, 'CP-C', 'TAG-C');
    // Past the raise interval of both stops: the site's 30 A are free.
    gw.nowMs = at('2025-11-12T12:08:00Z');
    await until(() => [b, c].some((ch) => ch.remote.length === 2), 'a car started again', 30_000);
    const [first, second, firstId, secondId] = b.remote.length === 2 ? [b, c, 'CP-B', 'CP-C'] : [c, b, 'CP-C', 'CP-B'];
    expect(first.remote[1]).toMatchObject({ method: 'RemoteStartTransaction' });
    // In the same check the other was not started (its site cap is stored before its RemoteStart would go out).
    expect(siteCap(secondId)).toBe(0);
    expect(second.remote).toHaveLength(1);
    // While the first one's restart is pending it counts: the other's plan shares the site with it.
    expect((await plan(secondId)).site_share.connectors).toBe(2);
    await start(first, `TAG-${firstId.slice(3)}`, 500);
    await until(async () => (await plan(firstId)).charging_strategy?.paused_transaction_id === null, 'the first car running', 20_000);
    // The first draws 16 A: 14 A left, less than 16 A + the hysteresis. Readings later (the timer checks every second) the other still waits.
    gw.nowMs = at('2025-11-12T12:09:00Z');
    await plan(secondId);
    await plan(secondId);
    expect(siteCap(secondId)).toBe(0);
    expect(second.remote).toHaveLength(1);
  });
});

// The charger refuses the RemoteStartTransaction that would start a car stopped for the site:
// the car is still stopped, so the site follower tries again after site.raise_interval_s
// (its site cap back to 0), rather than counting a restart that never came as pending for good.
describe.skipIf(!hasSharedData)(`a refused restart is tried again${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let noSc: SimulatedCharger;
  let other: SimulatedCharger;
  let refuseStart = true;

  beforeAll(async () => {
    ({ gw, chargers: [noSc, other] } = await siteGateway({ limit_a: 20, max_reading_age_s: 2 }, [
      ['CP-NO-SC', { refusal: 'no-smart-charging', remoteAnswer: (m) => (m === 'RemoteStartTransaction' && refuseStart ? 'Rejected' : 'Accepted') }],
      ['CP-OTHER', { rateUnits: 'Current' }],
    ]) as { gw: PlanGateway; chargers: [SimulatedCharger, SimulatedCharger] });
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
  });

  const plan = async (id: string) => (await gw.api('GET', planPath(id))).body;
  const siteCap = () => siteCapOf(gw, 'CP-NO-SC');

  it('refused: the site cap back to 0, and started again after the next raise interval', async () => {
    expect((await gw.api('PUT', planPath('CP-NO-SC'), TARGET)).status).toBe(201);
    await until(async () => (await plan('CP-NO-SC')).charging_strategy?.strategy === 'remote-start-stop', 'remote-start-stop', 20_000);
    gw.nowMs = at('2025-11-12T12:01:00Z');
    const txId = ((await noSc.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-A', meterStart: 0, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number }).transactionId;
    await plan('CP-NO-SC');
    expect((await gw.api('PUT', planPath('CP-OTHER'), TARGET)).status).toBe(201);
    const otherTx = ((await other.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-B', meterStart: 0, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number }).transactionId;
    await until(() => noSc.remote.length === 1, 'the car stopped for the site', 20_000);
    await noSc.client.call('StopTransaction', { transactionId: txId, meterStop: 500, timestamp: new Date(gw.nowMs).toISOString(), reason: 'Remote' });
    await until(async () => (await plan('CP-NO-SC')).charging_strategy?.paused_transaction_id === txId, 'the pause kept', 20_000);
    await other.client.call('StopTransaction', { transactionId: otherTx, meterStop: 500, timestamp: new Date(gw.nowMs).toISOString() });
    // Past the raise interval: the restart goes out and is refused.
    gw.nowMs = at('2025-11-12T12:06:05Z');
    await until(() => noSc.remote.length === 2, 'the restart sent', 30_000);
    expect(noSc.remote[1]).toMatchObject({ method: 'RemoteStartTransaction' });
    await until(() => siteCap() === 0, 'the site cap back to 0 (still stopped for the site)', 20_000);
    // Within the raise interval since that try: nothing more.
    gw.nowMs = at('2025-11-12T12:10:00Z');
    await plan('CP-NO-SC');
    await plan('CP-NO-SC');
    expect(noSc.remote).toHaveLength(2);
    // After it: tried again, taken this time.
    refuseStart = false;
    gw.nowMs = at('2025-11-12T12:11:10Z');
    await until(() => noSc.remote.length === 3, 'the restart tried again', 30_000);
    expect(noSc.remote[2]).toEqual({ method: 'RemoteStartTransaction', params: { connectorId: 1, idTag: 'TAG-A' } });
  });
});

// A car stopped for the site (site cap 0) is started again only by the site follower, never
// by its own plan: a new target PUT, or its plan at a period boundary, fits the car's own
// share, which does not say the site has room beside the others. Here the second car has
// left, so the first one's share is the site's 20 A again, but the follower's check does not
// pass yet (site.raise_interval_s, 90 min, since its stop): no RemoteStart goes out until it
// does. A third charger's car, paused by its plan (not for the site), has the same boundary:
// its RemoteStart there shows the boundary was acted on.
describe.skipIf(!hasSharedData)(`a car stopped for the site is not started by its own plan${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let noSc: SimulatedCharger;
  let other: SimulatedCharger;
  let probe: SimulatedCharger;
  // 2 kWh by 14:00 seen from 12:33: the cheapest quarter-hour is 13:15 (NL, 2025-11-12), not now.
  const LATER = { departure_time: '2025-11-12T14:00:00Z', energy_wh: 2_000 };
  // Charges in (nearly) every period from 13:20 on.
  const LONGER = { departure_time: '2025-11-12T15:30:00Z', energy_wh: 22_000 };

  beforeAll(async () => {
    ({ gw, chargers: [noSc, other, probe] } = await siteGateway({ limit_a: 20, max_reading_age_s: 2, raise_interval_s: 5400 }, [
      ['CP-NO-SC', { refusal: 'no-smart-charging' }],
      ['CP-OTHER', { rateUnits: 'Current' }],
      ['CP-PROBE', { refusal: 'no-smart-charging' }],
    ]) as { gw: PlanGateway; chargers: [SimulatedCharger, SimulatedCharger, SimulatedCharger] });
  }, 90_000);

  afterAll(async () => {
    await gw?.close();
  });

  const plan = async (id: string) => (await gw.api('GET', planPath(id))).body;
  const siteCap = () => siteCapOf(gw, 'CP-NO-SC');
  const start = (ch: SimulatedCharger, tag: string) => startTransaction(gw, ch, tag);
  const stop = (ch: SimulatedCharger, transactionId: number, reason?: string) => stopTransaction(gw, ch, transactionId, reason);

  it('a new target and a period boundary start nothing; the site follower starts it once its check passes', async () => {
    expect((await gw.api('PUT', planPath('CP-NO-SC'), TARGET)).status).toBe(201);
    await until(async () => (await plan('CP-NO-SC')).charging_strategy?.strategy === 'remote-start-stop', 'remote-start-stop', 20_000);
    gw.nowMs = at('2025-11-12T12:01:00Z');
    const txId = await start(noSc, 'TAG-A');
    await plan('CP-NO-SC');
    expect((await gw.api('PUT', planPath('CP-OTHER'), TARGET)).status).toBe(201);
    const otherTx = await start(other, 'TAG-B');
    await until(() => noSc.remote.length === 1, 'the car stopped for the site', 20_000);
    expect(noSc.remote[0]).toEqual({ method: 'RemoteStopTransaction', params: { transactionId: txId } });
    await stop(noSc, txId, 'Remote');
    await until(async () => (await plan('CP-NO-SC')).charging_strategy?.paused_transaction_id === txId, 'the pause kept', 20_000);
    expect(siteCap()).toBe(0);
    // The second car leaves: the first one's own plan may charge at 16 A again, its site cap still 0 (stopped for the site).
    gw.nowMs = at('2025-11-12T12:02:00Z');
    await stop(other, otherTx);
    expect((await plan('CP-NO-SC')).allowed_current_a).toBe(16);

    // A client PUTs its target again: a new plan, charging now within its share; no RemoteStart (the follower's check has not passed).
    gw.nowMs = at('2025-11-12T12:03:00Z');
    const again = await gw.api('PUT', planPath('CP-NO-SC'), TARGET);
    expect([200, 201]).toContain(again.status);
    expect(again.body.allowed_current_a).toBe(16);
    expect(Date.parse(again.body.planned.periods[0].start)).toBeLessThanOrEqual(gw.nowMs);
    await plan('CP-NO-SC');
    await plan('CP-NO-SC');
    expect(noSc.remote).toHaveLength(1);
    expect(siteCap()).toBe(0);

    // A target whose plan charges from 13:15; the probe's car gets the same one and is paused by it (its site cap stays unset).
    gw.nowMs = at('2025-11-12T12:33:00Z');
    const later = await gw.api('PUT', planPath('CP-NO-SC'), LATER);
    expect(Date.parse(later.body.planned.periods[0].start)).toBe(at('2025-11-12T13:15:00Z'));
    expect((await gw.api('PUT', planPath('CP-PROBE'), LATER)).status).toBe(201);
    await until(async () => (await plan('CP-PROBE')).charging_strategy?.strategy === 'remote-start-stop', 'the probe on remote-start-stop', 20_000);
    const probeTx = await start(probe, 'TAG-P');
    await until(() => probe.remote.length === 1, 'the probe\'s car paused by its plan', 20_000);
    expect(probe.remote[0]).toEqual({ method: 'RemoteStopTransaction', params: { transactionId: probeTx } });
    await stop(probe, probeTx, 'Remote');
    await until(async () => (await plan('CP-PROBE')).charging_strategy?.paused_transaction_id === probeTx, 'the probe\'s pause kept', 20_000);
    // The boundary: the probe's car is started by its plan, the car stopped for the site is not.
    gw.nowMs = at('2025-11-12T13:15:00Z');
    await until(() => probe.remote.length === 2, 'the probe\'s car started at the boundary', 30_000);
    expect(probe.remote[1]).toEqual({ method: 'RemoteStartTransaction', params: { connectorId: 1, idTag: 'TAG-P' } });
    await plan('CP-NO-SC');
    await plan('CP-NO-SC');
    expect(noSc.remote).toHaveLength(1);
    expect(siteCap()).toBe(0);

    // Past the raise interval since its stop (12:01 + 90 min), with a plan charging now: the site follower's check passes and it starts the car.
    gw.nowMs = at('2025-11-12T13:20:00Z');
    expect((await gw.api('PUT', planPath('CP-NO-SC'), LONGER)).status).toBe(200);
    gw.nowMs = at('2025-11-12T13:31:05Z');
    await until(() => noSc.remote.length === 2, 'the car started by the site follower', 30_000);
    expect(noSc.remote[1]).toEqual({ method: 'RemoteStartTransaction', params: { connectorId: 1, idTag: 'TAG-A' } });
    expect(siteCap()).toBe(16);
  });
});
