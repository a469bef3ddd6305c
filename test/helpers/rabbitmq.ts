// A real three-node RabbitMQ cluster for tests (Debian bookworm's rabbitmq-server 3.10,
// MQTT 3.1.1 plugin): distinct node names and ports on 127.0.0.1, one Erlang cookie in a
// HOME of its own, MQTT over TLS only, users with passwords and topic permissions loaded
// from a definitions file at boot (no rabbitmqctl round trips), pause_minority. Nodes
// start one after the other; classic_config peer discovery joins them.
import { createHash, randomBytes } from 'node:crypto';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import mqtt from 'mqtt';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/free-port.js';
import { makeCertificates } from './mosquitto.js';
import { peer } from './peers.js';

const BIN = '/usr/lib/rabbitmq/bin';
export const hasRabbitmq = peer('rabbitmq-server (Debian package; scripts/install-test-deps)', existsSync(join(BIN, 'rabbitmq-server')) && spawnSync('openssl', ['version']).status === 0);

export interface RabbitUser {
  readonly username: string;
  readonly password: string;
  /** Topic permission regexps on amq.topic (MQTT topics as routing keys: `/` becomes `.`). */
  readonly topicWrite: string;
  readonly topicRead: string;
}

export interface RabbitNode {
  readonly name: string;
  readonly mqttPort: number;
  readonly url: string;
  readonly running: boolean;
  /** SIGKILL of the node's Erlang VM: the node is gone without a goodbye. */
  kill(): Promise<void>;
  /** Starts the node again with its data; resolves when it takes MQTT clients (back in the cluster). */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT of the VM: frozen, the other nodes lose it after net_ticktime. */
  freeze(): void;
  thaw(): void;
  log(): string;
}

export interface RabbitCluster {
  readonly nodes: readonly RabbitNode[];
  readonly caFile: string;
  /** rabbitmqctl against a node (tests: cluster_status and the like). */
  ctl(node: RabbitNode, ...args: string[]): string;
  stop(): Promise<void>;
}

/** rabbit_password_hashing_sha256: base64(salt + sha256(salt + password)). */
function passwordHash(password: string): string {
  const salt = randomBytes(4);
  return Buffer.concat([salt, createHash('sha256').update(Buffer.concat([salt, Buffer.from(password, 'utf8')])).digest()]).toString('base64');
}

