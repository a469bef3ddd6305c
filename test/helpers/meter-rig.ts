// A gateway under test with its real peers, as most daemon tests need it: simulated meters
// (`metergate sim`) on socat ptys or Modbus TCP, a TLS mosquitto with passwords and an ACL,
// a config file written from a few options, `metergate run` as its own process, and a
// subscriber that sees what the cloud sees. stop() tears it all down in reverse order, so
// a test that fails halfway leaves no process, pty or temp dir behind.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startDaemon, type DaemonOptions, type DaemonProcess } from './daemon-process.js';
import { freePort, startTlsBroker, type BrokerOptions, type BrokerUser, type TlsBroker } from './mosquitto.js';
import { ORG } from './poller-harness.js';
import { startSim, type SimProcess } from './sim-process.js';
import { removeDir, startPtyPair, startTappedLine, type PtyPair, type TappedLine } from './socat.js';
import { subscribe, type TestSubscriber } from './subscriber.js';

/** The gateway's login on the rig's broker: it may publish for every resource. */
export const GATEWAY_USER: BrokerUser = { username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] };

/** The cloud's login: it may read one resource's topics, or every resource's. */
export function cloudUser(resourceId = '+'): BrokerUser {
  return { username: 'cloud', password: 'cloud-secret', acl: [resourceId === '+' ? 'topic read svc/resources/#' : `topic read svc/resources/${resourceId}/#`] };
}

/** A simulated meter and the line the gateway reaches it by. */
export interface SimulatedMeter {
  /**
   * `pty`: a socat pty pair (an RS-485 adapter); `tapped-pty`: two pairs with this process
   * relaying between them (noise, cut telegrams: TappedLine); `tcp`: Modbus TCP on a free port.
   */
  readonly line: 'pty' | 'tapped-pty' | 'tcp';
  /** `metergate sim` arguments besides the line, e.g. ['--unit', '1,2']. */
  readonly args: readonly string[];
}

export interface RigMeter {
  /** The running simulator (replaced by MeterRig.restartSim). */
  sim: SimProcess;
  /** When this simulator was started (epoch ms, taken just before it was spawned). */
  startedAtMs: number;
  /** The device the gateway opens ('' for a meter on Modbus TCP: see tcpPort). */
  readonly port: string;
  readonly tcpPort: number | undefined;
  readonly pty: PtyPair | undefined;
  readonly tap: TappedLine | undefined;
}

/** What a config is written from: the rig's peers, started before the config. */
export interface RigPeers {
  readonly dir: string;
  readonly dataDir: string;
  readonly broker: TlsBroker | undefined;
  readonly meters: readonly RigMeter[];
  /** The HTTP port (a free one, also when `http` is off, for a config that sets http itself). */
  readonly httpPort: number;
}

/** Top-level config keys; `mqtt` is merged onto the login at the rig's broker. */
export type GatewayConfig = Record<string, unknown> & { readonly mqtt?: Record<string, unknown> };

export interface MeterRigOptions {
  /** mkdtemp prefix of the rig's directory (config.yaml, data/). */
  readonly tmpPrefix: string;
  /** A TLS mosquitto with these users; the FIRST one is the gateway's login. */
  readonly broker?: { readonly users: readonly BrokerUser[] } & BrokerOptions;
  readonly meters?: readonly SimulatedMeter[];
  /** http on 127.0.0.1 at rig.httpPort (default: http disabled). */
  readonly http?: boolean;
  /** Config on top of the defaults (organization ORG, data_dir, clock trusted, http, no prices, no forecast). */
  readonly config?: (peers: RigPeers) => GatewayConfig;
  /** A subscriber, at the rig's broker unless url and caFile say otherwise; its password is looked up among the broker's users if not given. */
  readonly subscriber?: {
    readonly username: string;
    readonly password?: string;
    readonly topic: string;
    readonly clientId?: string;
    readonly protocolVersion?: 4 | 5;
    readonly url?: string;
    readonly caFile?: string;
  };
  /** Start `metergate run` at once (default), or leave it to the test (rig.startDaemon()). */
  readonly startDaemon?: boolean;
  readonly daemon?: DaemonOptions;
}

export interface MeterRig extends RigPeers {
  readonly configPath: string;
  /** `http://127.0.0.1:<httpPort>` */
  readonly httpBase: string;
  /** The rig's broker; throws if it started none. */
  readonly broker: TlsBroker;
  /** The rig's subscriber; throws if it started none. */
  readonly sub: TestSubscriber;
  /** The daemons started so far, the latest last (the first one when it started with the rig). */
  readonly daemons: readonly DaemonProcess[];
  /** The latest daemon; throws if none was started. */
  readonly daemon: DaemonProcess;
  startDaemon(opts?: DaemonOptions): Promise<DaemonProcess>;
  /** Starts meter `i`'s simulator again on its line (after the test stopped or killed it), with other arguments if given. */
  restartSim(i: number, args?: readonly string[]): Promise<SimProcess>;
  /** Adds a teardown step; steps run last added first. */
  defer(step: () => Promise<unknown> | unknown): void;
  /** Stops the daemons (SIGTERM), the subscriber, simulators, lines and broker, and removes the directory. */
  stop(): Promise<void>;
}

