// Refused PUBACKs never delete a reading (issue 14, point 1). Against a real mosquitto
// (TLS, password file, ACL): one resource's topic refused by the ACL is held per topic
// while the other resource flows; after the ACL is corrected and reloaded (SIGHUP) and
// `metergate outbox retry` (or a reconnect), every held reading arrives, oldest first,
// none lost, none twice. Against a scripted MQTT 5 peer: the transient codes mosquitto
// cannot be made to send (0x97, 0x80, 0x83) keep every row and retry it in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { validateConfig } from '../../src/config/load.js';
import type { AppContext } from '../../src/context.js';
import { createContext } from '../../src/daemon.js';
import { createLogger } from '../../src/log.js';
import { outboxCheck } from '../../src/ops/doctor/outbox.js';
import { assessHealth } from '../../src/ops/observability/health.js';
import { databasePath, openDatabase } from '../../src/store/db.js';
import { buildUplink, type Uplink, type UplinkOptions } from '../../src/daemon.js';
import { hasMosquitto, startTlsBroker, type BrokerUser, type TlsBroker } from '../helpers/mosquitto.js';
import { startPubackEater } from '../helpers/puback-eater.js';
import { startScriptedBroker, type ScriptedBroker } from '../helpers/scripted-broker.js';
import { subscribe, type Received, type TestSubscriber } from '../helpers/subscriber.js';
import { hourAgo, sample } from '../helpers/uplink-samples.js';
import { until } from '../helpers/wait.js';

const run = promisify(execFile);
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const MINE = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const OTHER = '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f';
const topicOf = (id: string) => `svc/resources/${id}/measurements`;

const sampledAt = (m: Received) => (m.json.data as { sampled_at: string }).sampled_at;
const iso = (ms: number) => new Date(ms).toISOString();

interface Gateway {
  ctx: AppContext;
  uplink: Uplink;
  configFile: string;
  stop(): Promise<void>;
}

async function startGateway(dir: string, name: string, mqtt: Record<string, unknown>, opts: UplinkOptions = {}): Promise<Gateway> {
  const raw = { organization_id: ORG, data_dir: join(dir, name), mqtt: { protocol_version: 5, client_id: `gw-${name}`, reconnect_min_ms: 100, reconnect_max_ms: 400, ...mqtt } };
  const configFile = join(dir, `${name}.yaml`);
  writeFileSync(configFile, JSON.stringify(raw)); // JSON is YAML
  const config = validateConfig(raw, 'test', {});
  const ctx = createContext(config, { db: openDatabase(databasePath(config.data_dir)), logger: createLogger(process.env.TEST_LOG ?? 'warn') });
  const uplink = buildUplink(ctx, opts);
  for (const m of uplink.modules) await m.start();
  return {
    ctx,
    uplink,
    configFile,
    async stop() {
      for (const m of [...uplink.modules].reverse()) await m.stop();
      ctx.db.close();
    },
  };
}

