// Several broker nodes (mqtt.urls): three real TLS mosquittos as the nodes, the first with
// a certificate of another CA. `metergate run` skips the node it cannot trust and says so
// for that node, runs on the second, moves to the third when the second goes away, stays
// there when the second comes back, and loses no reading. /healthz, /status.json,
// /metrics and doctor name the node in use and the failed ones with their reasons.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cloudUser, GATEWAY_USER, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto, makeCertificates, startTlsBroker, type BrokerUser, type TlsBroker } from '../helpers/mosquitto.js';
import { hasSocat } from '../helpers/peers.js';
import { subscribe, type TestSubscriber } from '../helpers/subscriber.js';

const MINE = '6b0e2c4a-8f1d-4e3b-9c5a-2d4f6a8c0e1b';
const USERS: BrokerUser[] = [GATEWAY_USER, cloudUser(MINE)];

interface NodeJson {
  node: string;
  state: string;
  last_error: string | null;
  failures: number;
}

describe.skipIf(!hasMosquitto || !hasSocat)('broker nodes: failover between three TLS mosquittos', () => {
  let certDir: string;
  let strange: TlsBroker; // node 1: a certificate this gateway's CA did not sign
  let a: TlsBroker; // node 2
  let b: TlsBroker; // node 3
  let rig: MeterRig;
  const subs: TestSubscriber[] = [];
  let base: string;

  const json = async <T>(path: string): Promise<T> => (await (await fetch(`${base}${path}`)).json()) as T;
  const nodes = async () => (await json<{ uplink: { broker: string; nodes: NodeJson[] } }>('/status.json')).uplink;
  const measurements = (s: TestSubscriber) => s.messages.filter((m) => m.topic.endsWith('/measurements'));
  const sampledAt = (s: TestSubscriber) => measurements(s).map((m) => Date.parse((m.json.data as { sampled_at: string }).sampled_at));
  const waitUntil = async (what: string, ok: () => Promise<boolean>, timeoutMs = 30_000) => {
    const until = Date.now() + timeoutMs;
    while (!(await ok())) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}\n${rig?.daemon.output().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), 'mg-nodes-ca-'));
    const shared = makeCertificates(certDir);
    [strange, a, b] = await Promise.all([
      startTlsBroker(USERS),
      startTlsBroker(USERS, { persistence: true, certificates: shared }),
      startTlsBroker(USERS, { persistence: true, certificates: shared }),
    ]);
    // A persistent subscriber per trusted node: what a node took while its subscriber was away waits for it.
    for (const [n, node] of [a, b].entries()) {
      subs.push(await subscribe({ url: node.url, caFile: shared.ca, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${MINE}/+`, clientId: `cloud-node-${n}` }));
    }
    rig = await startMeterRig({
      tmpPrefix: 'mg-nodes-',
      meters: [{ line: 'pty', args: ['--unit', '1'] }],
      http: true,
      config: ({ meters }) => ({
        poll: { interval_ms: 1000 },
        buses: [{ name: 'line-a', type: 'rtu', port: meters[0].port, timeout_ms: 300 }],
        meters: [{ resource_id: MINE, bus: 'line-a', unit_id: 1, profile: 'sdm630' }],
        mqtt: {
          urls: [strange.url, a.url, b.url],
          username: GATEWAY_USER.username,
          password: GATEWAY_USER.password,
          ca_file: shared.ca,
          reconnect_min_ms: 200,
          reconnect_max_ms: 1000,
          heartbeat_interval_ms: 60000,
        },
      }),
    });
    base = rig.httpBase;
  });

  afterAll(async () => {
    await rig?.stop();
    for (const s of subs) await s.close();
    await Promise.all([strange, a, b].map((n) => n?.stop()));
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  it('skips the untrusted node, names it, fails over when its node goes, stays, loses nothing', { timeout: 120_000 }, async () => {
    const [onA, onB] = subs as [TestSubscriber, TestSubscriber];
    await onA.waitFor(() => measurements(onA).length >= 2, 'measurements on node 2', 30_000);
    expect(measurements(onB)).toEqual([]);

    // Node 1 failed on its certificate, and that is said for node 1.
    const first = await nodes();
    expect(first.broker).toBe(a.url);
    expect(first.nodes.map((n) => [n.node, n.state])).toEqual([
      [strange.url, 'failed'],
      [a.url, 'current'],
      [b.url, 'standby'],
    ]);
    expect(first.nodes[0]!.last_error).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|certificate/i);
    expect(first.nodes[1]!.last_error).toBeNull();
    const health = await json<{ components: { broker: { status: string; reason: string } } }>('/healthz');
    expect(health.components.broker.status).toBe('ok');
    expect(health.components.broker.reason).toContain(`on node 2 of 3 (${a.url})`);
    expect(health.components.broker.reason).toContain(`failed: ${strange.url} (`);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain(`metergate_broker_node_current{node="${a.url}"} 1`);
    expect(metrics).toContain(`metergate_broker_node_current{node="${strange.url}"} 0`);
    expect(metrics).toMatch(new RegExp(`metergate_broker_node_failures\\{node="${strange.url.replace(/[.]/g, '\\.')}"\\} [1-9]`));

    // Node 2 goes away: the gateway moves on to node 3 (node 1 is still untrusted).
    const downAt = Date.now();
    await a.pause();
    await onB.waitFor(() => measurements(onB).length >= 2, 'measurements on node 3 after node 2 stopped', 30_000);
    const moved = await nodes();
    expect(moved.broker).toBe(b.url);
    expect(moved.nodes[1]).toMatchObject({ node: a.url, state: 'failed' });
    expect(moved.nodes[1]!.last_error).toMatch(/connection lost/);

    // Node 2 comes back: the gateway stays on node 3, which works.
    await a.resume();
    const backAt = Date.now();
    await onA.waitFor(() => onA.client.connected, 'the node 2 subscriber back', 30_000);
    const onBNow = measurements(onB).length;
    await onB.waitFor(() => measurements(onB).length >= onBNow + 4, 'more measurements on node 3', 30_000);
    expect(sampledAt(onA).filter((t) => t > backAt)).toEqual([]);
    expect((await nodes()).broker).toBe(b.url);

    // Nothing lost: every reading stored so far arrived on one node or the other.
    await rig.daemon.stop();
    const db = new Database(join(rig.dataDir, 'metergate.db'), { readonly: true, fileMustExist: true });
    const stored = db.prepare('SELECT sampled_at_ms FROM readings WHERE resource_id = ?').pluck().all(MINE) as number[];
    db.close();
    expect(stored.filter((t) => t > downAt).length).toBeGreaterThan(2);
    await waitUntil('every stored reading on a node', async () => {
      const got = new Set([...sampledAt(onA), ...sampledAt(onB)]);
      return stored.every((t) => got.has(t));
    });
  });

  it('doctor checks every node and names the one with the wrong certificate', { timeout: 60_000 }, () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', resolve('src/cli.ts'), 'doctor', '--config', rig.configPath, '--timeout-ms', '3000'], { encoding: 'utf8' });
    const out = r.stdout + r.stderr;
    expect(out).toMatch(/broker node 1.*TLS handshake failed/);
    expect(out).toMatch(/broker node 2.*TLS verified, logged in as gateway/);
    expect(out).toMatch(/broker node 3.*TLS verified/);
    expect(out).toMatch(/broker.*2 of 3 broker nodes take the gateway; node 1 failed/);
  });
});