export async function startMeterRig(opts: MeterRigOptions): Promise<MeterRig> {
  const steps: Array<() => Promise<unknown> | unknown> = [];
  const stop = async () => {
    while (steps.length) await steps.pop()!();
  };
  try {
    return await build(opts, steps, stop);
  } catch (err) {
    await stop();
    throw err;
  }
}

async function build(opts: MeterRigOptions, steps: Array<() => Promise<unknown> | unknown>, stop: () => Promise<void>): Promise<MeterRig> {
  const dir = mkdtempSync(join(tmpdir(), opts.tmpPrefix));
  steps.push(() => rmSync(dir, { recursive: true, force: true }));
  const dataDir = join(dir, 'data');
  const configPath = join(dir, 'config.yaml');

  let broker: TlsBroker | undefined;
  if (opts.broker) {
    const b = await startTlsBroker(opts.broker.users, opts.broker);
    steps.push(() => b.stop());
    broker = b;
  }

  const meters: RigMeter[] = [];
  const simArgs: string[][] = [];
  const launchSim = (line: SimulatedMeter['line'], args: readonly string[], meterSide: string) =>
    startSim(line === 'tcp' ? ['--tcp', '0', ...args] : ['--serial', meterSide, ...args]);
  for (const spec of opts.meters ?? []) {
    let pty: PtyPair | undefined;
    let tap: TappedLine | undefined;
    let meterSide = '';
    if (spec.line === 'pty') {
      const p = await startPtyPair();
      steps.push(async () => {
        await p.stop();
        removeDir(p.dir);
      });
      pty = p;
      meterSide = p.b;
    } else if (spec.line === 'tapped-pty') {
      const t = await startTappedLine();
      steps.push(() => t.stop());
      tap = t;
      meterSide = t.meterSide;
    }
    const startedAtMs = Date.now();
    const sim = await launchSim(spec.line, spec.args, meterSide);
    const meter: RigMeter = {
      sim,
      startedAtMs,
      port: pty?.a ?? tap?.gatewaySide ?? '',
      tcpPort: sim.ready.tcpPort,
      pty,
      tap,
    };
    // Stops whichever simulator runs on this line by then (restartSim replaces it).
    steps.push(() => meter.sim.stop());
    meters.push(meter);
    simArgs.push([...spec.args]);
  }

  const httpPort = await freePort();
  const peers: RigPeers = { dir, dataDir, broker, meters, httpPort };
  const custom = opts.config?.(peers) ?? {};
  const gatewayLogin = opts.broker?.users[0];
  const config = {
    organization_id: ORG,
    data_dir: dataDir,
    log_level: 'info',
    clock: { trust: 'system' },
    http: opts.http ? { host: '127.0.0.1', port: httpPort } : { enabled: false },
    prices: { source: 'none' },
    forecast: { enabled: false },
    ...custom,
    ...(broker && gatewayLogin
      ? { mqtt: { url: broker.url, username: gatewayLogin.username, password: gatewayLogin.password, ca_file: broker.caFile, ...custom.mqtt } }
      : {}),
  };
  writeFileSync(configPath, stringify(config));

  let sub: TestSubscriber | undefined;
  if (opts.subscriber) {
    const s = opts.subscriber;
    const url = s.url ?? broker?.url;
    const caFile = s.caFile ?? broker?.caFile;
    const password = s.password ?? opts.broker?.users.find((u) => u.username === s.username)?.password;
    if (!url || !caFile || password === undefined) throw new Error(`meter rig: subscriber ${s.username} needs a broker (url, caFile) and a password`);
    const client = await subscribe({ url, caFile, username: s.username, password, topic: s.topic, clientId: s.clientId, protocolVersion: s.protocolVersion });
    steps.push(() => client.close());
    sub = client;
  }

  const daemons: DaemonProcess[] = [];
  const rig: MeterRig = {
    dir,
    dataDir,
    meters,
    httpPort,
    configPath,
    httpBase: `http://127.0.0.1:${httpPort}`,
    get broker(): TlsBroker {
      if (!broker) throw new Error('meter rig: no broker started');
      return broker;
    },
    get sub(): TestSubscriber {
      if (!sub) throw new Error('meter rig: no subscriber started');
      return sub;
    },
    daemons,
    get daemon(): DaemonProcess {
      const d = daemons.at(-1);
      if (!d) throw new Error('meter rig: no daemon started');
      return d;
    },
    async startDaemon(daemonOpts = opts.daemon) {
      const d = await startDaemon(configPath, daemonOpts);
      steps.push(() => d.stop());
      daemons.push(d);
      return d;
    },
    async restartSim(i, args) {
      const meter = meters[i];
      if (!meter) throw new Error(`meter rig: no meter ${i}`);
      await meter.sim.stop();
      const spec = opts.meters![i]!;
      // A TCP simulator would come back on another port than the config names.
      if (spec.line === 'tcp') throw new Error('meter rig: restartSim is for meters on a pty');
      meter.startedAtMs = Date.now();
      meter.sim = await launchSim(spec.line, args ?? simArgs[i]!, meter.pty?.b ?? meter.tap!.meterSide);
      return meter.sim;
    },
    defer(step) {
      steps.push(step);
    },
    stop,
  };
  if (opts.startDaemon ?? true) await rig.startDaemon();
  return rig;
}