describe.skipIf(!hasMosquitto)('refused by the ACL: held per topic, delivered after the fix (real mosquitto)', () => {
  let broker: TlsBroker;
  let dir: string;
  const cloud: BrokerUser = { username: 'cloud', password: 'cloud-secret', acl: ['topic read svc/resources/#'] };
  const refusing: BrokerUser = { username: 'gateway', password: 'gw-secret', acl: [`topic write ${topicOf(OTHER)}`] };
  const fixed: BrokerUser = { ...refusing, acl: ['topic write svc/resources/#'] };

  beforeAll(async () => {
    broker = await startTlsBroker([refusing, cloud]);
    dir = mkdtempSync(join(tmpdir(), 'mg-refusals-'));
  });

  afterAll(async () => {
    await broker?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the refused topic (0x87) while the other resource flows; after the ACL fix and `metergate outbox retry` every reading arrives oldest first, once', async () => {
    await broker.reloadAcl([refusing, cloud]);
    const sub: TestSubscriber = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: 'svc/resources/+/measurements' });
    // No automatic retry within the test: the command is what delivers here.
    const gw = await startGateway(dir, 'cli', { url: broker.url, username: 'gateway', password: 'gw-secret', ca_file: broker.caFile }, { heldRetry: { minMs: 600_000, maxMs: 600_000 } });
    try {
      await until(() => gw.uplink.publisher!.view().state === 'connected', 'connection');
      const t0 = hourAgo();
      // Readings arrive over time, as from a poller: the refusal comes while later ones are being written.
      for (let i = 0; i < 30; i++) {
        gw.uplink.recorder.record(sample(MINE, t0 + i * 10_000, 1_000 + i));
        gw.uplink.recorder.record(sample(OTHER, t0 + i * 10_000, 5_000 + i));
        if (i % 5 === 4) await new Promise((r) => setTimeout(r, 30));
      }
      const mine = () => sub.messages.filter((m) => m.topic === topicOf(MINE));
      const other = () => sub.messages.filter((m) => m.topic === topicOf(OTHER));
      // The other resource is never held up by the refused one.
      await sub.waitFor(() => other().length >= 30, 'all 30 readings of the other resource');
      await until(() => gw.uplink.outbox.heldCount === 30 && gw.uplink.outbox.depth === 0, 'the 30 refused readings held, nothing left waiting');
      expect(mine()).toHaveLength(0);
      expect(other().map(sampledAt)).toEqual([...Array(30).keys()].map((i) => iso(t0 + i * 10_000)));

      // Visible where an operator looks: /healthz (degraded, count and code), /metrics, doctor.
      // (mosquitto 2.0 closes the connection after each refusal: the link may be up or coming back.)
      const view = gw.uplink.publisher!.view();
      expect(view.heldMessages).toBe(30);
      const health = assessHealth({ nowMs: Date.now(), liveness: { alive: true, loops: [], stale: [] }, meters: null, uplink: view, clock: null, prices: null, maxOutboxAgeMs: 300_000 });
      expect(health.status).toBe('degraded');
      expect(health.components.broker.status).toBe('degraded');
      expect(health.components.broker.reason).toContain(`30 message(s) for ${topicOf(MINE)} held: the broker refused them (0x87 not authorized)`);
      const metrics = await gw.ctx.metrics.metrics();
      expect(metrics).toMatch(/metergate_outbox_held\{reason="refused"\} 30/);
      expect(metrics).toMatch(/metergate_uplink_refused_total\{reason_code="135",outcome="held"\} [1-9]/);
      const doctor = await outboxCheck.run({ configPath: gw.configFile, config: gw.ctx.config, configProblems: [], now: Date.now, timeoutMs: 3000, serviceUser: 'root', results: [] });
      expect(doctor).toEqual([
        expect.objectContaining({ status: 'fail', detail: expect.stringContaining(`30 message(s) for ${topicOf(MINE)}`), fix: expect.stringContaining(`under \`user gateway\`, add the line \`topic write ${topicOf(MINE)}\``) }),
      ]);

      // More readings of the refused resource while it is held: held behind the others, in order.
      for (let i = 30; i < 35; i++) gw.uplink.recorder.record(sample(MINE, t0 + i * 10_000, 1_000 + i));
      await until(() => gw.uplink.outbox.heldCount === 35, 'later readings of the held topic held too');

      // The operator fixes the ACL, reloads mosquitto, and asks the daemon to retry.
      await broker.reloadAcl([fixed, cloud]);
      const cli = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'outbox', 'retry', '-c', gw.configFile], { encoding: 'utf8' });
      expect(cli.stdout).toContain(`35  ${topicOf(MINE)}  refused (0x87 not authorized)`);
      expect(cli.stdout).toContain('retry requested for 35 refused message(s)');
      await sub.waitFor(() => mine().length >= 35, 'every held reading', 30_000);
      await until(() => gw.uplink.outbox.heldCount === 0 && gw.uplink.outbox.depth === 0, 'held and outbox empty');
      await new Promise((r) => setTimeout(r, 300));
      // Every reading, oldest first, none twice, none lost.
      expect(mine().map(sampledAt)).toEqual([...Array(35).keys()].map((i) => iso(t0 + i * 10_000)));
      expect(new Set(mine().map((m) => m.messageId)).size).toBe(35);
      expect(other()).toHaveLength(30);
      expect(gw.uplink.publisher!.view().refusals).toBeNull();
    } finally {
      await sub.close();
      await gw.stop();
    }
  });

  it('retries held messages after every reconnect: the ACL fixed and reloaded, then the link drops, and they arrive without anyone asking', async () => {
    await broker.reloadAcl([refusing, cloud]);
    const proxy = await startPubackEater(broker); // a plain TLS relay here: only dropConnections() is used
    const sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: topicOf(MINE) });
    const gw = await startGateway(dir, 'reconnect', { url: proxy.url, username: 'gateway', password: 'gw-secret', ca_file: broker.caFile });
    try {
      await until(() => gw.uplink.publisher!.view().state === 'connected', 'connection');
      const t0 = hourAgo() + 600_000;
      for (let i = 0; i < 10; i++) gw.uplink.recorder.record(sample(MINE, t0 + i * 10_000, 2_000 + i));
      await until(() => gw.uplink.outbox.heldCount === 10, 'the refused readings held');
      await broker.reloadAcl([fixed, cloud]);
      proxy.dropConnections();
      await sub.waitFor((all) => all.length >= 10, 'the held readings after the reconnect', 30_000);
      await until(() => gw.uplink.outbox.heldCount === 0, 'nothing held');
      await new Promise((r) => setTimeout(r, 300));
      expect(sub.messages.map(sampledAt)).toEqual([...Array(10).keys()].map((i) => iso(t0 + i * 10_000)));
    } finally {
      await sub.close();
      await gw.stop();
      await proxy.stop();
    }
  });

  it('retries a held topic by itself after its backoff: the ACL fixed and reloaded, nothing else happens, and they arrive', async () => {
    await broker.reloadAcl([refusing, cloud]);
    const sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: topicOf(MINE) });
    // A short backoff for the test (the default is 30 s doubling to 10 min).
    const gw = await startGateway(dir, 'timer', { url: broker.url, username: 'gateway', password: 'gw-secret', ca_file: broker.caFile }, { heldRetry: { minMs: 500, maxMs: 1_000 } });
    try {
      await until(() => gw.uplink.publisher!.view().state === 'connected', 'connection');
      const t0 = hourAgo() + 900_000;
      for (let i = 0; i < 6; i++) gw.uplink.recorder.record(sample(MINE, t0 + i * 10_000, 2_500 + i));
      await until(() => gw.uplink.outbox.heldCount === 6, 'the refused readings held');
      await broker.reloadAcl([fixed, cloud]);
      await sub.waitFor((all) => all.length >= 6, 'the held readings after the backoff', 30_000);
      await until(() => gw.uplink.outbox.heldCount === 0, 'nothing held');
      await new Promise((r) => setTimeout(r, 300));
      expect(sub.messages.map(sampledAt)).toEqual([...Array(6).keys()].map((i) => iso(t0 + i * 10_000)));
    } finally {
      await sub.close();
      await gw.stop();
    }
  });

  it('keeps held messages across a restart of the gateway', async () => {
    await broker.reloadAcl([refusing, cloud]);
    const first = await startGateway(dir, 'restart', { url: broker.url, username: 'gateway', password: 'gw-secret', ca_file: broker.caFile });
    const t0 = hourAgo() + 1_200_000;
    try {
      await until(() => first.uplink.publisher!.view().state === 'connected', 'connection');
      for (let i = 0; i < 5; i++) first.uplink.recorder.record(sample(MINE, t0 + i * 10_000, 3_000 + i));
      await until(() => first.uplink.outbox.heldCount === 5, 'held');
    } finally {
      await first.stop();
    }
    await broker.reloadAcl([fixed, cloud]);
    const sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: topicOf(MINE) });
    const second = await startGateway(dir, 'restart', { url: broker.url, username: 'gateway', password: 'gw-secret', ca_file: broker.caFile });
    try {
      await sub.waitFor((all) => all.length >= 5, 'the held readings after the restart');
      await until(() => second.uplink.outbox.heldCount === 0, 'nothing held');
      expect(sub.messages.map(sampledAt)).toEqual([...Array(5).keys()].map((i) => iso(t0 + i * 10_000)));
    } finally {
      await sub.close();
      await second.stop();
    }
  });
});

