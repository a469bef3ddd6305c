// A real broker cluster: three RabbitMQ 3.10 nodes on this machine (MQTT 3.1.1 over TLS,
// passwords, topic permissions, pause_minority; test/helpers/rabbitmq.ts). `metergate run`
// with a simulated meter is given two of the nodes; a subscriber with a persistent session
// captures on the third. The node the gateway is on is killed (SIGKILL) twice, and brought
// back after each; then it is frozen (SIGSTOP: the others declare it down, and once it
// runs again it finds itself the minority and pauses). Every reading stored must arrive;
// duplicates (at-least-once) are counted; the seconds from each fault until a reading
// sampled after it arrives are printed as a table (docs/fleet.md), never asserted.
// Its own CI step, run once (vitest.cluster.config.ts): the nodes boot in 30 s idle, minutes
// on a loaded machine. MQTT 3.1.1 only (RabbitMQ 3.10): a refused publish is not told.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasSocat } from '../helpers/peers.js';
import { hasRabbitmq, startRabbitCluster, type RabbitCluster, type RabbitNode } from '../helpers/rabbitmq.js';
import type { DaemonProcess } from '../helpers/daemon-process.js';
import type { TestSubscriber } from '../helpers/subscriber.js';

const MINE = '7c1d3e5f-9a2b-4c6d-8e0f-1a3b5c7d9e2f';

describe.skipIf(!hasRabbitmq || !hasSocat)('a three-node RabbitMQ cluster: node losses and a partition', () => {
  let cluster: RabbitCluster;
  let rig: MeterRig | undefined;
  let dir: string;
  let daemon: DaemonProcess | undefined;
  let sub: TestSubscriber | undefined;
  let base: string;

  beforeAll(async () => {
    const escaped = MINE.replace(/-/g, '\\-');
    cluster = await startRabbitCluster([
      { username: 'gateway', password: 'gw-secret', topicWrite: '^svc\\.resources\\.', topicRead: '^$' },
      { username: 'cloud', password: 'cloud-secret', topicWrite: '^$', topicRead: `^svc\\.resources\\.${escaped}\\.` },
    ]);
    const [n1, n2, n3] = cluster.nodes as [RabbitNode, RabbitNode, RabbitNode];
    // The gateway is given two of the nodes; the subscriber captures on the third.
    rig = await startMeterRig({
      tmpPrefix: 'mg-cluster-',
      meters: [{ line: 'pty', args: ['--unit', '1'] }],
      subscriber: { url: n3.url, caFile: cluster.caFile, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${MINE}/+`, protocolVersion: 4, clientId: 'cloud-cluster-test' },
      http: true,
      config: ({ meters }) => ({
        poll: { interval_ms: 1000 },
        buses: [{ name: 'line-a', type: 'rtu', port: meters[0].port, timeout_ms: 300 }],
        meters: [{ resource_id: MINE, bus: 'line-a', unit_id: 1, profile: 'sdm630' }],
        mqtt: {
          urls: [n1.url, n2.url],
          username: 'gateway',
          password: 'gw-secret',
          ca_file: cluster.caFile,
          protocol_version: 4,
          keepalive_s: 5,
          reconnect_min_ms: 500,
          reconnect_max_ms: 4000,
          heartbeat_interval_ms: 60000,
        },
      }),
    });
    ({ dir, daemon, sub, httpBase: base } = rig);
  }, 290_000); // three nodes one after the other, then the gateway

  afterAll(async () => {
    await rig?.stop();
    await cluster?.stop();
  });

  it('loses no reading when the gateway\'s node is killed twice and when it is cut off', { timeout: 240_000 }, async () => {
    const s = sub!;
    const arrivals: Array<{ sampledAt: number; at: number }> = [];
    let seen = 0;
    const collect = () => {
      for (; seen < s.messages.length; seen++) {
        const m = s.messages[seen]!;
        if (m.topic.endsWith('/measurements')) arrivals.push({ sampledAt: Date.parse((m.json.data as { sampled_at: string }).sampled_at), at: Date.now() });
      }
    };
    const timer = setInterval(collect, 20);
    const current = async (): Promise<RabbitNode> => {
      const u = ((await (await fetch(`${base}/status.json`)).json()) as { uplink: { state: string; broker: string } }).uplink;
      const node = cluster.nodes.find((n) => n.url === u.broker);
      if (!node || u.state !== 'connected') throw new Error(`gateway not connected to a node: ${JSON.stringify(u)}`);
      return node;
    };
    const publishingAgain = async (faultAt: number, what: string) => {
      await s.waitFor(() => (collect(), arrivals.some((a) => a.sampledAt > faultAt)), `a reading sampled after ${what}`, 90_000);
      return (arrivals.find((a) => a.sampledAt > faultAt)!.at - faultAt) / 1000;
    };
    const rows: Array<[string, string, string]> = [];
    try {
      await s.waitFor(() => (collect(), arrivals.length >= 3), 'readings through the cluster', 60_000);

      for (const k of [1, 2]) {
        const node = await current();
        const at = Date.now();
        await node.kill();
        const seconds = await publishingAgain(at, `kill ${k} of ${node.name}`);
        const now = await current();
        expect(now).not.toBe(node);
        rows.push([`kill -9 of the gateway's node (${k})`, node.name.split('@')[0]!, seconds.toFixed(1)]);
        await node.start(); // back in the cluster before the next fault (two of three keep the majority)
      }

      const cut = await current();
      const at = Date.now();
      cut.freeze();
      const seconds = await publishingAgain(at, `the freeze of ${cut.name}`);
      expect(await current()).not.toBe(cut);
      rows.push(['partition: gateway\'s node frozen (minority)', cut.name.split('@')[0]!, seconds.toFixed(1)]);
      cut.thaw();
      // The node back in the minority pauses (pause_minority) or rejoins; the gateway stays where it is.
      const after = arrivals.length;
      await s.waitFor(() => (collect(), arrivals.length >= after + 5), 'readings after the frozen node ran again', 60_000);
      expect(await current()).not.toBe(cut);
    } finally {
      clearInterval(timer);
    }

    await daemon!.stop();
    const db = new Database(join(dir, 'data', 'metergate.db'), { readonly: true, fileMustExist: true });
    const stored = db.prepare('SELECT sampled_at_ms FROM readings WHERE resource_id = ?').pluck().all(MINE) as number[];
    db.close();
    // What the gateway had sent when it stopped is on the way to the subscriber: wait for all of it.
    await s.waitFor(() => (collect(), stored.every((t) => arrivals.some((a) => a.sampledAt === t))), `all ${stored.length} stored readings at the subscriber`, 60_000).catch(() => undefined);
    collect();
    const got = new Set(arrivals.map((a) => a.sampledAt));
    const lost = stored.filter((t) => !got.has(t));
    const duplicates = arrivals.length - got.size;
    console.log(
      [
        `cluster: ${stored.length} readings stored, ${arrivals.length} arrivals, ${lost.length} lost, ${duplicates} duplicate(s) (MQTT 3.1.1 QoS 1, at least once)`,
        '| fault | node | seconds until a later reading arrived |',
        '|---|---|---|',
        ...rows.map((r) => `| ${r.join(' | ')} |`),
      ].join('\n'),
    );
    expect(lost.map((t) => new Date(t).toISOString())).toEqual([]);
  });
});
