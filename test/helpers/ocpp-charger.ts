// A running gateway with chargers configured, on REAL NL day-ahead prices, and a charger
// simulated by ocpp-rpc's RPCClient in strict mode (it validates every call the gateway
// sends against the official OCPP 1.6 schema and answers a CallError to one that fails).
// The gateway's clock is the test's (`gw.nowMs`); the charger records every
// SetChargingProfile, ClearChargingProfile and GetConfiguration it receives.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import { expect } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createContext, Daemon } from '../../src/daemon.js';
import type { PricePeriod } from '../../src/domain.js';
import { freePort } from '../../src/free-port.js';
import { createLogger } from '../../src/log.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { TokenStore } from '../../src/store/tokens.js';
import { expectDocumented } from './openapi.js';
import { sharedData } from './shared-data.js';
import { until } from './wait.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
export const CHARGER_PASSWORD = 'charger-secret-0123456789';

export interface SentProfile {
  connectorId: number;
  csChargingProfiles: {
    chargingProfileId: number;
    transactionId?: number;
    stackLevel: number;
    chargingProfilePurpose: string;
    chargingProfileKind: string;
    validTo?: string;
    chargingSchedule: { duration: number; startSchedule: string; chargingRateUnit: 'A' | 'W'; chargingSchedulePeriod: Array<{ startPeriod: number; limit: number }> };
  };
}

/** The limit the profile sets at a second from its schedule start. */
export function limitAt(profile: SentProfile, secondFromStart: number): number {
  let limit = NaN;
  for (const p of profile.csChargingProfiles.chargingSchedule.chargingSchedulePeriod) if (p.startPeriod <= secondFromStart) limit = p.limit;
  return limit;
}

/** Energy (Wh) the profile lets a charger take between two instants (default: all of it); A is per phase at 230 V × phases. */
export function profileEnergyWh(profile: SentProfile, opts: { fromMs?: number; toMs?: number; phases?: number; voltageV?: number } = {}): number {
  const { chargingSchedulePeriod: periods, duration, startSchedule, chargingRateUnit } = profile.csChargingProfiles.chargingSchedule;
  const startMs = Date.parse(startSchedule);
  const perLimit = chargingRateUnit === 'W' ? 1 : (opts.phases ?? 3) * (opts.voltageV ?? 230);
  let wh = 0;
  periods.forEach((p, i) => {
    const fromMs = Math.max(startMs + p.startPeriod * 1000, opts.fromMs ?? -Infinity);
    const toMs = Math.min(startMs + (periods[i + 1]?.startPeriod ?? duration) * 1000, opts.toMs ?? Infinity);
    if (toMs > fromMs) wh += (p.limit * perLimit * (toMs - fromMs)) / 3_600_000;
  });
  return wh;
}

export interface SimulatedCharger {
  client: RPCClient;
  /** Every SetChargingProfile received, taken or refused. */
  profiles: SentProfile[];
  clears: Array<Record<string, unknown>>;
  configurationRequests: Array<Record<string, unknown>>;
  /** RemoteStartTransaction / RemoteStopTransaction calls received, in order. */
  remote: Array<{ method: 'RemoteStartTransaction' | 'RemoteStopTransaction'; params: Record<string, unknown> }>;
}

/**
 * How a charger says no (docs/chargers.md "Chargers that say no"), as chargers in the field
 * do (evcc issues 15581, 17836, 16768, 15474, 15493):
 *   rejects-tx-profile   answers Rejected to every TxProfile, takes the rest
 *   only-tx-default      takes only TxDefaultProfile (Rejected otherwise)
 *   max-one-period       declares ChargingScheduleMaxPeriods 1, rejects a schedule of more
 *   only-w               declares ChargingScheduleAllowedChargingRateUnit Power, rejects a schedule in A
 *   no-smart-charging    declares SupportedFeatureProfiles without SmartCharging, answers NotSupported to SetChargingProfile
 *   not-implemented      declares nothing, has no SetChargingProfile at all (ocpp-rpc answers the NotImplemented CallError)
 *   only-charge-point-max  takes only a ChargePointMaxProfile (Rejected otherwise)
 * Every one takes RemoteStart/StopTransaction (Accepted) and records them.
 */
