// A real TLS MQTT broker for tests: mosquitto with a generated CA and server certificate,
// a password file and an ACL, on a free port. Facts from design.md: a `listener` line
// disables the default listener; started as root it needs `user root` to read its files.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/free-port.js';
import { peer } from './peers.js';
export { freePort };

const MOSQUITTO = ['/usr/sbin/mosquitto', 'mosquitto'].find((c) => spawnSync(c, ['-h']).error === undefined);
export const hasMosquitto = peer('mosquitto, mosquitto_passwd and openssl', MOSQUITTO !== undefined && spawnSync('mosquitto_passwd', ['-h']).error === undefined && spawnSync('openssl', ['version']).status === 0);

export interface BrokerUser {
  readonly username: string;
  readonly password: string;
  /** ACL lines for this user, e.g. `topic write svc/resources/<id>/#`. */
  readonly acl: readonly string[];
}

export interface TlsBroker {
  readonly port: number;
  readonly url: string;
  readonly caFile: string;
  readonly dir: string;
  /** Stops the broker for good and removes its files. */
  stop(): Promise<void>;
  /** Stops the broker process (SIGTERM; with persistence it saves its sessions), keeping its files and port. */
  pause(): Promise<void>;
  /** Starts it again on the same port with the same files. */
  resume(): Promise<void>;
  /** Whether the broker process runs. */
  readonly running: boolean;
  /** What the broker logged (stderr) since it last started. */
  log(): string;
  /** Rewrites the ACL file for these users and makes the running broker reload it (SIGHUP); resolves once it has. */
  reloadAcl(users: readonly BrokerUser[]): Promise<void>;
}

export interface BrokerOptions {
  /** Keep sessions and queued QoS 1 messages across pause()/resume() (mosquitto persistence). */
  readonly persistence?: boolean;
  /** Serve this CA's server certificate (several brokers as the nodes of one cluster); default: a CA of its own. */
  readonly certificates?: { readonly ca: string; readonly cert: string; readonly key: string };
}


function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** CA + server certificate for localhost / 127.0.0.1, in `dir`. */
export function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=metergate test CA', '-keyout', 'ca.key', '-out', 'ca.crt');
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(dir, 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'server.crt');
  return { ca: join(dir, 'ca.crt'), cert: join(dir, 'server.crt'), key: join(dir, 'server.key') };
}

async function waitForPort(port: number, proc: ChildProcess, log: () => string): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`mosquitto exited ${proc.exitCode}: ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`mosquitto did not listen on ${port}: ${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startTlsBroker(users: readonly BrokerUser[], opts: BrokerOptions = {}): Promise<TlsBroker> {
  if (!MOSQUITTO) throw new Error('mosquitto not installed');
  const dir = mkdtempSync(join(tmpdir(), 'mg-mqtt-'));
  const { ca, cert, key } = opts.certificates ?? makeCertificates(dir);
  const pwfile = join(dir, 'passwd');
  writeFileSync(pwfile, '');
  for (const u of users) execFileSync('mosquitto_passwd', ['-b', pwfile, u.username, u.password], { stdio: 'ignore' });
  const aclfile = join(dir, 'acl');
  const writeAcl = (list: readonly BrokerUser[]) => writeFileSync(aclfile, list.map((u) => [`user ${u.username}`, ...u.acl, ''].join('\n')).join('\n'));
  writeAcl(users);
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    [
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      ...(opts.persistence ? ['persistence true', `persistence_location ${dir}/`, 'autosave_interval 0'] : ['persistence false']),
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      // "New client connected ... as <id> (p2, ...)": p2 = MQTT 3.1.1, p5 = MQTT 5.0.
      'log_type notice',
      // "Reloading config." (reloadAcl waits for it).
      'log_type information',
      `listener ${port} 127.0.0.1`,
      'allow_anonymous false',
      `password_file ${pwfile}`,
      `acl_file ${aclfile}`,
      `cafile ${ca}`,
      `certfile ${cert}`,
      `keyfile ${key}`,
      // Room for a long backlog in flight and queued for a subscriber that is away.
      'max_inflight_messages 0',
      'max_queued_messages 0',
      '',
    ].join('\n'),
  );
  let proc: ChildProcess | null = null;
  let stderr = '';
  const launch = async () => {
    const p = spawn(MOSQUITTO, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    stderr = '';
    p.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    proc = p;
    await waitForPort(port, p, () => stderr);
  };
  const halt = async () => {
    const p = proc;
    proc = null;
    if (p && p.exitCode === null && p.signalCode === null) {
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await exited;
    }
  };
  await launch();
  return {
    port,
    url: `mqtts://localhost:${port}`,
    caFile: ca,
    dir,
    get running() {
      return proc !== null;
    },
    log: () => stderr,
    async reloadAcl(list) {
      writeAcl(list);
      const p = proc as ChildProcess | null;
      if (!p) throw new Error('mosquitto is not running');
      const before = (stderr.match(/Reloading config/g) ?? []).length;
      p.kill('SIGHUP');
      const until = Date.now() + 10_000;
      while ((stderr.match(/Reloading config/g) ?? []).length === before) {
        if (Date.now() > until) throw new Error(`mosquitto did not reload its config: ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    pause: halt,
    resume: launch,
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
