// A store that refuses writes during charger exchanges (issue 20, item 2): `metergate run`
// polls a simulated SDM630 over Modbus TCP and is the central system of a strict ocpp-rpc
// charger, while another process holds the database's write lock, or while the data
// directory's file system (a real tmpfs) is full to the last byte. During BootNotification,
// StartTransaction, MeterValues and StopTransaction the charger gets an InternalError
// CallError once ocpp.storage_wait_s has passed and sends the message again, as OCPP 1.6
// section 3.7 has chargers do; the answers to the gateway's SetChargingProfile and
// ClearChargingProfile wait in memory. Afterwards the process is up, every transaction,
// meter value and profile answer is in the database, and every meter reading taken
// meanwhile was stored.
//
// An OCPP 2.0.1 station in the same daemon (issue 33; ocpp-ws-io, every frame the gateway
// sends it checked against the official 2.0.1 schemas): a transaction's
// TransactionEvents Started, Updated and Ended, sent while the store refuses, get an
// InternalError CallError and are sent again, as a 2.0.1 station does with a
// transaction-related message the CSMS failed to process (Part 2 E13,
// MessageAttemptsTransactionEvent), or given up once its attempts are spent (the gateway
// kept it); StatusNotification and Heartbeat are answered as usual. Afterwards the
// transaction is stored once, whole: its start, every value, its stop.
import Database from 'better-sqlite3';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { TokenStore } from '../../src/store/tokens.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { fillToLastByte } from '../helpers/disk-fill.js';
import { connectOcttCharger, type OcttCharger } from '../helpers/octt-charger.js';
import { canMountTmpfs } from '../helpers/peers.js';
import { seriesValue } from '../helpers/prom-text.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { startSim, type SimProcess } from '../helpers/sim-process.js';
import { until } from '../helpers/wait.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const METER = '8a0c2e4b-6d8f-4a1c-9e3b-5d7f9a1c3e5b';
const CP = 'CP-STORE-1';
const CS = 'CS-STORE-201';
const PASSWORD = 'store-fault-key-0123456789';
const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;

/** What makes the store refuse writes, and takes it away again. */
interface StorageFault {
  start(): Promise<void>;
  end(): Promise<void>;
  close(): Promise<void>;
}

/** Another process holds the database's write lock (BEGIN IMMEDIATE) until told to let go. */
function lockFault(dbPath: string): StorageFault {
  let holder: { child: ChildProcess; release(): Promise<void> } | null = null;
  return {
    async start() {
      const script = `import Database from 'better-sqlite3';
import { createInterface } from 'node:readline';
const db = new Database(${JSON.stringify(dbPath)});
db.exec('BEGIN IMMEDIATE');
console.log('locked');
createInterface({ input: process.stdin }).once('line', () => { db.exec('COMMIT'); db.close(); console.log('released'); process.exit(0); });`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] });
      const lines = createInterface({ input: child.stdout! });
      const seen = (word: string) =>
        new Promise<void>((resolve, reject) => {
          lines.on('line', (l) => l === word && resolve());
          child.once('exit', (code) => code !== 0 && reject(new Error(`lock holder exited ${code} before "${word}"`)));
        });
      const released = seen('released');
      await seen('locked');
      holder = {
        child,
        async release() {
          child.stdin!.write('release\n');
          await released;
        },
      };
    },
    async end() {
      await holder?.release();
      holder = null;
    },
    async close() {
      holder?.child.kill('SIGKILL');
    },
  };
}

/**
 * The data directory's tmpfs filled to the last byte: SQLITE_FULL once the WAL or the file
 * must grow. A refused recorder write alone did not make that certain (CI, 2026-11-27: the
 * charger's three small answers were stored on the "full" disk): a WAL file longer than its
 * valid frames, or restarted from its start after a checkpoint, takes small writes without
 * new space. So first the WAL is truncated, then the daemon's next commit appends to it, then
 * a read transaction of the test's own pins those frames (the writer cannot restart the WAL
 * under a reader), and only then is the disk filled: every later write must grow the WAL.
 */