export type ChargerRefusal = 'rejects-tx-profile' | 'only-tx-default' | 'max-one-period' | 'only-w' | 'no-smart-charging' | 'not-implemented' | 'only-charge-point-max';

const REFUSAL_CONFIGURATION: Record<ChargerRefusal, Record<string, string>> = {
  'rejects-tx-profile': { SupportedFeatureProfiles: 'Core,SmartCharging', ChargeProfileMaxStackLevel: '3', ChargingScheduleAllowedChargingRateUnit: 'Current', ChargingScheduleMaxPeriods: '96' },
  'only-tx-default': { SupportedFeatureProfiles: 'Core,SmartCharging', ChargeProfileMaxStackLevel: '3', ChargingScheduleAllowedChargingRateUnit: 'Current,Power', ChargingScheduleMaxPeriods: '96' },
  'max-one-period': { SupportedFeatureProfiles: 'Core,SmartCharging', ChargeProfileMaxStackLevel: '1', ChargingScheduleAllowedChargingRateUnit: 'Current', ChargingScheduleMaxPeriods: '1' },
  'only-w': { SupportedFeatureProfiles: 'Core,SmartCharging', ChargeProfileMaxStackLevel: '3', ChargingScheduleAllowedChargingRateUnit: 'Power', ChargingScheduleMaxPeriods: '96' },
  'no-smart-charging': { SupportedFeatureProfiles: 'Core,FirmwareManagement,RemoteTrigger' },
  'not-implemented': {},
  'only-charge-point-max': { SupportedFeatureProfiles: 'Core,SmartCharging', ChargeProfileMaxStackLevel: '3', ChargingScheduleAllowedChargingRateUnit: 'Current', ChargingScheduleMaxPeriods: '96' },
};

/** The refusing charger's answer to a SetChargingProfile. */
function refusalAnswer(refusal: ChargerRefusal, p: SentProfile): 'Accepted' | 'Rejected' | 'NotSupported' {
  const { chargingProfilePurpose: purpose, chargingSchedule } = p.csChargingProfiles;
  switch (refusal) {
    case 'rejects-tx-profile':
      return purpose === 'TxProfile' ? 'Rejected' : 'Accepted';
    case 'only-tx-default':
      return purpose === 'TxDefaultProfile' ? 'Accepted' : 'Rejected';
    case 'max-one-period':
      return chargingSchedule.chargingSchedulePeriod.length > 1 ? 'Rejected' : 'Accepted';
    case 'only-w':
      return chargingSchedule.chargingRateUnit === 'W' ? 'Accepted' : 'Rejected';
    case 'only-charge-point-max':
      return purpose === 'ChargePointMaxProfile' ? 'Accepted' : 'Rejected';
    case 'no-smart-charging':
    case 'not-implemented':
      return 'NotSupported';
  }
}

export interface PlanGateway {
  daemon: Daemon;
  /** The gateway's clock; set it to move time. */
  nowMs: number;
  ocppPort: number;
  httpPort: number;
  /** Every real NL price period of 2025 (quarter-hours from 2025-10-01). */
  prices: PricePeriod[];
  /** A request with the cpo token, its answer checked against openapi.json under `pathTemplate` (default: the plan's path). */
  api(method: string, path: string, body?: unknown, pathTemplate?: string): Promise<{ status: number; body: any }>;
  /**
   * A strict charger connected as `identity`, answering SetChargingProfile with `answer()`,
   * ClearChargingProfile Accepted and GetConfiguration with `rateUnits` (the value of
   * ChargingScheduleAllowedChargingRateUnit; undefined: the key is unknown to it). The
   * profiles it receives go to `profiles` when given (to count over reconnects).
   */
  connect(identity: string, opts?: ChargerOptions): Promise<SimulatedCharger>;
  /**
   * Stops the gateway and starts a new one on the same data directory and config, as a
   * restart does: nothing is kept but what is stored. Chargers must connect again; listeners
   * on the old `daemon.ctx.events` hear nothing more.
   */
  restart(): Promise<void>;
  /** Whether the gateway sees the charger connected now (its /metrics gauge). */
  connected(identity: string): Promise<boolean>;
  close(): Promise<void>;
}