async function waitForPort(port: number, what: string, alive: () => boolean, log: () => string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (!alive()) throw new Error(`${what} exited: ${log().slice(-3000)}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`${what} did not listen on ${port} within ${timeoutMs} ms: ${log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Until the node accepts an MQTT CONNECT with a user's password. The MQTT listener opens
 * before the node can take clients: until the cluster has formed (or a restarted node has
 * rejoined it), the plugin's client-id tracker has no majority and refuses every CONNECT
 * with "Server unavailable" (seen on an idle CI machine, where the port opened early).
 */
async function waitForMqtt(url: string, ca: Buffer, user: RabbitUser, what: string, alive: () => boolean, log: () => string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = '';
  for (let attempt = 0; ; attempt++) {
    if (!alive()) throw new Error(`${what} exited: ${log().slice(-3000)}`);
    try {
      const client = await mqtt.connectAsync(url, { ca, username: user.username, password: user.password, protocolVersion: 4, clientId: `probe-${randomBytes(4).toString('hex')}-${attempt}`, reconnectPeriod: 0, connectTimeout: 10_000 });
      await client.endAsync();
      return;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > until) throw new Error(`${what} took no MQTT client within ${timeoutMs} ms (last: ${last}): ${log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export async function startRabbitCluster(users: readonly RabbitUser[], opts: { netTicktimeS?: number } = {}): Promise<RabbitCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mg-rabbit-'));
  const certs = makeCertificates(dir);
  // One cookie for the three nodes (and rabbitmqctl): HOME points here.
  writeFileSync(join(dir, '.erlang.cookie'), randomBytes(16).toString('hex'), { mode: 0o400 });
  writeFileSync(join(dir, 'enabled_plugins'), '[rabbitmq_mqtt].\n');
  const suffix = randomBytes(3).toString('hex');
  const names = [1, 2, 3].map((i) => `mg${suffix}n${i}@localhost`);
  const ports = await Promise.all(Array.from({ length: 9 }, () => freePort()));
  const defs = {
    users: users.map((u) => ({ name: u.username, password_hash: passwordHash(u.password), hashing_algorithm: 'rabbit_password_hashing_sha256', tags: [] })),
    vhosts: [{ name: '/' }],
    permissions: users.map((u) => ({ user: u.username, vhost: '/', configure: '^mqtt-subscription-.*', write: '^(amq\\.topic|mqtt-subscription-.*)$', read: '^(amq\\.topic|mqtt-subscription-.*)$' })),
    topic_permissions: users.map((u) => ({ user: u.username, vhost: '/', exchange: 'amq.topic', write: u.topicWrite, read: u.topicRead })),
  };
  writeFileSync(join(dir, 'definitions.json'), JSON.stringify(defs));
  const env = (i: number): NodeJS.ProcessEnv => {
    const n = join(dir, `n${i + 1}`);
    return {
      ...process.env,
      HOME: dir,
      RABBITMQ_NODENAME: names[i],
      RABBITMQ_DIST_PORT: String(ports[3 * i + 1]),
      RABBITMQ_CONFIG_FILE: join(n, 'rabbitmq.conf'),
      RABBITMQ_ADVANCED_CONFIG_FILE: join(n, 'advanced.config'),
      RABBITMQ_CONF_ENV_FILE: join(n, 'rabbitmq-env.conf'),
      RABBITMQ_MNESIA_BASE: join(n, 'mnesia'),
      RABBITMQ_LOG_BASE: join(n, 'log'),
      RABBITMQ_PID_FILE: join(n, 'pid'),
      RABBITMQ_FEATURE_FLAGS_FILE: join(n, 'feature_flags'),
      RABBITMQ_PLUGINS_EXPAND_DIR: join(n, 'plugins-expand'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
      // Smaller VM: three nodes on a 2-core machine shared with others.
      RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 1:1 +A 4',
    };
  };
  for (let i = 0; i < 3; i++) {
    const n = join(dir, `n${i + 1}`);
    mkdirSync(n);
    writeFileSync(join(n, 'rabbitmq-env.conf'), '');
    writeFileSync(
      join(n, 'rabbitmq.conf'),
      [
        `listeners.tcp.default = 127.0.0.1:${ports[3 * i]}`,
        'mqtt.listeners.tcp = none',
        `mqtt.listeners.ssl.default = 127.0.0.1:${ports[3 * i + 2]}`,
        `ssl_options.cacertfile = ${certs.ca}`,
        `ssl_options.certfile = ${certs.cert}`,
        `ssl_options.keyfile = ${certs.key}`,
        'mqtt.allow_anonymous = false',
        'mqtt.vhost = /',
        'mqtt.exchange = amq.topic',
        `load_definitions = ${join(dir, 'definitions.json')}`,
        'cluster_partition_handling = pause_minority',
        'cluster_formation.peer_discovery_backend = classic_config',
        ...names.map((name, k) => `cluster_formation.classic_config.nodes.${k + 1} = ${name}`),
        'log.console = true',
        'log.console.level = warning',
        'log.file = false',
        '',
      ].join('\n'),
    );
    // A frozen node is declared down after net_ticktime (default 60 s).
    writeFileSync(join(n, 'advanced.config'), `[{kernel, [{net_ticktime, ${opts.netTicktimeS ?? 8}}]}].\n`);
  }

  const caPem = readFileSync(certs.ca);
  const procs: Array<ChildProcess | null> = [null, null, null];
  const logs = ['', '', ''];
  const launch = async (i: number) => {
    logs[i] = '';
    const p = spawn(join(BIN, 'rabbitmq-server'), [], { env: env(i), stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout?.on('data', (d: Buffer) => (logs[i] += d.toString()));
    p.stderr?.on('data', (d: Buffer) => (logs[i] += d.toString()));
    procs[i] = p;
    const alive = () => p.exitCode === null && p.signalCode === null;
    await waitForPort(ports[3 * i + 2]!, names[i]!, alive, () => logs[i]!, 120_000);
    await waitForMqtt(`mqtts://localhost:${ports[3 * i + 2]}`, caPem, users[0]!, names[i]!, alive, () => logs[i]!, 120_000);
  };
  /** The Erlang VM's pid (rabbitmq-server execs into it, so the child's pid; the pid file says so too). */
  const vmPid = (i: number): number => {
    const file = join(dir, `n${i + 1}`, 'pid');
    return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : procs[i]!.pid!;
  };
  const halt = async (i: number, signal: NodeJS.Signals) => {
    const p = procs[i];
    procs[i] = null;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    try {
      process.kill(vmPid(i), 'SIGCONT');
      process.kill(vmPid(i), signal);
    } catch {
      // gone already
    }
    p.kill(signal);
    await exited;
  };

  // A node left behind by a test that gave up (a hook timeout abandons this promise) would run
  // on with no parent: the worker's exit takes every node with it.
  const killAll = () => {
    for (let i = 0; i < 3; i++) {
      if (procs[i]) {
        try {
          process.kill(vmPid(i), 'SIGKILL');
        } catch {
          // gone already
        }
      }
    }
  };
  process.once('exit', killAll);
  try {
    // One after the other: started together, the nodes each set up the MQTT plugin's client-id
    // tracker (a Ra cluster) from their own view of the cluster, and a node could end up with a
    // tracker that never gets a majority ("client ID registration timed out": every CONNECT
    // refused with Server unavailable). Started in turn, the first forms the cluster and each
    // next one joins it, and is in it (takes an MQTT client) before the next starts.
    for (const i of [0, 1, 2]) await launch(i);
  } catch (err) {
    await Promise.all([0, 1, 2].map((i) => halt(i, 'SIGKILL')));
    throw err;
  }
  const nodes: RabbitNode[] = [0, 1, 2].map((i) => ({
    name: names[i]!,
    mqttPort: ports[3 * i + 2]!,
    url: `mqtts://localhost:${ports[3 * i + 2]}`,
    get running() {
      return procs[i] !== null;
    },
    kill: () => halt(i, 'SIGKILL'),
    start: () => launch(i),
    freeze: () => process.kill(vmPid(i), 'SIGSTOP'),
    thaw: () => process.kill(vmPid(i), 'SIGCONT'),
    log: () => logs[i]!,
  }));
  return {
    nodes,
    caFile: certs.ca,
    ctl(node, ...args) {
      const r = spawnSync(join(BIN, 'rabbitmqctl'), ['-n', node.name, ...args], { env: env(names.indexOf(node.name)), encoding: 'utf8', timeout: 60_000 });
      return `${r.stdout}${r.stderr}`;
    },
    async stop() {
      // The data goes with the directory: no need for a clean shutdown (seconds per node).
      await Promise.all([0, 1, 2].map((i) => halt(i, 'SIGKILL')));
      process.off('exit', killAll);
      rmSync(dir, { recursive: true, force: true });
      // The first node started epmd (Erlang's port mapper daemon); no node left: stop it too.
      const names = spawnSync('epmd', ['-names'], { encoding: 'utf8' });
      if (names.status === 0 && !/^name /m.test(names.stdout)) spawnSync('epmd', ['-kill'], { stdio: 'ignore' });
    },
  };
}
