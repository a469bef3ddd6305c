// A mixed fleet of chargers on one gateway (issue 33): N chargers speaking OCPP 1.6 (strict
// ocpp-rpc clients, the library the gateway runs on) and N stations speaking OCPP 2.0.1
// (ocpp-ws-io, an independent OCPP-J implementation, every frame the gateway sends checked
// against the official 2.0.1 schemas: octt-charger.ts), all at once on the same port. Each
// boots, reports its status, then charges `transactions` sessions of `meterValues` register
// readings each, with a Heartbeat after every message, so heartbeats and transaction
// messages are answered under the same load in the same run. Every answer's latency is kept
// by version and kind; the latency of the transaction messages against the heartbeats'
// (a ratio, same run) is the figure, never an absolute time.
//
// Charger i of each version sends the same session as the other's charger i: the same
// register readings stamped at the same instants (paced by the wall clock, never ahead of
// it, so no clock is judged wrong), so their cdrs must be priced identically. Used by
// scripts/bench/ocpp-mixed-fleet.ts (the figures) and test/integration/ocpp-mixed-fleet.test.ts
// (the behaviour: every session stored and priced, no error).
import Database from 'better-sqlite3';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { RPCClient } from 'ocpp-rpc';
import { storePrices } from '../../src/prices/price-merge.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { TokenStore } from '../../src/store/tokens.js';
import { centralSystemConfigHead } from './central-system-config.js';
import { connectOcttCharger, type OcttCharger } from './octt-charger.js';
import { sharedData } from './shared-data.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
export type FleetVersion = '1.6' | '2.0.1';
/** What a message is, for the latencies: transaction messages (start, meter values, stop) against the rest. */
export type FleetKind = 'boot' | 'status' | 'heartbeat' | 'start' | 'meter' | 'stop';
export const TRANSACTION_KINDS: readonly FleetKind[] = ['start', 'meter', 'stop'];

const PASSWORD = 'mixed-fleet-key-0123456789';
const ID_TAG = 'FLEET-TAG';
const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;

export interface FleetGateway {
  readonly configPath: string;
  readonly dataDir: string;
  readonly ocppPort: number;
  readonly httpPort: number;
  readonly cdrsToken: string;
  readonly ids: Record<FleetVersion, string[]>;
}

/**
 * A gateway's data directory and config for the fleet: `perVersion` chargers of each
 * version (1.6 ones pinned '1.6', 2.0.1 ones pinned '2.0.1'), real NL day-ahead prices of
 * 2025 moved by whole weeks to cover now (so today's sessions are priced), a cdrs token.
 * The caller starts the gateway on `configPath` (`metergate run`, from src/ or dist/).
 */
