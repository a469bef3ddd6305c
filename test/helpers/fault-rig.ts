// A whole gateway under test for fault campaigns (scripts/faults and
// test/integration/faults.test.ts): mosquitto with TLS, password file and ACL; simulated
// meters behind socat ptys (one through a relay that can corrupt bytes, one that can be
// unplugged); `metergate run` as its own process on a real SQLite file, optionally on a
// small tmpfs and under libfaketime; a persistent subscriber that sees what the cloud sees.
// It counts, per fault, readings taken (stored in SQLite, or seen at the broker), delivered,
// lost and duplicated, and how long delivery took to catch up after the fault ended.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { freePort, startTlsBroker, type BrokerUser, type TlsBroker } from './mosquitto.js';
import { startScriptedBroker, type ScriptedBroker } from './scripted-broker.js';
import { startDaemon, type DaemonProcess } from './daemon-process.js';
import { startSim, type SimProcess } from './sim-process.js';
import { removeDir, startPtyPair, startTappedLine, type PtyPair, type TappedLine } from './socat.js';
import { subscribe, type TestSubscriber } from './subscriber.js';
import { until } from './wait.js';
import { libfaketimePath } from './peers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export const RIG_ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
/** The meter behind the relay that can corrupt bytes. */
export const NOISY_METER = '0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
/** The meter whose adapter can be unplugged. */
export const PLUGGABLE_METER = '1c7a3b5f-2d4e-4f60-9b0c-1d2e3f4a5b6c';


export interface RigOptions {
  readonly pollIntervalMs?: number;
  /** Put the data directory on a tmpfs of this size (needs root), so the disk can be filled. */
  readonly tmpfsBytes?: number;
  /** Run the daemon under libfaketime with an offset file (see stepClock). */
  readonly faketime?: boolean;
  /** Extra YAML lines under `mqtt:` (indented by the caller). */
  readonly mqttExtra?: string;
  /** Extra top-level YAML. */
  readonly extraYaml?: string;
  /**
   * A scripted MQTT 5 peer instead of mosquitto, answering each PUBLISH with the code this
   * returns (for PUBACK codes mosquitto cannot be made to send, e.g. 0x97 quota exceeded).
   */
  readonly scriptedAnswer?: (n: number) => number;
}

export interface FaultRow {
  readonly fault: string;
  readonly taken: number;
  readonly delivered: number;
  readonly lost: number;
  /** Taken, not delivered, but kept in outbox_held (refused by the broker, or stamped ahead of the clock). */
  readonly held: number;
  readonly duplicates: number;
  /** Poll slots of the window (every meter, every interval) without a reading taken: what the gateway never read. */
  readonly missedSlots: number;
  /** Seconds from the end of the fault until every reading taken by then was delivered. */
  readonly recoverS: number | null;
  readonly note: string;
}

const GATEWAY: BrokerUser = { username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] };
const CLOUD: BrokerUser = { username: 'cloud', password: 'cloud-secret', acl: ['topic read svc/resources/#'] };

/** `${resource_id} ${sampled_at}` */
type Key = string;

export interface MeasureOptions {
  /** How long to wait after the fault for what was taken to arrive (default 120 s). */
  readonly settleMs?: number;
  /**
   * Held measurements are expected to stay held (quarantined for their timestamp): they are
   * not waited for. Otherwise (a refusal that was fixed) recovery waits until they arrive.
   */
  readonly heldStays?: boolean;
}

export class FaultRig {
  broker!: TlsBroker;
  sub: TestSubscriber | undefined;
  scripted: ScriptedBroker | undefined;
  noisyLine!: TappedLine;
  plug!: PtyPair;
  readonly sims: SimProcess[] = [];
  daemon: DaemonProcess | null = null;
  /** Output of daemons killed before the current one. */
  private readonly previousLogs: string[] = [];
  readonly dir: string;
  readonly dataDir: string;
  readonly configPath: string;
  readonly clockFile: string;
  httpPort = 0;
  private mounted = false;
  /** Every reading taken so far: logged by the poller ('sample', debug), seen in SQLite or at the broker. */
  private readonly taken = new Set<Key>();
  private readonly takenAtMs = new Map<Key, number>();
  /** Samples the poller logged less than a poll interval before a kill -9: in memory, not yet committed. */
  private readonly inFlightAtKill = new Set<Key>();
  private readonly loggedAtMs = new Map<Key, number>();
  private partialLine = '';
  /** While the clock guard holds samples, their logged stamps are not final (they are re-stamped on release). */
  private clockHolding = false;
  /** Samples the clock guard said it dropped when trust came back. */
  private droppedByClock = 0;
  /** Keys of measurements kept in outbox_held. */
  private heldKeys = new Set<Key>();
  private readonly storedKeys = new Set<Key>();

