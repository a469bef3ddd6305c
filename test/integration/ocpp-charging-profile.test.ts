// Plans applied to chargers: a running gateway (Daemon with its real modules) and a charger
// simulated by ocpp-rpc's RPCClient in strict mode, so every SetChargingProfile the gateway
// sends is validated against the official OCPP 1.6 schema on the charger's side (a call
// that does not pass is answered with a CallError, which the gateway stores as 'error').
// Real NL day-ahead prices: on 2025-11-12 at 12:00Z the prices up to 23:00Z are stored;
// the next day's come later (prices.updated, as the price sync emits it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { limitAt, profileEnergyWh, startPlanGateway, type PlanGateway, type SentProfile as Profile, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

const at = (iso: string) => Date.parse(iso);

interface PlanPeriodView {
  start: string;
  end: string;
  current_a: number;
  energy_wh: number;
}

describe.skipIf(!hasSharedData)(`plans applied to chargers with SetChargingProfile${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let cp: SimulatedCharger;
  const publishedUntilMs = at('2025-11-12T23:00:00Z');
  /** Every profile the charger received, over its reconnects. */
  const received: Profile[] = [];
  let answer: 'Accepted' | 'Rejected' = 'Accepted';
  let transactionId = 0;
  let planAtStart: any;

  // 'Rejected' answers one SetChargingProfile, then the charger takes profiles again.
  const connectCharger = () =>
    gw.connect('CP-PLAN', {
      answer: () => {
        const a = answer;
        answer = 'Accepted';
        return a;
      },
      profiles: received,
    });

  beforeAll(async () => {
    gw = await startPlanGateway({ startMs: at('2025-11-12T12:00:00Z'), pricesFromMs: 0, pricesToMs: publishedUntilMs, chargers: [{ id: 'CP-PLAN' }] });
    cp = await connectCharger();
    await cp.client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  const api = (method: string, path: string, body?: unknown) => gw.api(method, path, body);

  const PLAN = '/api/v1/chargers/CP-PLAN/connectors/1/plan';

  /** The profile must allow, at each planned period, the plan's current rounded down to a tenth of an ampere, and 0 A elsewhere. */
  function expectProfileMatchesPlan(profile: Profile, plan: { planned_at: string; departure_time: string; planned: { energy_wh: number; periods: PlanPeriodView[] } }) {
    const schedule = profile.csChargingProfiles.chargingSchedule;
    expect(schedule.chargingRateUnit).toBe('A');
    expect(Date.parse(schedule.startSchedule)).toBe(Date.parse(plan.planned_at));
    expect(schedule.duration).toBe((Date.parse(plan.departure_time) - Date.parse(plan.planned_at)) / 1000);
    const startMs = Date.parse(schedule.startSchedule);
    expect(schedule.chargingSchedulePeriod[0]!.startPeriod).toBe(0);
    for (const period of plan.planned.periods) {
      const fromS = (Date.parse(period.start) - startMs) / 1000;
      const toS = (Date.parse(period.end) - startMs) / 1000;
      const expected = Math.floor(period.current_a * 10 + 1e-9) / 10;
      expect(limitAt(profile, fromS), `limit at ${period.start}`).toBe(expected);
      expect(limitAt(profile, toS - 1), `limit just before ${period.end}`).toBe(expected);
    }
    // Outside the planned periods nothing is charged: the schedule's energy is the plan's,
    // less only what rounding down to a tenth of an ampere takes off.
    const energyWh = profileEnergyWh(profile);
    expect(energyWh).toBeLessThanOrEqual(plan.planned.energy_wh + 1);
    expect(energyWh).toBeGreaterThan(plan.planned.energy_wh * 0.95);
  }

  it('sends the plan set over HTTP as a TxDefaultProfile the charger accepts; GET shows the answer', async () => {
    const put = await api('PUT', PLAN, { departure_time: '2025-11-13T07:00:00Z', energy_wh: 30_000 });
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({ meets_target: true });
    await until(() => received.length === 1, 'a SetChargingProfile after the PUT', 20_000);
    const profile = received[0]!;
    expect(profile).toMatchObject({ connectorId: 1, csChargingProfiles: { chargingProfilePurpose: 'TxDefaultProfile', chargingProfileKind: 'Absolute', stackLevel: 0 } });
    expect(profile.csChargingProfiles.transactionId).toBeUndefined();
    expectProfileMatchesPlan(profile, put.body);
    expect(put.body.planned.periods.length).toBeGreaterThan(0);

    await until(async () => (await api('GET', PLAN)).body.charger_profile !== null, 'the answer stored', 20_000);
    const got = await api('GET', PLAN);
    expect(got.body.charger_profile).toMatchObject({ purpose: 'TxDefaultProfile', transaction_id: null, status: 'Accepted', error: null, periods: profile.csChargingProfiles.chargingSchedule.chargingSchedulePeriod.length });
  });

  it('sends a TxProfile for the transaction started on the connector', async () => {
    gw.nowMs = at('2025-11-12T12:05:00Z');
    const start = (await cp.client.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 1000, timestamp: new Date(gw.nowMs).toISOString() })) as { transactionId: number };
    await until(() => received.length === 2, 'a SetChargingProfile after StartTransaction', 20_000);
    const profile = received[1]!;
    expect(profile.csChargingProfiles).toMatchObject({ chargingProfilePurpose: 'TxProfile', transactionId: start.transactionId });
    const got = await api('GET', PLAN);
    expectProfileMatchesPlan(profile, got.body);
    transactionId = start.transactionId;
    planAtStart = got.body;
    await until(async () => (await api('GET', PLAN)).body.charger_profile?.purpose === 'TxProfile', 'the TxProfile answer stored', 20_000);
    expect((await api('GET', PLAN)).body.charger_profile).toMatchObject({ transaction_id: start.transactionId, status: 'Accepted' });
  });

  it('sends the new plan when the next day\'s prices arrive; a Rejected TxProfile falls to a TxDefaultProfile, remembered', async () => {
    const before = (await api('GET', PLAN)).body;
    // Before the next day's prices only the evening is plannable.
    expect(before.planned.periods.every((p: PlanPeriodView) => Date.parse(p.start) < publishedUntilMs)).toBe(true);
    answer = 'Rejected';
    const tomorrow = gw.prices.filter((p) => p.startMs >= publishedUntilMs && p.startMs < publishedUntilMs + 86_400_000);
    storePrices(new PriceStore(gw.daemon.ctx.db), tomorrow, { source: 'entsoe', fetchedAtMs: gw.nowMs });
    gw.daemon.ctx.events.emit('prices.updated', { marketArea: 'NL', fromMs: publishedUntilMs, toMs: publishedUntilMs + 86_400_000, periods: tomorrow.length });
    await until(() => received.length >= 3, 'a SetChargingProfile after prices.updated', 20_000);
    const profile = received[2]!;
    expect(profile.csChargingProfiles.chargingProfilePurpose).toBe('TxProfile');
    const after = (await api('GET', PLAN)).body;
    expect(after.planned.periods.some((p: PlanPeriodView) => Date.parse(p.start) >= publishedUntilMs)).toBe(true);
    expectProfileMatchesPlan(profile, after);
    expect(profile.csChargingProfiles.chargingSchedule.chargingSchedulePeriod).not.toEqual(received[1]!.csChargingProfiles.chargingSchedule.chargingSchedulePeriod);
    // The charger rejected the TxProfile: the same plan goes at once as the next strategy's profile (docs/chargers.md "Chargers that say no").
    await until(() => received.length === 4, 'the TxDefaultProfile after the rejected TxProfile', 20_000);
    expect(received[3]!.csChargingProfiles.chargingProfilePurpose).toBe('TxDefaultProfile');
    expect(received[3]!.csChargingProfiles.transactionId).toBeUndefined();
    expect(received[3]!.csChargingProfiles.chargingSchedule.chargingSchedulePeriod).toEqual(profile.csChargingProfiles.chargingSchedule.chargingSchedulePeriod);
    await until(async () => (await api('GET', PLAN)).body.charger_profile?.purpose === 'TxDefaultProfile', 'the TxDefaultProfile answer stored', 20_000);
    const got = (await api('GET', PLAN)).body;
    expect(got.charger_profile).toMatchObject({ status: 'Accepted', transaction_id: transactionId });
    expect(got.charging_strategy).toMatchObject({ strategy: 'tx-default-profile', charger_refused: [{ strategy: 'tx-profile', answer: 'Rejected' }] });
    expect(got.charging_strategy.reason).toMatch(/^tx-default-profile: tx-profile refused before \(Rejected at /);
    // The session runs under the plan the charger took (as a TxDefaultProfile).
    const sessions = got.planned_sessions;
    expect(sessions).toHaveLength(1);
    expect(sessions[0].planned_at).toBe(after.planned_at);
    planAtStart = after;
  });

  it('a charger that reconnects without BootNotification gets its plan again, by the strategy it took (not the TxProfile it rejected)', async () => {
    answer = 'Accepted';
    gw.nowMs = at('2025-11-12T13:00:00Z');
    await cp.client.close();
    cp = await connectCharger();
    await until(() => received.length === 5, 'a SetChargingProfile after the reconnect', 20_000);
    expect(received[4]!.csChargingProfiles.chargingProfilePurpose).toBe('TxDefaultProfile');
    const got = await api('GET', PLAN);
    expectProfileMatchesPlan(received[4]!, got.body);
    await until(async () => (await api('GET', PLAN)).body.charger_profile?.status === 'Accepted', 'the Accepted answer stored', 20_000);
    planAtStart = got.body;
  });

  it('a completed session that ran under an accepted plan shows its expected and immediate cost', async () => {
    gw.nowMs = at('2025-11-13T07:00:00Z');
    await cp.client.call('StopTransaction', { transactionId, meterStop: 31_000, timestamp: new Date(gw.nowMs).toISOString() });
    const got = await api('GET', PLAN);
    // The last plan the charger accepted (after the reconnect) is the one the session ran under.
    expect(got.body.planned_sessions).toHaveLength(1);
    expect(got.body.planned_sessions[0]).toMatchObject({
      cpo_transaction_id: `ocpp:CP-PLAN:${transactionId}`,
      status: 'completed',
      start_date_time: '2025-11-12T12:05:00Z',
      end_date_time: '2025-11-13T07:00:00Z',
      planned_at: planAtStart.planned_at,
      energy_needed_wh: 30_000,
      cdr: `/api/v1/cdrs/ocpp:CP-PLAN:${transactionId}`,
    });
    expect(got.body.planned_sessions[0].planned_energy_wh).toBeCloseTo(planAtStart.planned.energy_wh, 1);
    expect(got.body.planned_sessions[0].expected_cost).toBeCloseTo(planAtStart.planned.cost.expected, 4);
    expect(got.body.planned_sessions[0].immediate_cost).toBeCloseTo(planAtStart.immediate.cost.expected, 4);
    expect(got.body.planned_sessions[0].expected_cost).toBeLessThan(got.body.planned_sessions[0].immediate_cost);
  });
});
