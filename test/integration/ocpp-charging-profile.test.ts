// Plans applied to chargers: a running gateway (Daemon with its real modules) and a charger
// simulated by ocpp-rpc's RPCClient in strict mode, so every SetChargingProfile the gateway
// sends is validated against the official OCPP 1.6 schema on the charger's side (a call
// that does not pass is answered with a CallError, which the gateway stores as 'error').
// Real NL day-ahead prices: on 2025-11-12 at 12:00Z the prices up to 23:00Z are stored;
// the next day's come later (prices.updated, as the price sync emits it).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createContext, Daemon } from '../../src/daemon.js';
import type { PricePeriod } from '../../src/domain.js';
import { freePort } from '../../src/free-port.js';
import { createLogger } from '../../src/log.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { PriceStore } from '../../src/store/prices.js';
import { TokenStore } from '../../src/store/tokens.js';
import { expectDocumented } from '../helpers/openapi.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const clientOptions = (o: Partial<ClientOptions>) => o as ClientOptions;

const PASSWORD = 'charger-secret-0123456789';
const at = (iso: string) => Date.parse(iso);

interface Profile {
  connectorId: number;
  csChargingProfiles: {
    chargingProfileId: number;
    transactionId?: number;
    chargingProfilePurpose: string;
    chargingProfileKind: string;
    chargingSchedule: { duration: number; startSchedule: string; chargingRateUnit: string; chargingSchedulePeriod: Array<{ startPeriod: number; limit: number }> };
  };
}

interface PlanPeriodView {
  start: string;
  end: string;
  current_a: number;
  energy_wh: number;
}

/** What the charger is allowed at each second from the schedule start, per the profile. */
function limitAt(profile: Profile, secondFromStart: number): number {
  const periods = profile.csChargingProfiles.chargingSchedule.chargingSchedulePeriod;
  let limit = NaN;
  for (const p of periods) if (p.startPeriod <= secondFromStart) limit = p.limit;
  return limit;
}

/** Energy (Wh) the schedule lets a three-phase 230 V charger take. */
function scheduleEnergyWh(profile: Profile): number {
  const { chargingSchedulePeriod: periods, duration } = profile.csChargingProfiles.chargingSchedule;
  return periods.reduce((sum, p, i) => sum + (p.limit * 3 * 230 * ((periods[i + 1]?.startPeriod ?? duration) - p.startPeriod)) / 3600, 0);
}