  constructor(readonly options: RigOptions = {}) {
    this.dir = mkdtempSync(join(tmpdir(), 'mg-faults-'));
    this.dataDir = join(this.dir, 'data');
    this.configPath = join(this.dir, 'config.yaml');
    this.clockFile = join(this.dir, 'faketime');
  }

  get pollIntervalMs(): number {
    return this.options.pollIntervalMs ?? 1000;
  }

  get dbPath(): string {
    return join(this.dataDir, 'metergate.db');
  }

  async start(): Promise<void> {
    mkdirSync(this.dataDir, { recursive: true });
    if (this.options.tmpfsBytes) {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${this.options.tmpfsBytes}`, 'tmpfs', this.dataDir]);
      this.mounted = true;
    }
    let brokerUrl: string;
    let brokerCa: string;
    if (this.options.scriptedAnswer) {
      const answer = this.options.scriptedAnswer;
      this.scripted = await startScriptedBroker((p) => answer(p.n));
      brokerUrl = this.scripted.url;
      brokerCa = this.scripted.caFile;
    } else {
      this.broker = await startTlsBroker([GATEWAY, CLOUD], { persistence: true });
      brokerUrl = this.broker.url;
      brokerCa = this.broker.caFile;
      // A persistent session: what is published while the subscriber reconnects waits for it.
      this.sub = await subscribe({ url: brokerUrl, caFile: brokerCa, username: CLOUD.username, password: CLOUD.password, topic: 'svc/resources/+/measurements', clientId: `faults-${process.pid}` });
    }
    this.noisyLine = await startTappedLine();
    this.sims.push(await startSim(['--serial', this.noisyLine.meterSide, '--unit', '1']));
    this.plug = await startPtyPair(mkdtempSync(join(tmpdir(), 'mg-plug-')));
    this.sims.push(await startSim(['--serial', this.plug.b, '--unit', '2']));
    this.httpPort = await freePort();
    writeFileSync(this.clockFile, '+0');
    writeFileSync(
      this.configPath,
      `organization_id: ${RIG_ORG}
data_dir: ${this.dataDir}
log_level: debug
poll: { interval_ms: ${this.pollIntervalMs}, reprobe_initial_ms: 1000, reprobe_max_ms: 5000 }
buses:
  - { name: noisy, type: rtu, port: ${this.noisyLine.gatewaySide}, baud_rate: 9600, timeout_ms: 300 }
  - { name: pluggable, type: rtu, port: ${this.plug.a}, baud_rate: 9600, timeout_ms: 300 }
meters:
  - { resource_id: ${NOISY_METER}, bus: noisy, unit_id: 1, profile: sdm630 }
  - { resource_id: ${PLUGGABLE_METER}, bus: pluggable, unit_id: 2, profile: sdm630 }
mqtt:
  url: ${brokerUrl}
  username: ${GATEWAY.username}
  password: ${GATEWAY.password}
  ca_file: ${brokerCa}
  heartbeat_interval_ms: 60000
  reconnect_min_ms: 200
  reconnect_max_ms: 2000
${this.options.mqttExtra ?? ''}
clock: { ${this.options.faketime ? 'trust: auto, stable_for_s: 3' : 'trust: system'} }
http: { host: 127.0.0.1, port: ${this.httpPort} }
prices: { source: none }
forecast: { enabled: false }
${this.options.extraYaml ?? ''}
`,
    );
    await this.startDaemon();
  }

  /** Starts `metergate run` and waits for its start line. */
  async startDaemon(): Promise<void> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (this.options.faketime) {
      const preload = libfaketimePath();
      if (!preload) throw new Error('libfaketime is missing (bash scripts/install-test-deps)');
      Object.assign(env, { LD_PRELOAD: preload, FAKETIME_TIMESTAMP_FILE: this.clockFile, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' });
    }
    this.daemon = await startDaemon(this.configPath, { env, onOutput: (chunk) => this.readSampleLines(chunk), startTimeoutMs: 60_000 });
  }

  async kill9(): Promise<void> {
    if (!this.daemon) return;
    this.previousLogs.push(this.daemon.output());
    await this.daemon.kill9();
    this.daemon = null;
    // Samples read from the meter but not yet committed die with the process, as the
    // register values do in a power cut: counted apart, not as taken.
    const killedAtMs = Date.now();
    this.scanTaken();
    for (const [key, at] of this.loggedAtMs) {
      if (killedAtMs - at < this.pollIntervalMs && !this.storedKeys.has(key)) {
        this.inFlightAtKill.add(key);
        this.taken.delete(key);
      }
    }
  }

  async stopDaemon(): Promise<void> {
    await this.daemon?.stop();
    this.daemon = null;
  }

  /** What every daemon of this rig wrote, oldest first. */
  log(): string {
    return [...this.previousLogs, this.daemon?.output() ?? ''].join('');
  }

  /** The poller's debug line for each sample it hands on: what the daemon took. */
  private readSampleLines(chunk: string): void {
    const lines = (this.partialLine + chunk).split('\n');
    this.partialLine = lines.pop() ?? '';
    for (const line of lines) {
      if (line.includes('"msg":"clock not trusted yet')) this.clockHolding = true;
      if (line.includes('"msg":"clock trusted"')) {
        this.clockHolding = false;
        this.droppedByClock += Number(/"dropped":(\d+)/.exec(line)?.[1] ?? 0);
      }
      if (!line.includes('"msg":"sample"') || this.clockHolding) continue;
      try {
        const e = JSON.parse(line) as { resource_id?: string; sampled_at?: string };
        if (!e.resource_id || !e.sampled_at) continue;
        const key = `${e.resource_id} ${new Date(e.sampled_at).toISOString()}`;
        this.loggedAtMs.set(key, Date.now());
        this.addTaken(key);
      } catch {
        /* not a log line */
      }
    }
  }

  private addTaken(key: Key): void {
    if (this.taken.has(key) || this.inFlightAtKill.has(key)) return;
    this.taken.add(key);
    this.takenAtMs.set(key, Date.now());
  }

  /** Unplugs the pluggable meter's adapter: its device node vanishes. */
  async unplug(): Promise<void> {
    await this.plug.stop();
  }

  /** Plugs it back in under the same name, with the meter still on the line. */
  async replug(): Promise<void> {
    const dir = this.plug.dir;
    const old = this.sims.pop();
    await old?.stop();
    this.plug = await startPtyPair(dir);
    this.sims.push(await startSim(['--serial', this.plug.b, '--unit', '2']));
  }

  /** Corrupts each relayed byte of the noisy line with this probability (0 for a clean line). */
  setByteErrorRate(rate: number): void {
    if (rate <= 0) return this.noisyLine.mangle(null);
    this.noisyLine.mangle((chunk) => {
      const out = Buffer.from(chunk);
      for (let i = 0; i < out.length; i++) if (Math.random() < rate) out[i] = out[i]! ^ (1 + Math.floor(Math.random() * 255));
      return out;
    });
  }

  /** Sets the daemon's wall clock this many seconds off the real time (libfaketime offset file). */
  setClockOffset(offsetS: number): void {
    writeFileSync(this.clockFile, `${offsetS < 0 ? '-' : '+'}${Math.abs(offsetS)}`);
  }

  /** Readings of one meter taken (stored) with sampled_at in [fromMs, toMs). */
  takenBetween(resourceId: string, fromMs: number, toMs: number): number {
    this.scanTaken();
    let n = 0;
    for (const k of this.taken) {
      const [resource, at] = k.split(' ');
      const t = Date.parse(at!);
      if (resource === resourceId && t >= fromMs && t < toMs) n++;
    }
    return n;
  }

  /** Reads the readings table (read-only) and adds what it holds to the readings taken. */
  scanTaken(): void {
    if (!existsSync(this.dbPath)) return;
    let db: Database.Database | undefined;
    try {
      db = new Database(this.dbPath, { readonly: true, fileMustExist: true, timeout: 100 });
      const now = Date.now();
      const held = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'outbox_held'").get() as { n: number };
      if (held.n > 0) {
        const rows = db.prepare("SELECT topic, payload FROM outbox_held WHERE topic LIKE '%/measurements'").all() as Array<{ topic: string; payload: string }>;
        this.heldKeys = new Set(rows.map((r) => `${/^svc\/resources\/([^/]+)\//.exec(r.topic)?.[1]} ${new Date((JSON.parse(r.payload) as { data: { sampled_at: string } }).data.sampled_at).toISOString()}`));
      }
      for (const r of db.prepare('SELECT resource_id, sampled_at_ms FROM readings').iterate() as Iterable<{ resource_id: string; sampled_at_ms: number }>) {
        const key = `${r.resource_id} ${new Date(r.sampled_at_ms).toISOString()}`;
        this.storedKeys.add(key);
        this.inFlightAtKill.delete(key);
        if (!this.taken.has(key)) {
          this.taken.add(key);
          this.takenAtMs.set(key, now);
        }
      }
    } catch {
      // Locked, or the disk is full: the next scan sees it.
    } finally {
      db?.close();
    }
  }