describe.skipIf(!hasMosquitto)('a clock step back: stored messages stamped ahead of the clock are quarantined, never deleted (real mosquitto)', () => {
  let broker: TlsBroker;
  let dir: string;

  beforeAll(async () => {
    broker = await startTlsBroker([
      { username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] },
      { username: 'cloud', password: 'cloud-secret', acl: ['topic read svc/resources/#'] },
    ]);
    dir = mkdtempSync(join(tmpdir(), 'mg-quarantine-'));
  });

  afterAll(async () => {
    await broker?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('quarantines them (kept, counted, visible) and sends them, oldest first, once released with `outbox retry --clock` after the clock has passed them', async () => {
    // The trusted clock as the gateway sees it: stepped back by an hour, then correct again.
    const behind = { ms: 3_600_000 };
    const clockGate = { trustedNow: () => Date.now() - behind.ms };
    const sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: topicOf(MINE) });
    const gw = await startGateway(dir, 'clock', { url: broker.url, username: 'gateway', password: 'gw-secret', ca_file: broker.caFile }, { clockGate });
    try {
      await until(() => gw.uplink.publisher!.view().state === 'connected', 'connection');
      // Stamped by the clock before its step: now more than step_tolerance_s (60 s) ahead of it.
      const t0 = Math.floor(Date.now() / 1000) * 1000 - 60_000;
      for (let i = 0; i < 5; i++) gw.uplink.recorder.record(sample(MINE, t0 + i * 10_000, 4_000 + i));
      await until(() => gw.uplink.outbox.heldCount === 5 && gw.uplink.outbox.depth === 0, 'five messages quarantined');
      expect(gw.uplink.outbox.heldGroups()).toEqual([expect.objectContaining({ reason: 'clock', topic: topicOf(MINE), count: 5 })]);
      expect(gw.uplink.readings.between(MINE, t0, t0 + 40_000)).toHaveLength(5);
      expect(gw.uplink.publisher!.view().refusals).toContain(`5 message(s) for ${topicOf(MINE)} quarantined: stamped ahead of the trusted clock`);
      const metrics = await gw.ctx.metrics.metrics();
      expect(metrics).toMatch(/metergate_outbox_held\{reason="clock"\} 5/);
      expect(metrics).toMatch(/metergate_uplink_clock_quarantined_total 5/);
      const doctor = await outboxCheck.run({ configPath: gw.configFile, config: gw.ctx.config, configProblems: [], now: Date.now, timeoutMs: 3000, serviceUser: 'root', results: [] });
      expect(doctor).toEqual([expect.objectContaining({ status: 'fail', check: 'outbox clock', fix: expect.stringContaining('metergate outbox retry --clock') })]);
      // Not released by a plain retry (only an operator who vouches for their times does).
      const plain = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'outbox', 'retry', '-c', gw.configFile], { encoding: 'utf8' });
      expect(plain.stdout).toContain('5 message(s) are quarantined for their timestamp: add --clock to release them');
      await new Promise((r) => setTimeout(r, 300));
      expect(sub.messages).toHaveLength(0);
      // The clock has caught up with them (or the operator found them right): released.
      behind.ms = 0;
      const released = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'outbox', 'retry', '--clock', '-c', gw.configFile], { encoding: 'utf8' });
      expect(released.stdout).toContain('retry requested for 0 refused and 5 quarantined message(s)');
      await sub.waitFor((all) => all.length >= 5, 'the quarantined messages', 20_000);
      await until(() => gw.uplink.outbox.heldCount === 0 && gw.uplink.outbox.depth === 0, 'nothing held');
      expect(sub.messages.map(sampledAt)).toEqual([0, 1, 2, 3, 4].map((i) => iso(t0 + i * 10_000)));
    } finally {
      await sub.close();
      await gw.stop();
    }
  });
});