describe.skipIf(!hasSharedData)(`plans applied to chargers with SetChargingProfile${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let daemon: Daemon;
  let httpPort: number;
  let cpoToken: string;
  let native: PricePeriod[];
  let charger: RPCClient | undefined;
  let nowMs = at('2025-11-12T12:00:00Z');
  const publishedUntilMs = at('2025-11-12T23:00:00Z');
  const received: Profile[] = [];
  let answer: 'Accepted' | 'Rejected' = 'Accepted';
  let transactionId = 0;
  let planAtStart: any;
  let ocppPort = 0;

  async function connectCharger(): Promise<RPCClient> {
    const client = new RPCClient(clientOptions({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity: 'CP-PLAN', password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false }));
    client.handle('SetChargingProfile', async ({ params }: { params?: unknown }) => {
      received.push(params as Profile);
      return { status: answer };
    });
    await client.connect();
    return client;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-profile-'));
    ocppPort = await freePort();
    httpPort = await freePort();
    const config = validateConfig(
      {
        organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        data_dir: join(dir, 'data'),
        log_level: 'fatal',
        http: { host: '127.0.0.1', port: httpPort },
        prices: { regions: ['NL'], source: 'none' },
        forecast: { enabled: false },
        ocpp: { host: '127.0.0.1', port: ocppPort },
        chargers: [{ id: 'CP-PLAN', password: PASSWORD, auth: 'accept_all' }],
      },
      'test',
      {},
    );
    const ctx = createContext(config, { logger: createLogger('fatal'), clock: { now: () => nowMs } });
    native = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL')).periods;
    new PriceStore(ctx.db).upsert(native.filter((p) => p.startMs < publishedUntilMs), { source: 'csv:nl-2025-quarterhour-local-utc.csv', fetchedAtMs: 0 });
    cpoToken = new TokenStore(ctx.db).create({ name: 'test-cpo', type: 'cpo', nowMs }).token;
    daemon = new Daemon(ctx);
    await daemon.start();
    charger = await connectCharger();
    await charger.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  }, 60_000);

  afterAll(async () => {
    await charger?.close({ force: true }).catch(() => undefined);
    await daemon?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`http://127.0.0.1:${httpPort}${path}`, {
      method,
      headers: { authorization: `Token ${cpoToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    expectDocumented(method, '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan', res, json);
    return { status: res.status, body: json };
  }

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
    const energyWh = scheduleEnergyWh(profile);
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
    nowMs = at('2025-11-12T12:05:00Z');
    const start = (await charger!.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 1000, timestamp: new Date(nowMs).toISOString() })) as { transactionId: number };
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

  it('sends the new plan when the next day\'s prices arrive, and records a Rejected answer', async () => {
    const before = (await api('GET', PLAN)).body;
    // Before the next day's prices only the evening is plannable.
    expect(before.planned.periods.every((p: PlanPeriodView) => Date.parse(p.start) < publishedUntilMs)).toBe(true);
    answer = 'Rejected';
    const tomorrow = native.filter((p) => p.startMs >= publishedUntilMs && p.startMs < publishedUntilMs + 86_400_000);
    new PriceStore(daemon.ctx.db).upsert(tomorrow, { source: 'entsoe', fetchedAtMs: nowMs });
    daemon.ctx.events.emit('prices.updated', { marketArea: 'NL', fromMs: publishedUntilMs, toMs: publishedUntilMs + 86_400_000, periods: tomorrow.length });
    await until(() => received.length === 3, 'a SetChargingProfile after prices.updated', 20_000);
    const profile = received[2]!;
    expect(profile.csChargingProfiles.chargingProfilePurpose).toBe('TxProfile');
    const after = (await api('GET', PLAN)).body;
    expect(after.planned.periods.some((p: PlanPeriodView) => Date.parse(p.start) >= publishedUntilMs)).toBe(true);
    expectProfileMatchesPlan(profile, after);
    expect(profile.csChargingProfiles.chargingSchedule.chargingSchedulePeriod).not.toEqual(received[1]!.csChargingProfiles.chargingSchedule.chargingSchedulePeriod);
    await until(async () => (await api('GET', PLAN)).body.charger_profile?.status === 'Rejected', 'the Rejected answer stored', 20_000);
    // A rejected plan is not what the session runs under: it keeps the one accepted at its start.
    const sessions = (await api('GET', PLAN)).body.planned_sessions;
    expect(sessions).toHaveLength(1);
    expect(sessions[0].planned_at).toBe(planAtStart.planned_at);
    expect(sessions[0].expected_cost).toBeCloseTo(planAtStart.planned.cost.expected, 4);
  });

  it('a charger that reconnects without BootNotification gets its TxProfile again', async () => {
    answer = 'Accepted';
    nowMs = at('2025-11-12T13:00:00Z');
    await charger!.close();
    charger = await connectCharger();
    await until(() => received.length === 4, 'a SetChargingProfile after the reconnect', 20_000);
    expect(received[3]!.csChargingProfiles).toMatchObject({ chargingProfilePurpose: 'TxProfile', transactionId });
    const got = await api('GET', PLAN);
    expectProfileMatchesPlan(received[3]!, got.body);
    await until(async () => (await api('GET', PLAN)).body.charger_profile?.status === 'Accepted', 'the Accepted answer stored', 20_000);
    planAtStart = got.body;
  });

  it('a completed session that ran under an accepted plan shows its expected and immediate cost', async () => {
    nowMs = at('2025-11-13T07:00:00Z');
    await charger!.call('StopTransaction', { transactionId, meterStop: 31_000, timestamp: new Date(nowMs).toISOString() });
    const got = await api('GET', PLAN);
    // The last plan the charger accepted (after the reconnect) is the one the session ran under.
    expect(got.body.planned_sessions).toHaveLength(1);
    expect(got.body.planned_sessions[0]).toMatchObject({
      cpo_transaction_id: `CP-PLAN-${transactionId}`,
      status: 'completed',
      start_date_time: '2025-11-12T12:05:00Z',
      end_date_time: '2025-11-13T07:00:00Z',
      planned_at: planAtStart.planned_at,
      energy_needed_wh: 30_000,
      cdr: `/api/v1/cdrs/CP-PLAN-${transactionId}`,
    });
    expect(got.body.planned_sessions[0].planned_energy_wh).toBeCloseTo(planAtStart.planned.energy_wh, 1);
    expect(got.body.planned_sessions[0].expected_cost).toBeCloseTo(planAtStart.planned.cost.expected, 4);
    expect(got.body.planned_sessions[0].immediate_cost).toBeCloseTo(planAtStart.immediate.cost.expected, 4);
    expect(got.body.planned_sessions[0].expected_cost).toBeLessThan(got.body.planned_sessions[0].immediate_cost);
  });
});