export function prepareFleetGateway(dir: string, o: { perVersion: number; ocppPort: number; httpPort: number; logLevel?: string }): FleetGateway {
  const dataDir = join(dir, 'data');
  const db = openDaemonDatabase(databasePath(dataDir));
  const nowMs = Date.now();
  const all = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL')).periods;
  // The quarter-hour half of the file (from 2025-10-01), moved by whole weeks to cover now.
  const quarterHours = all.filter((p) => p.durationS === 900);
  const shiftMs = Math.ceil((nowMs + DAY_MS - quarterHours[quarterHours.length - 1]!.startMs) / WEEK_MS) * WEEK_MS;
  const periods = quarterHours.filter((p) => p.startMs + shiftMs >= nowMs - DAY_MS && p.startMs + shiftMs < nowMs + DAY_MS).map((p) => ({ ...p, startMs: p.startMs + shiftMs }));
  storePrices(new PriceStore(db), periods, { source: 'csv:nl-2025-quarterhour-local-utc.csv (moved by whole weeks)', fetchedAtMs: nowMs });
  const cdrsToken = new TokenStore(db).create({ name: 'fleet-cdrs', type: 'cdrs', nowMs }).token;
  db.close();
  const ids: Record<FleetVersion, string[]> = {
    '1.6': Array.from({ length: o.perVersion }, (_, i) => `CP16-${String(i + 1).padStart(3, '0')}`),
    '2.0.1': Array.from({ length: o.perVersion }, (_, i) => `CS201-${String(i + 1).padStart(3, '0')}`),
  };
  writeFileSync(join(dir, 'cp-key'), `${PASSWORD}\n`);
  const configPath = join(dir, 'metergate.yaml');
  const charger = (id: string, version: FleetVersion) => `  - { id: ${id}, password_file: ${join(dir, 'cp-key')}, ocpp_version: '${version}', auth: accept_all, connectors: [{ connector_id: 1 }] }`;
  writeFileSync(
    configPath,
    [
      ...centralSystemConfigHead({ dataDir, httpPort: o.httpPort, ocppPort: o.ocppPort, ocppSettings: 'heartbeat_interval_s: 300' }),
      'chargers:',
      ...ids['1.6'].map((id) => charger(id, '1.6')),
      ...ids['2.0.1'].map((id) => charger(id, '2.0.1')),
      '',
    ]
      .join('\n')
      .replace('log_level: info', `log_level: ${o.logLevel ?? 'info'}`),
  );
  return { configPath, dataDir, ocppPort: o.ocppPort, httpPort: o.httpPort, cdrsToken, ids };
}

export interface FleetOptions {
  readonly transactions: number;
  readonly meterValues: number;
  /** Between one message of a charger's session and its next (its Heartbeat goes in between). */
  readonly stepMs: number;
}

/** A session as sent: who, the gateway's transaction id (1.6: from its answer; 2.0.1: looked up after), the readings. */
export interface FleetSession {
  readonly version: FleetVersion;
  readonly chargePointId: string;
  readonly pair: number;
  readonly index: number;
  readonly stationTransactionId: string | null;
  transactionId: number | null;
  readonly readings: Array<readonly [number, number]>;
}

export interface FleetResult {
  readonly latencyMs: Record<FleetVersion, Record<FleetKind, number[]>>;
  readonly errors: string[];
  readonly sessions: FleetSession[];
  /** Frames from the gateway to the 2.0.1 stations that failed the official schemas. */
  readonly violations: string[];
  readonly wallMs: number;
}

