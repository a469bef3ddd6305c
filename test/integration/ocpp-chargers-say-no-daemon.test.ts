// Chargers that say no against a real `metergate run` (docs/chargers.md "Chargers that say
// no"): one strict ocpp-rpc charger that rejects TxProfiles and one that has no
// SetChargingProfile at all (ocpp-rpc answers the NotImplemented CallError). The daemon reads
// what each supports after BootNotification; the first gets its plan as a TxDefaultProfile
// after one rejected TxProfile, the second is paused by RemoteStopTransaction where its plan
// holds the car at 0 and its target outlives the stop. The plan's GET, /metrics and the log
// say which strategy is in force and why. Real NL prices of 2025-11-12/13 moved so that the
// daemon's real now falls on 16:30Z of 2025-11-12, an evening peak: a small target departing
// 14 hours later is planned for the night, so now is a 0 period (checked on the plan, not
// assumed). Boundaries in time are tested with the test's clock in ocpp-chargers-say-no.test.ts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { TokenStore } from '../../src/store/tokens.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { connectSimulatedCharger, type SimulatedCharger } from '../helpers/ocpp-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { seriesValue } from '../helpers/prom-text.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';

const PASSWORD = 'garage-key-0123456789';
const PLAN = '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan';
const QUARTER = 900_000;
const planPath = (id: string) => `/api/v1/chargers/${id}/connectors/1/plan`;