describe('transient refusals (0x97, 0x80, 0x83) from a scripted MQTT 5 peer', () => {
  let peer: ScriptedBroker | null = null;
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-transient-'));
  });

  afterAll(async () => {
    await peer?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every row through a burst of refusals, backs off, and delivers all in order', async () => {
    const codes = [0x97, 0x80, 0x83];
    // The first 40 publishes are refused (quota exceeded, unspecified, implementation specific), then all are taken.
    peer = await startScriptedBroker((p) => (p.n <= 40 ? codes[p.n % codes.length] : 0));
    const gw = await startGateway(dir, 'transient', { url: peer.url, ca_file: peer.caFile, inflight_window: 10, reconnect_min_ms: 100, reconnect_max_ms: 300 });
    try {
      const t0 = hourAgo();
      for (let i = 0; i < 60; i++) gw.uplink.recorder.record(sample(i % 2 === 0 ? MINE : OTHER, t0 + i * 5_000, i));
      await until(() => peer!.answered.length >= 10, 'the first refusals');
      // Nothing deleted while the broker refuses (a 0x97 used to empty the outbox).
      expect(gw.uplink.outbox.depth).toBe(60);
      await until(() => peer!.accepted.length >= 60, 'all 60 messages accepted', 30_000);
      await until(() => gw.uplink.outbox.depth === 0, 'outbox empty');
      const stamps = peer.accepted.map((p) => (JSON.parse(p.payload) as { data: { sampled_at: string } }).data.sampled_at);
      expect(stamps).toEqual([...Array(60).keys()].map((i) => iso(t0 + i * 5_000)));
      expect(gw.uplink.outbox.heldCount).toBe(0);
      expect(peer.answered.slice(0, 40).every((c) => c >= 0x80)).toBe(true);
      const metrics = await gw.ctx.metrics.getSingleMetricAsString('metergate_uplink_refused_total');
      for (const code of codes) expect(metrics).toMatch(new RegExp(`reason_code="${code}",outcome="retried"\\} \\d+`));
    } finally {
      await gw.stop();
      await peer.stop();
      peer = null;
    }
  });

  it('treats a refusal not listed as permanent (0x91 packet identifier in use) as transient, and a success code below 0x80 (0x10 no subscribers) as delivered', async () => {
    peer = await startScriptedBroker((p) => (p.n <= 3 ? 0x91 : 0x10));
    const gw = await startGateway(dir, 'unknown', { url: peer.url, ca_file: peer.caFile });
    try {
      const t0 = hourAgo();
      for (let i = 0; i < 5; i++) gw.uplink.recorder.record(sample(MINE, t0 + i * 10_000, i));
      await until(() => peer!.accepted.length >= 5 && gw.uplink.outbox.depth === 0, 'all delivered');
      expect(gw.uplink.outbox.heldCount).toBe(0);
      // Each exactly once. Rows behind a refused one in the same window may be taken before
      // it (the window is 10); the refused ones go again oldest first.
      const stamps = peer.accepted.map((p) => (JSON.parse(p.payload) as { data: { sampled_at: string } }).data.sampled_at);
      expect([...stamps].sort()).toEqual([0, 1, 2, 3, 4].map((i) => iso(t0 + i * 10_000)));
      const retried = stamps.filter((s) => peer!.answered.length > 0 && [0, 1, 2].map((i) => iso(t0 + i * 10_000)).includes(s));
      expect(retried).toEqual([0, 1, 2].map((i) => iso(t0 + i * 10_000)));
    } finally {
      await gw.stop();
      await peer.stop();
      peer = null;
    }
  });
});