/** What a simulated charger answers (PlanGateway.connect). */
export interface ChargerOptions {
  readonly answer?: (profile: SentProfile) => 'Accepted' | 'Rejected' | 'NotSupported';
  readonly rateUnits?: string;
  readonly profiles?: SentProfile[];
  readonly refusal?: ChargerRefusal;
  /** Its answer to RemoteStart/StopTransaction (default Accepted). */
  readonly remoteAnswer?: (method: 'RemoteStartTransaction' | 'RemoteStopTransaction') => 'Accepted' | 'Rejected';
}

/**
 * A strict ocpp-rpc charger connected to a gateway's OCPP port (a PlanGateway's or a
 * `metergate run`'s), answering as `o` says and recording what it receives.
 */
export async function connectSimulatedCharger(ocppPort: number, identity: string, password: string, o: ChargerOptions = {}): Promise<SimulatedCharger> {
  const client = new RPCClient({ endpoint: `ws://127.0.0.1:${ocppPort}`, identity, password, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
  const charger: SimulatedCharger = { client, profiles: o.profiles ?? [], clears: [], configurationRequests: [], remote: [] };
  const refusal = o.refusal;
  // A charger that does not implement SetChargingProfile has no handler: ocpp-rpc answers the NotImplemented CallError.
  if (refusal !== 'not-implemented') {
    client.handle('SetChargingProfile', async ({ params }: { params?: unknown }) => {
      charger.profiles.push(params as SentProfile);
      return { status: refusal ? refusalAnswer(refusal, params as SentProfile) : (o.answer?.(params as SentProfile) ?? 'Accepted') };
    });
  }
  for (const method of ['RemoteStartTransaction', 'RemoteStopTransaction'] as const) {
    client.handle(method, async ({ params }: { params?: unknown }) => {
      charger.remote.push({ method, params: params as Record<string, unknown> });
      return { status: o.remoteAnswer?.(method) ?? 'Accepted' };
    });
  }
  client.handle('ClearChargingProfile', async ({ params }: { params?: unknown }) => {
    charger.clears.push(params as Record<string, unknown>);
    return { status: 'Accepted' };
  });
  client.handle('GetConfiguration', async ({ params }: { params?: unknown }) => {
    charger.configurationRequests.push(params as Record<string, unknown>);
    const known: Record<string, string> = refusal ? REFUSAL_CONFIGURATION[refusal] : o.rateUnits === undefined ? {} : { ChargingScheduleAllowedChargingRateUnit: o.rateUnits };
    const keys = ((params as { key?: string[] }).key ?? Object.keys(known));
    const configurationKey = keys.filter((k) => k in known).map((key) => ({ key, readonly: true, value: known[key]! }));
    const unknownKey = keys.filter((k) => !(k in known));
    return { ...(configurationKey.length > 0 ? { configurationKey } : {}), ...(unknownKey.length > 0 ? { unknownKey } : {}) };
  });
  await client.connect();
  return charger;
}

/** Starts a gateway (Daemon with its real modules) with the chargers given and the NL prices of [pricesFromMs, pricesToMs) stored. */
export async function startPlanGateway(opts: {
  startMs: number;
  pricesFromMs: number;
  pricesToMs: number;
  chargers: Array<Record<string, unknown>>;
  ocpp?: Record<string, unknown>;
  /** The config's site section (e.g. limit_a). */
  site?: Record<string, unknown>;
}): Promise<PlanGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-plan-gw-'));
  const ocppPort = await freePort();
  const httpPort = await freePort();
  const config = validateConfig(
    {
      organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      data_dir: join(dir, 'data'),
      log_level: 'fatal',
      http: { host: '127.0.0.1', port: httpPort },
      prices: { regions: ['NL'], source: 'none' },
      forecast: { enabled: false },
      ocpp: { host: '127.0.0.1', port: ocppPort, ...opts.ocpp },
      ...(opts.site ? { site: opts.site } : {}),
      // Connectors 1 and 2 configured at the schema's defaults (16 A, 6 A minimum, 3 phases, 230 V) unless a test lists its own: only configured connectors are planned.
      chargers: opts.chargers.map((c) => ({ password: CHARGER_PASSWORD, auth: 'accept_all', connectors: [{ connector_id: 1 }, { connector_id: 2 }], ...c })),
    },
    'test',
    {},
  );
  const prices = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL')).periods;
  const clients: RPCClient[] = [];
  const gw: PlanGateway = {
    daemon: undefined as unknown as Daemon,
    nowMs: opts.startMs,
    ocppPort,
    httpPort,
    prices,
    async api(method, path, body, pathTemplate = '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan') {
      const res = await fetch(`http://127.0.0.1:${httpPort}${path}`, {
        method,
        headers: { authorization: `Token ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      const json = text === '' ? null : JSON.parse(text);
      expectDocumented(method, pathTemplate, res, json);
      return { status: res.status, body: json };
    },
    async connect(identity, o = {}) {
      const charger = await connectSimulatedCharger(ocppPort, identity, CHARGER_PASSWORD, o);
      clients.push(charger.client);
      return charger;
    },
    async connected(identity) {
      const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
      return new RegExp(`metergate_ocpp_charger_connected\\{charge_point_id="${identity}"\\} 1`).test(text);
    },
    async restart() {
      await gw.daemon.stop();
      gw.daemon = new Daemon(createContext(config, { logger: createLogger('fatal'), clock: { now: () => gw.nowMs } }));
      await gw.daemon.start();
    },
    async close() {
      for (const c of clients) await c.close({ force: true }).catch(() => undefined);
      await gw.daemon?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const ctx = createContext(config, { logger: createLogger('fatal'), clock: { now: () => gw.nowMs } });
  storePrices(new PriceStore(ctx.db), 
    prices.filter((p) => p.startMs >= opts.pricesFromMs && p.startMs < opts.pricesToMs),
    { source: 'csv:nl-2025-quarterhour-local-utc.csv', fetchedAtMs: 0 },
  );
  const token = new TokenStore(ctx.db).create({ name: 'test-cpo', type: 'cpo', nowMs: opts.startMs }).token;
  gw.daemon = new Daemon(ctx);
  await gw.daemon.start();
  return gw;
}

/** A MeterValues call with the energy register (Wh) at a time. */
export function energyMeterValues(connectorId: number, transactionId: number, atMs: number, registerWh: number): Record<string, unknown> {
  return {
    connectorId,
    transactionId,
    meterValue: [{ timestamp: new Date(atMs).toISOString(), sampledValue: [{ value: registerWh.toFixed(0), measurand: 'Energy.Active.Import.Register', unit: 'Wh', context: 'Sample.Periodic' }] }],
  };
}

/**
 * Waits for SetChargingProfile number `count` of `profiles` (a charger's, counted from 1)
 * and for the gateway to have stored its Accepted answer as the connector's TxProfile
 * (`charger_profile` of the plan at `planPath`); returns that profile.
 */
export async function acceptedTxProfile(gw: PlanGateway, profiles: readonly SentProfile[], planPath: string, count: number, timeoutMs = 30_000): Promise<SentProfile> {
  await until(() => profiles.length >= count, `SetChargingProfile #${count}`, timeoutMs);
  const sent = profiles[count - 1]!;
  expect(sent.csChargingProfiles.chargingProfilePurpose).toBe('TxProfile');
  await until(async () => {
    const p = (await gw.api('GET', planPath)).body.charger_profile;
    return p?.purpose === 'TxProfile' && p.status === 'Accepted' && Date.parse(p.planned_at) === Date.parse(sent.csChargingProfiles.chargingSchedule.startSchedule);
  }, `the answer to SetChargingProfile #${count} stored`, timeoutMs);
  return sent;
}