function diskFullFault(dir: string, storeWritable: () => Promise<boolean>): StorageFault {
  let filler: string | null = null;
  let reader: Database.Database | null = null;
  return {
    async start() {
      const db = new Database(databasePath(dir));
      reader = db;
      const wal = `${databasePath(dir)}-wal`;
      await until(() => (db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>)[0]?.busy === 0 && statSync(wal).size === 0, 'the WAL truncated', 30_000);
      await until(() => statSync(wal).size > 0, 'the daemon committing again into the empty WAL', 30_000);
      db.exec('BEGIN');
      db.prepare('SELECT count(*) AS n FROM sqlite_master').get();
      filler = fillToLastByte(dir);
      await until(async () => !(await storeWritable()), 'the store refusing writes on the full disk', 30_000);
    },
    async end() {
      if (reader) {
        reader.exec('COMMIT');
        reader.close();
      }
      reader = null;
      if (filler) rmSync(filler, { force: true });
      filler = null;
    },
    async close() {
      await this.end();
    },
  };
}

const mountable = canMountTmpfs();

const cases = [
  { name: 'another process holds the write lock', tmpfs: false, runs: hasSharedData },
  { name: 'the disk is full', tmpfs: true, runs: hasSharedData && mountable },
];

describe.each(cases)('charger exchanges while $name', ({ tmpfs, runs }) => {
  let dir: string;
  let dataDir: string;
  let fault: StorageFault;
  let sim: SimProcess;
  let daemon: DaemonProcess;
  let base: string;
  let ocppPort: number;
  let token: string;
  const clients: RPCClient[] = [];
  const stations: OcttCharger[] = [];
  /** Calls the gateway made to the charger, as the charger answered them. */
  const received: Array<{ method: string; params: Record<string, unknown>; atMs: number }> = [];
  const faultWindows: Array<{ fromMs: number; toMs: number }> = [];

  const scrape = async () => (await fetch(`${base}/metrics`)).text();
  const readDb = <T,>(sql: string, ...args: unknown[]): T[] => {
    const db = new Database(databasePath(dataDir), { readonly: true });
    try {
      return db.prepare(sql).all(...args) as T[];
    } finally {
      db.close();
    }
  };
  const api = (method: string, connectorId: number, body?: unknown) =>
    fetch(`${base}/api/v1/chargers/${CP}/connectors/${connectorId}/plan`, {
      method,
      headers: { authorization: `Token ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  const connect = async () => {
    const cp = new RPCClient({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity: CP, password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    for (const method of ['SetChargingProfile', 'ClearChargingProfile'] as const) {
      cp.handle(method, async ({ params }: { params?: unknown }) => {
        received.push({ method, params: params as Record<string, unknown>, atMs: Date.now() });
        return { status: 'Accepted' };
      });
    }
    cp.handle('GetConfiguration', async ({ params }: { params?: unknown }) => {
      received.push({ method: 'GetConfiguration', params: params as Record<string, unknown>, atMs: Date.now() });
      return { configurationKey: [{ key: 'ChargingScheduleAllowedChargingRateUnit', readonly: true, value: 'Current' }] };
    });
    clients.push(cp);
    await cp.connect();
    return cp;
  };

  /**
   * Sends a call during a storage fault as a charger does (OCPP 1.6 section 3.7.1, 2.0.1
   * E13): an InternalError CallError means "failed to process", so it is sent again. The
   * fault ends after the first refusal; returns the answer and how many times it was
   * refused. `send` gives the answer, or null for an InternalError (another error throws).
   */
  const whileFaulted = async (send: () => Promise<Record<string, unknown> | null>): Promise<{ answer: Record<string, unknown>; refused: number }> => {
    const fromMs = Date.now();
    await fault.start();
    let refused = 0;
    try {
      for (;;) {
        const answer = await send();
        if (answer !== null) return { answer, refused };
        refused++;
        if (refused === 1) {
          await fault.end();
          faultWindows.push({ fromMs, toMs: Date.now() });
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    } finally {
      if (refused === 0) {
        await fault.end();
        faultWindows.push({ fromMs, toMs: Date.now() });
      }
    }
  };
  const duringFault = (cp: RPCClient, method: string, params: unknown) =>
    whileFaulted(async () => {
      try {
        return (await cp.call(method, params)) as Record<string, unknown>;
      } catch (err) {
        if ((err as { rpcErrorCode?: string }).rpcErrorCode !== 'InternalError') throw err;
        return null;
      }
    });

  beforeAll(async () => {
    if (!runs) return;
    dir = mkdtempSync(join(tmpdir(), 'mg-ocpp-store-'));
    dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    if (tmpfs) {
      const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dataDir], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`mount failed: ${r.stderr}`);
    }
    fault = tmpfs ? diskFullFault(dataDir, async () => seriesValue(await scrape(), 'metergate_store_writable') === 1) : lockFault(databasePath(dataDir));
    // Real NL day-ahead prices (a few days of 2025, moved by whole weeks to now) and a cpo token.
    const db = openDaemonDatabase(databasePath(dataDir));
    const all = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL')).periods;
    const shiftMs = Math.ceil((Date.now() + 2 * DAY_MS - all[all.length - 1]!.startMs) / WEEK_MS) * WEEK_MS;
    const periods = all.filter((p) => p.startMs + shiftMs >= Date.now() - DAY_MS && p.startMs + shiftMs < Date.now() + 2 * DAY_MS).map((p) => ({ ...p, startMs: p.startMs + shiftMs }));
    expect(periods.length).toBeGreaterThan(250);
    storePrices(new PriceStore(db), periods, { source: 'csv:nl-2025-quarterhour-local-utc.csv (moved by whole weeks)', fetchedAtMs: Date.now() });
    token = new TokenStore(db).create({ name: 'test', type: 'cpo', nowMs: Date.now() }).token;
    db.close();

    sim = await startSim(['--tcp', '0', '--unit', '1']);
    ocppPort = await freePort();
    const httpPort = await freePort();
    base = `http://127.0.0.1:${httpPort}`;
    writeFileSync(join(dir, 'cp-key'), `${PASSWORD}\n`);
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      `organization_id: ${ORG}
data_dir: ${dataDir}
log_level: info
poll: { interval_ms: 1000, offline_after_misses: 100 }
buses: [{ name: tcp, type: tcp, host: 127.0.0.1, tcp_port: ${sim.ready.tcpPort}, timeout_ms: 1000 }]
meters: [{ resource_id: ${METER}, bus: tcp, unit_id: 1, profile: sdm630 }]
clock: { trust: system }
http: { host: 127.0.0.1, port: ${httpPort} }
prices: { regions: [NL], source: none }
forecast: { enabled: false }
ocpp: { host: 127.0.0.1, port: ${ocppPort}, storage_wait_s: 1 }
chargers:
  - id: ${CP}
    password_file: ${join(dir, 'cp-key')}
    auth: accept_all
    connectors: [{ connector_id: 1 }, { connector_id: 2 }]
  - id: ${CS}
    password_file: ${join(dir, 'cp-key')}
    ocpp_version: '2.0.1'
    auth: accept_all
    connectors: [{ connector_id: 1 }]
`,
    );
    daemon = await startDaemon(config);
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => undefined);
    for (const s of stations) await s.close();
    await fault?.close();
    await daemon?.kill9();
    await sim?.stop();
    if (tmpfs && dataDir) spawnSync('umount', [dataDir]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.runIf(runs)('Boot, Start, MeterValues and Stop: refused while the store refuses, sent again, each stored once', { timeout: 180_000 }, async () => {
    // Before the fault: booted, its rate unit read, a plan on connector 2.
    let cp = await connect();
    expect(await cp.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' })).toMatchObject({ status: 'Accepted' });
    await until(() => readDb('SELECT 1 FROM ocpp_charger_configuration WHERE charge_point_id = ?', CP).length === 4, 'what the charger supports read (four keys, the rate unit among them)', 30_000);
    const departure = new Date(Date.now() + 10 * 3_600_000).toISOString();
    expect((await api('PUT', 2, { departure_time: departure, energy_wh: 10_000 })).status).toBe(201);
    await until(() => received.some((r) => r.method === 'SetChargingProfile'), 'the plan of connector 2', 30_000);

    const boot = await duringFault(cp, 'BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single', firmwareVersion: '6.1.0' });
    expect(boot.refused).toBeGreaterThanOrEqual(1);
    expect(boot.answer).toMatchObject({ status: 'Accepted' });

    // A StatusNotification is not sent again by a charger: answered after the wait, stored once the store takes writes.
    const statusAt = new Date().toISOString();
    const status = await duringFault(cp, 'StatusNotification', { connectorId: 1, status: 'Preparing', errorCode: 'NoError', timestamp: statusAt });
    expect(status).toEqual({ answer: {}, refused: 0 });
    await until(() => readDb('SELECT 1 FROM ocpp_connector_status WHERE charge_point_id = ? AND connector_id = 1 AND status = ? AND status_at_ms = ?', CP, 'Preparing', Date.parse(statusAt)).length === 1, 'the status stored', 30_000);

    const startedAt = new Date(Date.now() - 60_000).toISOString();
    const start = await duringFault(cp, 'StartTransaction', { connectorId: 1, idTag: '04A1B2C3D4', meterStart: 100_000, timestamp: startedAt });
    expect(start.refused).toBeGreaterThanOrEqual(1);
    const transactionId = start.answer.transactionId as number;
    expect(start.answer).toMatchObject({ idTagInfo: { status: 'Accepted' } });

    const sampledAt = new Date(Date.now() - 30_000).toISOString();
    const values = await duringFault(cp, 'MeterValues', { connectorId: 1, transactionId, meterValue: [{ timestamp: sampledAt, sampledValue: [{ value: '100750', measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] }] });
    expect(values.refused).toBeGreaterThanOrEqual(1);

    const stop = await duringFault(cp, 'StopTransaction', { transactionId, meterStop: 101_500, timestamp: new Date().toISOString(), idTag: '04A1B2C3D4' });
    expect(stop.refused).toBeGreaterThanOrEqual(1);
    expect(stop.answer).toEqual({ idTagInfo: { status: 'Accepted' } });

    // Everything is in the database once, whatever was sent twice.
    expect(readDb('SELECT vendor, firmware_version FROM ocpp_charge_points WHERE charge_point_id = ?', CP)).toEqual([{ vendor: 'Alfen', firmware_version: '6.1.0' }]);
    expect(readDb('SELECT transaction_id, meter_start_wh, meter_stop_wh FROM ocpp_transactions WHERE charge_point_id = ?', CP)).toEqual([{ transaction_id: transactionId, meter_start_wh: 100_000, meter_stop_wh: 101_500 }]);
    expect(readDb('SELECT value FROM ocpp_meter_values WHERE transaction_id = ? AND sampled_at_ms = ?', transactionId, Date.parse(sampledAt))).toEqual([{ value: 100_750 }]);
    await cp.close();
    cp = undefined as unknown as RPCClient;
  });

  it.runIf(runs)('SetChargingProfile and ClearChargingProfile answers wait in memory and are stored once it takes writes', { timeout: 120_000 }, async () => {
    await until(async () => (seriesValue(await scrape(), 'metergate_ocpp_charger_connected', { charge_point_id: CP }) ?? 1) === 0, 'the charger seen gone', 30_000);
    // Away while its target on connector 2 is deleted (clears wait for it) and one is set on connector 1.
    expect((await api('DELETE', 2)).status).toBe(204);
    expect(readDb<{ status: string }>('SELECT status FROM ocpp_profile_clears WHERE charge_point_id = ? AND connector_id = 2', CP).map((c) => c.status)).toEqual(['pending', 'pending']);
    expect((await api('PUT', 1, { departure_time: new Date(Date.now() + 8 * 3_600_000).toISOString(), energy_wh: 8_000 })).status).toBe(201);

    const fromMs = Date.now();
    await fault.start();
    try {
      // It reconnects (no BootNotification): the clears go first, then connector 1's plan.
      await connect();
      await until(() => received.filter((r) => r.atMs >= fromMs && r.method === 'ClearChargingProfile').length === 2 && received.some((r) => r.atMs >= fromMs && r.method === 'SetChargingProfile'), 'two clears and a profile', 30_000);
      await until(async () => (seriesValue(await scrape(), 'metergate_ocpp_store_pending_writes') ?? 0) >= 3, 'their answers waiting for the store', 30_000);
      expect(readDb<{ status: string }>('SELECT status FROM ocpp_profile_clears WHERE charge_point_id = ? AND connector_id = 2', CP).map((c) => c.status)).toEqual(['pending', 'pending']);
    } finally {
      await fault.end();
      faultWindows.push({ fromMs, toMs: Date.now() });
    }
    await until(() => readDb('SELECT 1 FROM ocpp_profile_clears WHERE charge_point_id = ? AND connector_id = 2 AND status = ? AND sent_at_ms >= ?', CP, 'Accepted', fromMs).length === 2, 'the clears stored', 30_000);
    await until(() => readDb('SELECT 1 FROM ocpp_charging_profiles WHERE charge_point_id = ? AND connector_id = 1 AND status = ? AND sent_at_ms >= ?', CP, 'Accepted', fromMs).length === 1, 'the profile answer stored', 30_000);
    expect(seriesValue(await scrape(), 'metergate_ocpp_store_pending_writes')).toBe(0);
  });

  it.runIf(runs)('2.0.1: a station\'s calls sent while the store refuses: TransactionEvents InternalError and sent again (or given up: kept all the same), StatusNotification and Heartbeat answered; the transaction stored once and whole', { timeout: 120_000 }, async () => {
    const station = await connectOcttCharger({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity: CS, password: PASSWORD, version: '2.0.1', answers: {} });
    stations.push(station);
    /**
     * One fault for a run of the station's calls, one after the other as OCPP-J has it: each
     * answered, or refused with InternalError. The fault ends after the run; then each refused
     * one is sent again (E13, TC_E_51_CS's side of it) until answered, unless the station gave
     * up on it (`giveUp`: its MessageAttemptsTransactionEvent spent). Answers and refusals in order.
     */
    const oneFault = async (calls: ReadonlyArray<readonly [string, Record<string, unknown>, { giveUp: true }?]>) => {
      const fromMs = Date.now();
      await fault.start();
      const first: Array<{ result: unknown } | { error: string }> = [];
      try {
        for (const [action, params] of calls) first.push(await station.unchecked(action, params));
      } finally {
        await fault.end();
        faultWindows.push({ fromMs, toMs: Date.now() });
      }
      const out: Array<{ answer: unknown; refused: number }> = [];
      for (const [i, [action, params, opts]] of calls.entries()) {
        let r = first[i]!;
        let refused = 0;
        if (opts?.giveUp && 'error' in r) {
          out.push({ answer: r, refused: 1 });
          continue;
        }
        while ('error' in r) {
          expect(r.error, `${action} while the store refuses`).toBe('InternalError');
          refused++;
          // The station's MessageAttemptIntervalTransactionEvent (the refused unit is retried within a second).
          await new Promise((done) => setTimeout(done, 500));
          r = await station.unchecked(action, params);
        }
        out.push({ answer: r.result, refused });
      }
      return out;
    };
    // (A boot the store cannot take is answered Pending: TC_B_02_CSMS in ocpp201-octt.test.ts.)
    expect(await station.call('BootNotification', { reason: 'PowerUp', chargingStation: { vendorName: 'OCTT', model: 'ocpp-ws-io', firmwareVersion: '2.0.1-store' } })).toMatchObject({ status: 'Accepted' });

    const txId = 'store-fault-201-0000-4000-8000-00001';
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    const register = (s: number, wh: number, context: string) => [{ timestamp: at(s), sampledValue: [{ value: wh, context, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' } }] }];
    const statusAt = new Date().toISOString();
    const [status, heartbeat, started] = await oneFault([
      ['StatusNotification', { timestamp: statusAt, connectorStatus: 'Occupied', evseId: 1, connectorId: 1 }],
      ['Heartbeat', {}],
      ['TransactionEvent', { eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: txId, chargingState: 'Charging' }, idToken: { idToken: '04A1B2C3D4', type: 'ISO14443' }, evse: { id: 1, connectorId: 1 }, meterValue: register(0, 200_000, 'Transaction.Begin') }],
    ]);
    // Not sent again by a station: answered after the wait, stored once the store takes writes.
    expect(status).toEqual({ answer: {}, refused: 0 });
    expect(heartbeat!.refused).toBe(0);
    expect(Math.abs(Date.parse((heartbeat!.answer as { currentTime: string }).currentTime) - Date.now())).toBeLessThan(60_000);
    expect(started!.refused).toBeGreaterThanOrEqual(1);
    expect(started!.answer).toEqual({ idTokenInfo: { status: 'Accepted' } });
    await until(() => readDb('SELECT 1 FROM ocpp_connector_status WHERE charge_point_id = ? AND connector_id = 1 AND status = ? AND status_at_ms = ?', CS, 'Occupied', Date.parse(statusAt)).length === 1, 'the 2.0.1 status stored', 30_000);

    // The rest of the transaction in one fault: the Updated refused and given up by the station
    // (its attempts spent, E13.FR.04: it goes on with the next), the Ended refused and sent again.
    // The gateway kept the Updated's unit: its value is stored all the same.
    const [updated, ended] = await oneFault([
      ['TransactionEvent', { eventType: 'Updated', timestamp: at(20), triggerReason: 'MeterValuePeriodic', seqNo: 1, transactionInfo: { transactionId: txId }, meterValue: register(20, 200_400, 'Sample.Periodic') }, { giveUp: true }],
      ['TransactionEvent', { eventType: 'Ended', timestamp: at(40), triggerReason: 'EVDeparted', seqNo: 2, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected' }, meterValue: register(40, 201_000, 'Transaction.End') }],
    ]);
    expect(updated).toEqual({ answer: { error: 'InternalError' }, refused: 1 });
    expect(ended!.answer).toEqual({});
    expect(ended!.refused).toBeGreaterThanOrEqual(1);

    // Once each, whatever was sent twice or given up: one transaction, its start, every value, its stop.
    const rows = readDb<{ transaction_id: number; last_seq_no: number }>('SELECT transaction_id, last_seq_no FROM ocpp201_transactions WHERE charge_point_id = ? AND charger_transaction_id = ?', CS, txId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.last_seq_no).toBe(2);
    expect(readDb('SELECT connector_id, id_tag, meter_start_wh, meter_stop_wh, started_at_ms, stopped_at_ms, stop_inferred FROM ocpp_transactions WHERE charge_point_id = ?', CS)).toEqual([
      { connector_id: 1, id_tag: '04A1B2C3D4', meter_start_wh: 200_000, meter_stop_wh: 201_000, started_at_ms: Date.parse(at(0)), stopped_at_ms: Date.parse(at(40)), stop_inferred: null },
    ]);
    expect(readDb<{ value: number }>("SELECT value FROM ocpp_meter_values WHERE transaction_id = ? AND measurand = 'Energy.Active.Import.Register' ORDER BY sampled_at_ms", rows[0]!.transaction_id).map((r) => r.value)).toEqual([200_000, 200_400, 201_000]);
    expect(readDb('SELECT vendor, firmware_version FROM ocpp_charge_points WHERE charge_point_id = ?', CS)).toEqual([{ vendor: 'OCTT', firmware_version: '2.0.1-store' }]);
    expect(station.violations).toEqual([]);
  });

  it.runIf(runs)('afterwards: the process is up and every meter reading taken meanwhile was stored', { timeout: 60_000 }, async () => {
    expect(faultWindows.length).toBeGreaterThanOrEqual(8);
    expect(daemon.process.exitCode).toBeNull();
    const health = (await (await fetch(`${base}/healthz`)).json()) as { components: Record<string, { status: string }> };
    expect(health.components.chargers?.status).toBe('ok');
    // The store refused the charger's writes for real (counted by SQLite code).
    const metrics = await scrape();
    expect(seriesValue(metrics, 'metergate_store_write_failures_total', { code: tmpfs ? 'SQLITE_FULL' : 'SQLITE_BUSY' }) ?? 0).toBeGreaterThan(0);
    await until(async () => (await (await fetch(`${base}/healthz`)).json() as { components: { store: { status: string } } }).components.store.status === 'ok', 'the recorder writing again', 30_000);
    // The meter goes silent, so what was taken is final; then count.
    await sim.kill();
    await until(async () => (seriesValue(await scrape(), 'metergate_meter_poll_failures_total') ?? 0) >= 2, 'polls failing after the meter died', 30_000);
    // The last readings taken may still wait in the write queue: counted as stored once committed.
    await until(async () => seriesValue(await scrape(), 'metergate_store_pending_writes') === 0, 'the write queue empty', 30_000);
    const m = await scrape();
    // Every reading taken was stored: none dropped, none lost (both counted when a poll ends).
    const taken = (seriesValue(m, 'metergate_meter_poll_duration_seconds_count') ?? 0) - (seriesValue(m, 'metergate_meter_poll_failures_total') ?? 0);
    expect(seriesValue(m, 'metergate_store_pending_dropped_total', { kind: 'reading' }) ?? 0).toBe(0);
    expect(seriesValue(m, 'metergate_meter_samples_dropped_total') ?? 0).toBe(0);
    expect(seriesValue(m, 'metergate_readings_stored_total')).toBe(taken);
    // And the meter was read while the faults lasted (those readings were stored after them).
    const readings = readDb<{ sampled_at_ms: number }>('SELECT sampled_at_ms FROM readings WHERE resource_id = ?', METER).map((r) => r.sampled_at_ms);
    expect(readings.filter((t) => faultWindows.some((w) => t >= w.fromMs && t <= w.toMs)).length).toBeGreaterThan(0);
    expect(await daemon.stop()).toBe(0);
    expect(daemon.output()).not.toContain('"level":60');
  });
});