  /** What the cloud received: the subscriber's messages, or what the scripted peer accepted. */
  private received(): Array<{ topic: string; sampledAt: string | undefined }> {
    const sampledAt = (json: unknown) => (json as { data?: { sampled_at?: string } }).data?.sampled_at;
    if (this.scripted) return this.scripted.accepted.filter((p) => p.topic.endsWith('/measurements')).map((p) => ({ topic: p.topic, sampledAt: sampledAt(JSON.parse(p.payload)) }));
    return this.sub!.messages.map((m) => ({ topic: m.topic, sampledAt: sampledAt(m.json) }));
  }

  /** The ACL lets the gateway write every resource's topics but this one's (or all again with null), reloaded by SIGHUP. */
  async refuseTopicsOf(resourceId: string | null): Promise<void> {
    const others = [NOISY_METER, PLUGGABLE_METER].filter((r) => r !== resourceId);
    const gateway: BrokerUser = resourceId === null ? GATEWAY : { ...GATEWAY, acl: others.map((r) => `topic write svc/resources/${r}/#`) };
    await this.broker.reloadAcl([gateway, CLOUD]);
  }

  /** Measurements kept in outbox_held now (refused, or stamped ahead of the clock). */
  heldCount(): number {
    this.scanTaken();
    return this.heldKeys.size;
  }

