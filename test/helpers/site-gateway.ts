// A running gateway (Daemon with its real modules) polling the Modbus simulator (an SDM630
// with per-phase currents), or reading a simulated P1 smart meter, over a socat pty pair as its site meter, on REAL NL prices of
// 2025; its clock runs from 2025-05-11 06:20Z at real speed (the poller's timers are real).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import { expect } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import type { AppContext } from '../../src/context.js';
import { createContext, Daemon } from '../../src/daemon.js';
import { freePort } from '../../src/free-port.js';
import { createLogger } from '../../src/log.js';
import { TokenStore } from '../../src/store/tokens.js';
import type { SentProfile } from './ocpp-charger.js';
import { loadNl2025Prices } from './real-prices.js';
import { startSim, type SimProcess } from './sim-process.js';
import { removeDir, startPtyPair, type PtyPair } from './socat.js';

export interface SiteGateway {
  dir: string;
  httpPort: number;
  ocppPort: number;
  cpoToken: string;
  /** The site meter's simulator (a test kills it to silence the meter). */
  sim: SimProcess;
  /** The gateway's clock. */
  now: () => number;
  stop(): Promise<void>;
}

export async function startSiteGateway(opts: {
  /** A temporary directory, removed by stop() (it may hold the simulator's load file). */
  dir: string;
  siteMeter: string;
  simArgs?: string[];
  /** The site meter is a P1 smart meter replaying this recorded telegram (else the Modbus SDM630). */
  p1Telegram?: string;
  site: Record<string, unknown>;
  chargers: Array<Record<string, unknown>>;
  /** More buses (a control box's Modbus I/O module) and settings (grid_control), merged into the config. */
  extraBuses?: Array<Record<string, unknown>>;
  extraConfig?: Record<string, unknown>;
  /** Called before the daemon starts, to subscribe to its events. */
  beforeStart?: (ctx: AppContext, now: () => number) => void;
  /**
   * The gateway's and the simulator's clock start at `startIso` and run `rate` times real time
   * (default: 2025-05-11 06:20Z at real speed): a test of quarter-hours compresses them. Timers stay real.
   */
  clock?: { readonly startIso: string; readonly rate: number };
  /** poll.interval_ms (default 1000). */
  pollIntervalMs?: number;
}): Promise<SiteGateway> {
  const realStartMs = Date.now();
  const startMs = Date.parse(opts.clock?.startIso ?? '2025-05-11T06:20:00Z');
  const rate = opts.clock?.rate ?? 1;
  const now = () => startMs + (Date.now() - realStartMs) * rate;
  const clockArgs = opts.clock ? ['--clock-scale', `${realStartMs},${startMs},${rate}`] : [];
  let pair: PtyPair | undefined;
  let sim: SimProcess | undefined;
  let daemon: Daemon | undefined;
  let httpPort = 0;
  let ocppPort = 0;
  let cpoToken = '';
  const stop = async () => {
    await daemon?.stop();
    await sim?.stop();
    await pair?.stop();
    if (pair) removeDir(pair.dir);
    rmSync(opts.dir, { recursive: true, force: true });
  };
  // A start that fails part-way leaves no simulator, pty pair or directory behind.
  try {
    pair = await startPtyPair();
    sim = await startSim(opts.p1Telegram ? ['--p1', opts.p1Telegram, '--serial', pair.b, '--p1-period-ms', '300', ...clockArgs, ...(opts.simArgs ?? [])] : ['--serial', pair.b, '--unit', '1', ...(opts.simArgs ?? [])]);
    httpPort = await freePort();
    ocppPort = await freePort();
    const config = validateConfig(
      {
        organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        data_dir: join(opts.dir, 'data'),
        log_level: 'fatal',
        poll: { interval_ms: opts.pollIntervalMs ?? 1000, offline_after_misses: 100 },
        buses: [...(opts.p1Telegram ? [{ name: 'p1', type: 'p1', port: pair.a }] : [{ name: 'rs485', type: 'rtu', port: pair.a, timeout_ms: 500, retries: 0 }]), ...(opts.extraBuses ?? [])],
        meters: opts.p1Telegram
          ? [{ resource_id: opts.siteMeter, bus: 'p1' }]
          : [{ resource_id: opts.siteMeter, bus: 'rs485', unit_id: 1, profile: 'sdm630', extra_metrics: ['current_l1', 'current_l2', 'current_l3'] }],
        site: { meter: opts.siteMeter, ...opts.site },
        clock: { trust: 'system' },
        http: { host: '127.0.0.1', port: httpPort },
        prices: { regions: ['NL'], source: 'none' },
        forecast: { enabled: false },
        ocpp: { host: '127.0.0.1', port: ocppPort },
        chargers: opts.chargers,
        ...opts.extraConfig,
      },
      'test',
      {},
    );
    const ctx = createContext(config, { logger: createLogger('fatal'), clock: { now } });
    expect(loadNl2025Prices(ctx.db)).toBeGreaterThan(10_000);
    cpoToken = new TokenStore(ctx.db).create({ name: 'test-cpo', type: 'cpo', nowMs: now() }).token;
    opts.beforeStart?.(ctx, now);
    daemon = new Daemon(ctx);
    await daemon.start();
  } catch (err) {
    await stop();
    throw err;
  }
  return { dir: opts.dir, httpPort, ocppPort, cpoToken, sim, now, stop };
}

/** A call the gateway sent a site charger, as it came, with when (Date.now()). */
export interface SiteChargerCall {
  readonly action: string;
  readonly params: any;
  readonly atMs: number;
}

/** A strict ocpp-rpc 1.6 charger connected to a site gateway and booted (an Alfen Eve Single). */
export interface SiteCharger {
  readonly client: RPCClient;
  /** Every call the gateway sent it, in order. */
  readonly received: SiteChargerCall[];
  /** Its SetChargingProfile requests, in order. */
  profiles(): SentProfile[];
  /** The transaction its last StartTransaction opened (set by the test). */
  transactionId: number;
}

type Answer = (params: any) => Record<string, unknown> | Promise<Record<string, unknown>>;

/**
 * Connects and boots a charger on the gateway's OCPP port. It takes every profile and clear
 * (Accepted) and says it has no ChargingScheduleAllowedChargingRateUnit, unless `answers`
 * answers an action otherwise; every call the gateway sends it is recorded first.
 */
export async function connectSiteCharger(gw: Pick<SiteGateway, 'ocppPort'>, id: string, password: string, answers: Record<string, Answer> = {}): Promise<SiteCharger> {
  const client = new RPCClient({ endpoint: `ws://127.0.0.1:${gw.ocppPort}`, identity: id, password, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ConstructorParameters<typeof RPCClient>[0]);
  const received: SiteChargerCall[] = [];
  const all: Record<string, Answer> = {
    SetChargingProfile: () => ({ status: 'Accepted' }),
    ClearChargingProfile: () => ({ status: 'Accepted' }),
    GetConfiguration: () => ({ unknownKey: ['ChargingScheduleAllowedChargingRateUnit'] }),
    ...answers,
  };
  for (const [action, answer] of Object.entries(all)) {
    client.handle(action, async ({ params }: { params?: unknown }) => {
      received.push({ action, params, atMs: Date.now() });
      return answer(params);
    });
  }
  await client.connect();
  await client.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
  return { client, received, profiles: () => received.filter((r) => r.action === 'SetChargingProfile').map((r) => r.params as SentProfile), transactionId: 0 };
}