/** Connects the fleet, runs every charger's script at once, closes; what it saw. */
export async function runFleet(gw: FleetGateway, o: FleetOptions): Promise<FleetResult> {
  const endpoint = `ws://127.0.0.1:${gw.ocppPort}`;
  const latencyMs = { '1.6': emptyKinds(), '2.0.1': emptyKinds() };
  const errors: string[] = [];
  const sessions: FleetSession[] = [];
  const clients16: RPCClient[] = [];
  const stations: OcttCharger[] = [];
  try {
    for (const id of gw.ids['1.6']) {
      const c = new RPCClient({ endpoint, identity: id, password: PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false, callTimeoutMs: 60_000 } as ClientOptions);
      await c.connect();
      clients16.push(c);
    }
    for (const id of gw.ids['2.0.1']) stations.push(await connectOcttCharger({ endpoint, identity: id, password: PASSWORD, version: '2.0.1', answers: {} }));

    const t0 = performance.now();
    // One schedule for both versions: session k's reading j of pair i is stamped at the same instant for both.
    const startMs = Date.now() + 1_000;
    const stampMs = (pair: number, step: number) => startMs + Math.round((pair / gw.ids['1.6'].length) * o.stepMs) + step * o.stepMs;
    const timed = async <T>(version: FleetVersion, kind: FleetKind, who: string, call: () => Promise<T>): Promise<T | null> => {
      const s = performance.now();
      try {
        const answer = await call();
        latencyMs[version][kind].push(performance.now() - s);
        return answer;
      } catch (err) {
        errors.push(`${who} ${kind}: ${(err as Error).message}`);
        return null;
      }
    };
    const untilStamp = async (ms: number) => {
      const wait = ms - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    };
    // A pair's register and schedule, the same for both versions (their twins priced alike): each
    // reading waits for its instant, adds its energy and is kept on the session; its instant returned.
    const meterOf = (pair: number) => {
      let wh = 1_000_000 + pair * 10_000;
      let step = 0;
      const reading = async (session: FleetSession, addWh: number) => {
        const at = stampMs(pair, step++);
        wh += addWh;
        await untilStamp(at);
        session.readings.push([at, wh]);
        return { at, wh };
      };
      return { start: (s: FleetSession) => reading(s, 0), meter: (s: FleetSession) => reading(s, 250 + pair), stop: (s: FleetSession) => reading(s, 100) };
    };

    const run16 = async (pair: number) => {
      const c = clients16[pair]!;
      const who = gw.ids['1.6'][pair]!;
      const call = (kind: FleetKind, method: string, params: Record<string, unknown>) => timed('1.6', kind, who, () => c.call(method, params) as Promise<Record<string, unknown>>);
      const beat = () => call('heartbeat', 'Heartbeat', {});
      await call('boot', 'BootNotification', { chargePointVendor: 'Fleet', chargePointModel: 'ocpp-rpc' });
      await call('status', 'StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Available', timestamp: new Date().toISOString() });
      await beat();
      const m = meterOf(pair);
      for (let k = 0; k < o.transactions; k++) {
        const session: FleetSession = { version: '1.6', chargePointId: who, pair, index: k, stationTransactionId: null, transactionId: null, readings: [] };
        sessions.push(session);
        let { at, wh } = await m.start(session);
        const started = await call('start', 'StartTransaction', { connectorId: 1, idTag: ID_TAG, meterStart: wh, timestamp: new Date(at).toISOString() });
        session.transactionId = (started?.transactionId as number | undefined) ?? null;
        await beat();
        for (let j = 0; j < o.meterValues; j++) {
          ({ at, wh } = await m.meter(session));
          await call('meter', 'MeterValues', { connectorId: 1, transactionId: session.transactionId ?? 0, meterValue: [meterValue16(at, wh)] });
          await beat();
        }
        ({ at, wh } = await m.stop(session));
        await call('stop', 'StopTransaction', { transactionId: session.transactionId ?? 0, meterStop: wh, timestamp: new Date(at).toISOString(), idTag: ID_TAG, reason: 'EVDisconnected' });
        await beat();
      }
    };

    const run201 = async (pair: number) => {
      const s = stations[pair]!;
      const who = gw.ids['2.0.1'][pair]!;
      const call = (kind: FleetKind, action: string, params: Record<string, unknown>) => timed('2.0.1', kind, who, () => s.call(action, params));
      const beat = () => call('heartbeat', 'Heartbeat', {});
      await call('boot', 'BootNotification', { reason: 'PowerUp', chargingStation: { vendorName: 'Fleet', model: 'ocpp-ws-io' } });
      await call('status', 'StatusNotification', { timestamp: new Date().toISOString(), connectorStatus: 'Available', evseId: 1, connectorId: 1 });
      await beat();
      const m = meterOf(pair);
      for (let k = 0; k < o.transactions; k++) {
        const txId = `fleet-${pair}-${k}-0000-4000-8000-000000000000`.slice(0, 36);
        const session: FleetSession = { version: '2.0.1', chargePointId: who, pair, index: k, stationTransactionId: txId, transactionId: null, readings: [] };
        sessions.push(session);
        let seqNo = 0;
        let { at, wh } = await m.start(session);
        await call('start', 'TransactionEvent', { eventType: 'Started', timestamp: new Date(at).toISOString(), triggerReason: 'Authorized', seqNo: seqNo++, transactionInfo: { transactionId: txId, chargingState: 'Charging' }, idToken: { idToken: ID_TAG, type: 'ISO14443' }, evse: { id: 1, connectorId: 1 }, meterValue: [meterValue201(at, wh, 'Transaction.Begin')] });
        await beat();
        for (let j = 0; j < o.meterValues; j++) {
          ({ at, wh } = await m.meter(session));
          await call('meter', 'TransactionEvent', { eventType: 'Updated', timestamp: new Date(at).toISOString(), triggerReason: 'MeterValuePeriodic', seqNo: seqNo++, transactionInfo: { transactionId: txId }, meterValue: [meterValue201(at, wh, 'Sample.Periodic')] });
          await beat();
        }
        ({ at, wh } = await m.stop(session));
        await call('stop', 'TransactionEvent', { eventType: 'Ended', timestamp: new Date(at).toISOString(), triggerReason: 'EVDeparted', seqNo: seqNo++, transactionInfo: { transactionId: txId, stoppedReason: 'EVDisconnected' }, meterValue: [meterValue201(at, wh, 'Transaction.End')] });
        await beat();
      }
    };

    await Promise.all([...gw.ids['1.6'].map((_, i) => run16(i)), ...gw.ids['2.0.1'].map((_, i) => run201(i))]);
    const wallMs = performance.now() - t0;

    // The gateway's id of each 2.0.1 transaction (its integer, for the cdr's id).
    const db = new Database(databasePath(gw.dataDir), { readonly: true, timeout: 5_000 });
    try {
      const byStationId = db.prepare<[string, string], { transaction_id: number }>('SELECT transaction_id FROM ocpp201_transactions WHERE charge_point_id = ? AND charger_transaction_id = ?');
      for (const s of sessions) if (s.stationTransactionId !== null) s.transactionId = byStationId.get(s.chargePointId, s.stationTransactionId)?.transaction_id ?? null;
    } finally {
      db.close();
    }
    return { latencyMs, errors, sessions, violations: stations.flatMap((s) => s.violations), wallMs };
  } finally {
    for (const c of clients16) await c.close({ force: true }).catch(() => undefined);
    for (const s of stations) await s.close();
  }
}