  /** Readings of one meter delivered with sampled_at in [fromMs, toMs). */
  deliveredBetween(resourceId: string, fromMs: number, toMs: number): number {
    let n = 0;
    for (const k of this.deliveredKeys().keys) {
      const [resource, at] = k.split(' ');
      const t = Date.parse(at!);
      if (resource === resourceId && t >= fromMs && t < toMs) n++;
    }
    return n;
  }

  /** `metergate outbox retry`, as the operator runs it after fixing the ACL. */
  outboxRetry(): string {
    return execFileSync(process.execPath, ['--import', 'tsx', resolve(root, 'src/cli.ts'), 'outbox', 'retry', '--config', this.configPath], { cwd: root, encoding: 'utf8' });
  }

  private deliveredKeys(): { keys: Set<Key>; total: number } {
    const keys = new Set<Key>();
    let total = 0;
    for (const m of this.received()) {
      const resource = /^svc\/resources\/([^/]+)\//.exec(m.topic)?.[1];
      const at = m.sampledAt;
      if (!resource || !at) continue;
      keys.add(`${resource} ${new Date(at).toISOString()}`);
      total++;
    }
    return { keys, total };
  }

  /**
   * Runs one fault: `inject` starts it and resolves when it is over (the rig is healthy
   * again as far as the outside goes); then waits up to `settleMs` for every reading taken
   * to be delivered, and counts.
   */
  async measure(fault: string, inject: () => Promise<string | void>, opts: MeasureOptions = {}): Promise<FaultRow> {
    const settleMs = opts.settleMs ?? 120_000;
    this.scanTaken();
    const { keys: before } = this.deliveredKeys();
    const takenBefore = new Set(this.taken);
    const windowStartMs = Date.now();
    const inFlightBefore = this.inFlightAtKill.size;
    const droppedBefore = this.droppedByClock;
    const messagesBefore = this.received().length;
    const note = (await inject()) ?? '';
    const endedMs = Date.now();
    let recoverS: number | null = null;
    const deadline = endedMs + settleMs;
    for (;;) {
      this.scanTaken();
      const { keys } = this.deliveredKeys();
      // Caught up: everything taken until the fault ended has been delivered.
      const pending = [...this.taken].filter((k) => !takenBefore.has(k) && (this.takenAtMs.get(k) ?? 0) <= endedMs && !keys.has(k) && !(opts.heldStays && this.heldKeys.has(k)));
      if (pending.length === 0) {
        recoverS = (Date.now() - endedMs) / 1000;
        break;
      }
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    // Let what was taken meanwhile arrive too, then count what was taken up to a cut-off a
    // little before now: a reading taken in the last moment before the count is on its way
    // (on a loaded machine its publish can take a second or two), not lost. Those up to the
    // cut-off get the rest of the settle time to arrive.
    await new Promise((r) => setTimeout(r, 2 * this.pollIntervalMs + 1000));
    const cutoffMs = Date.now() - (this.pollIntervalMs + 2000);
    const inWindow = (k: string) => !takenBefore.has(k) && (this.takenAtMs.get(k) ?? 0) <= cutoffMs;
    for (;;) {
      this.scanTaken();
      const { keys: arrived } = this.deliveredKeys();
      if ([...this.taken].filter(inWindow).every((k) => arrived.has(k) || this.heldKeys.has(k)) || Date.now() > Math.max(deadline, cutoffMs + 30_000)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    this.scanTaken();
    const { keys } = this.deliveredKeys();
    const window = [...this.taken].filter(inWindow);
    const seenAtBroker = [...keys].filter((k) => !before.has(k) && !this.taken.has(k));
    const newMessages = this.received().slice(messagesBefore);
    const distinctNew = new Set(newMessages.map((m) => `${m.topic} ${m.sampledAt}`));
    const droppedByClock = this.droppedByClock - droppedBefore;
    const taken = window.length + seenAtBroker.length + droppedByClock;
    const delivered = window.filter((k) => keys.has(k)).length + seenAtBroker.length;
    const held = window.filter((k) => !keys.has(k) && this.heldKeys.has(k)).length;
    const inFlight = this.inFlightAtKill.size - inFlightBefore;
    const slots = 2 * Math.floor((cutoffMs - windowStartMs) / this.pollIntervalMs);
    const missedSlots = Math.max(0, slots - taken - inFlight);
    const notes = [note, inFlight > 0 ? `${inFlight} sample(s) in memory at a kill -9, before their commit` : ''].filter(Boolean);
    return { fault, taken, delivered, lost: taken - delivered - held, held, missedSlots, duplicates: newMessages.length - distinctNew.size, recoverS, note: notes.join('; ') };
  }

  /** until() from wait.ts, with the end of the daemon's log in the error. */
  async until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
    try {
      await until(check, what, timeoutMs, 100);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${this.log().slice(-1500)}`);
    }
  }

  async stop(): Promise<void> {
    await this.stopDaemon();
    await this.sub?.close().catch(() => undefined);
    for (const s of this.sims) await s.stop().catch(() => undefined);
    await this.noisyLine?.stop().catch(() => undefined);
    if (this.plug) {
      await this.plug.stop().catch(() => undefined);
      removeDir(this.plug.dir);
    }
    await this.broker?.stop();
    await this.scripted?.stop();
    if (this.mounted) execFileSync('umount', ['-l', this.dataDir]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The fault table as the campaign prints it. */
export function formatRows(rows: readonly FaultRow[]): string {
  const head = ['fault', 'taken', 'delivered', 'held', 'lost', 'duplicates', 'slots missed', 'recover s', 'note'];
  const body = rows.map((r) => [r.fault, String(r.taken), String(r.delivered), String(r.held), String(r.lost), String(r.duplicates), String(r.missedSlots), r.recoverS === null ? 'never' : r.recoverS.toFixed(1), r.note]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}