describe.skipIf(!hasSharedData)(`metergate run: chargers that say no${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-say-no-'));
  let daemon: DaemonProcess | undefined;
  let token = '';
  let httpPort = 0;
  const chargers: SimulatedCharger[] = [];
  let rejectsTx: SimulatedCharger;
  let notImpl: SimulatedCharger;

  const api = async (method: 'GET' | 'PUT', path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${httpPort}${path}`, {
      method,
      headers: { authorization: `Token ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, any>;
    expectDocumented(method, PLAN, res, json);
    return { status: res.status, body: json };
  };

  beforeAll(async () => {
    const dataDir = join(dir, 'data');
    const nowMs = Date.now();
    const shiftMs = Math.floor(nowMs / QUARTER) * QUARTER - Date.parse('2025-11-12T16:30:00Z');
    const prices = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL')).periods.filter(
      (p) => p.startMs >= Date.parse('2025-11-12T00:00:00Z') && p.startMs < Date.parse('2025-11-14T00:00:00Z'),
    );
    const db = openDaemonDatabase(databasePath(dataDir));
    storePrices(new PriceStore(db), prices.map((p) => ({ ...p, startMs: p.startMs + shiftMs })), { source: 'csv:nl-2025-quarterhour-local-utc.csv (moved to now)', fetchedAtMs: nowMs });
    token = new TokenStore(db).create({ name: 'test-cpo', type: 'cpo', nowMs }).token;
    db.close();
    const ocppPort = await freePort();
    httpPort = await freePort();
    const config = join(dir, 'config.yaml');
    const charger = (id: string) => [`  - id: ${id}`, `    password: ${PASSWORD}`, '    auth: accept_all', '    connectors: [{ connector_id: 1 }]'];
    writeFileSync(
      config,
      [
        ...centralSystemConfigHead({ dataDir, httpPort, ocppPort }),
        'chargers:',
        ...charger('CP-REJECTS-TX'),
        ...charger('CP-NOT-IMPL'),
        '',
      ].join('\n'),
    );
    daemon = await startDaemon(config);
    rejectsTx = await connectSimulatedCharger(ocppPort, 'CP-REJECTS-TX', PASSWORD, { refusal: 'rejects-tx-profile' });
    notImpl = await connectSimulatedCharger(ocppPort, 'CP-NOT-IMPL', PASSWORD, { refusal: 'not-implemented' });
    chargers.push(rejectsTx, notImpl);
    for (const c of chargers) await c.client.call('BootNotification', { chargePointVendor: 'Vendor', chargePointModel: 'says no' });
    await until(() => chargers.every((c) => c.configurationRequests.length === 1), 'GetConfiguration after boot', 30_000);
  }, 90_000);

  afterAll(async () => {
    for (const c of chargers) await c.client.close({ force: true }).catch(() => undefined);
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const target = () => ({ departure_time: new Date(Math.floor(Date.now() / QUARTER) * QUARTER + 14 * 3_600_000).toISOString(), energy_wh: 4_000 });
  const startTransaction = async (c: SimulatedCharger, idTag: string) =>
    ((await c.client.call('StartTransaction', { connectorId: 1, idTag, meterStart: 0, timestamp: new Date().toISOString() })) as { transactionId: number }).transactionId;

  it('a charger that rejects TxProfiles gets the plan as a TxDefaultProfile, and the plan says why', async () => {
    expect(rejectsTx.configurationRequests[0]).toEqual({ key: ['SupportedFeatureProfiles', 'ChargeProfileMaxStackLevel', 'ChargingScheduleAllowedChargingRateUnit', 'ChargingScheduleMaxPeriods'] });
    expect((await api('PUT', planPath('CP-REJECTS-TX'), target())).status).toBe(201);
    await until(() => rejectsTx.profiles.length === 1, 'the TxDefaultProfile before a transaction', 20_000);
    const txId = await startTransaction(rejectsTx, 'TAG-A');
    await until(() => rejectsTx.profiles.length === 3, 'the TxProfile and the TxDefaultProfile after it', 20_000);
    expect(rejectsTx.profiles.map((p) => p.csChargingProfiles.chargingProfilePurpose)).toEqual(['TxDefaultProfile', 'TxProfile', 'TxDefaultProfile']);
    expect(rejectsTx.profiles[1]!.csChargingProfiles.transactionId).toBe(txId);
    await until(async () => (await api('GET', planPath('CP-REJECTS-TX'))).body.charging_strategy?.strategy === 'tx-default-profile' && (await api('GET', planPath('CP-REJECTS-TX'))).body.charger_profile?.status === 'Accepted', 'the fallback stored', 20_000);
    const got = (await api('GET', planPath('CP-REJECTS-TX'))).body;
    expect(got.charging_strategy.charger_refused).toMatchObject([{ strategy: 'tx-profile', answer: 'Rejected' }]);
    expect(got.charging_strategy.reason).toMatch(/^tx-default-profile: tx-profile refused before \(Rejected at /);
    expect(got.charger_profile).toMatchObject({ purpose: 'TxDefaultProfile', transaction_id: txId, status: 'Accepted' });
  });

  it('a charger without SetChargingProfile is paused by RemoteStopTransaction in a 0 period; its target outlives the stop', async () => {
    expect((await api('PUT', planPath('CP-NOT-IMPL'), target())).status).toBe(201);
    await until(async () => (await api('GET', planPath('CP-NOT-IMPL'))).body.charging_strategy?.strategy === 'remote-start-stop', 'remote-start-stop after NotImplemented', 20_000);
    const plan = (await api('GET', planPath('CP-NOT-IMPL'))).body;
    expect(plan.charging_strategy.charger_refused).toMatchObject([{ strategy: 'all-profiles', answer: 'NotImplemented' }]);
    expect(plan.charger_profile).toMatchObject({ purpose: 'TxDefaultProfile', status: 'NotImplemented' });
    expect(notImpl.profiles).toEqual([]);
    // The moved prices put now in the evening peak: the plan charges later.
    expect(Date.parse(plan.planned.periods[0].start)).toBeGreaterThan(Date.now());
    const txId = await startTransaction(notImpl, 'TAG-B');
    await until(() => notImpl.remote.length === 1, 'RemoteStopTransaction', 20_000);
    expect(notImpl.remote[0]).toEqual({ method: 'RemoteStopTransaction', params: { transactionId: txId } });
    await notImpl.client.call('StopTransaction', { transactionId: txId, meterStop: 0, timestamp: new Date().toISOString(), reason: 'Remote' });
    await until(async () => (await api('GET', planPath('CP-NOT-IMPL'))).body.charging_strategy?.paused_transaction_id === txId, 'the pause stored', 20_000);
    const after = (await api('GET', planPath('CP-NOT-IMPL'))).body;
    expect(after.ended_at).toBeNull();
    expect(after.planned.energy_wh).toBeGreaterThan(0);
    // Only one SetChargingProfile was ever tried: the NotImplemented CallError is remembered.
    const notTaken = daemon!
      .output()
      .split('\n')
      .filter((l) => l.includes('"charging profile not taken by the charger"') && l.includes('"CP-NOT-IMPL"'));
    expect(notTaken).toHaveLength(1);
  });

  it('/metrics and the log say which strategy is in force, and since when it changed', async () => {
    const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(seriesValue(text, 'metergate_ocpp_charging_strategy', { charge_point_id: 'CP-REJECTS-TX', connector_id: '1', strategy: 'tx-default-profile' })).toBe(1);
    expect(seriesValue(text, 'metergate_ocpp_charging_strategy', { charge_point_id: 'CP-NOT-IMPL', connector_id: '1', strategy: 'remote-start-stop' })).toBe(1);
    expect(seriesValue(text, 'metergate_ocpp_charging_strategy', { charge_point_id: 'CP-REJECTS-TX', connector_id: '1', strategy: 'tx-profile' })).toBeUndefined();
    const changes = daemon!
      .output()
      .split('\n')
      .filter((l) => l.includes('"charging strategy in force changed"'))
      .map((l) => JSON.parse(l) as { charge_point_id: string; strategy: string; previous_strategy: string | null; reason: string });
    expect(changes.filter((c) => c.charge_point_id === 'CP-NOT-IMPL').map((c) => [c.previous_strategy, c.strategy])).toEqual([
      [null, 'tx-default-profile'],
      ['tx-default-profile', 'remote-start-stop'],
    ]);
    expect(changes.find((c) => c.strategy === 'remote-start-stop')!.reason).toContain('refused charging profiles outright (NotImplemented');
  });
});