/** The cdr of a session (GET /api/v1/cdrs/ocpp:<cp>:<id>): its status and body. */
export async function fleetCdr(gw: FleetGateway, s: FleetSession): Promise<{ status: number; body: { total_energy?: number; total_cost?: { excl_vat: number; incl_vat?: number }; start_date_time?: string; end_date_time?: string } }> {
  const res = await fetch(`http://127.0.0.1:${gw.httpPort}/api/v1/cdrs/ocpp:${s.chargePointId}:${s.transactionId}?include=cost_components`, { headers: { authorization: `Token ${gw.cdrsToken}` } });
  return { status: res.status, body: (await res.json()) as never };
}

export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

function emptyKinds(): Record<FleetKind, number[]> {
  return { boot: [], status: [], heartbeat: [], start: [], meter: [], stop: [] };
}

/** The register and power per phase, as a 1.6 charger samples them. */
function meterValue16(atMs: number, wh: number) {
  return {
    timestamp: new Date(atMs).toISOString(),
    sampledValue: [
      { value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh', context: 'Sample.Periodic' },
      ...['L1', 'L2', 'L3'].map((phase) => ({ value: '3680', measurand: 'Power.Active.Import', unit: 'W', phase, context: 'Sample.Periodic' })),
    ],
  };
}

/** The same in 2.0.1's shape (numbers, unitOfMeasure). */
function meterValue201(atMs: number, wh: number, context: string) {
  return {
    timestamp: new Date(atMs).toISOString(),
    sampledValue: [
      { value: wh, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' }, context },
      ...['L1', 'L2', 'L3'].map((phase) => ({ value: 3680, measurand: 'Power.Active.Import', unitOfMeasure: { unit: 'W' }, phase, context })),
    ],
  };
}
