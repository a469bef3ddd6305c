// Broker stopped for 30 s then restarted: every reading sampled meanwhile arrives, oldest
// first, none lost. The subscriber keeps a persistent session (mosquitto persistence), so
// what the gateway publishes before the subscriber is back waits for it on the broker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { messageProblems } from '../../src/uplink/validate.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { hasMosquitto, startTlsBroker, type TlsBroker } from '../helpers/mosquitto.js';
import { startSim, type SimProcess } from '../helpers/sim-process.js';
import { removeDir, startPtyPair, type PtyPair } from '../helpers/socat.js';
import { subscribe, type TestSubscriber } from '../helpers/subscriber.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const MINE = '2d4f6a8c-0e1b-4d3f-9a5c-7e9b1d3f5a7c';
const OUTAGE_MS = 30_000;

describe.skipIf(!hasMosquitto)('broker outage of 30 s', () => {
  let broker: TlsBroker;
  let dir: string;
  let pty: PtyPair;
  let sim: SimProcess;
  let daemon: DaemonProcess | undefined;
  let sub: TestSubscriber | undefined;

  beforeAll(async () => {
    broker = await startTlsBroker(
      [
        { username: 'gateway', password: 'gw-secret', acl: ['topic write svc/resources/#'] },
        { username: 'cloud', password: 'cloud-secret', acl: [`topic read svc/resources/${MINE}/#`] },
      ],
      { persistence: true },
    );
    dir = mkdtempSync(join(tmpdir(), 'mg-outage-'));
    pty = await startPtyPair();
    sim = await startSim(['--serial', pty.b, '--unit', '1']);
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      `organization_id: ${ORG}
data_dir: ${dir}/data
log_level: info
poll: { interval_ms: 1000 }
buses: [{ name: line-a, type: rtu, port: ${pty.a}, timeout_ms: 300 }]
meters: [{ resource_id: ${MINE}, bus: line-a, unit_id: 1, profile: sdm630 }]
mqtt: { url: '${broker.url}', username: gateway, password: gw-secret, ca_file: '${broker.caFile}', reconnect_min_ms: 200, reconnect_max_ms: 1000, heartbeat_interval_ms: 2000 }
clock: { trust: system }
http: { enabled: false }
prices: { source: none }
forecast: { enabled: false }
`,
    );
    sub = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${MINE}/+`, clientId: 'cloud-outage-test' });
    daemon = await startDaemon(config);
  });

  afterAll(async () => {
    await sub?.close();
    await daemon?.stop();
    await sim?.stop();
    if (pty) {
      await pty.stop();
      removeDir(pty.dir);
    }
    await broker?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('delivers every reading sampled during the outage, oldest first, none lost', { timeout: 150_000 }, async () => {
    const measurements = () => sub!.messages.filter((m) => m.topic.endsWith('/measurements'));
    const heartbeatsAt = () => sub!.messages.filter((m) => m.topic.endsWith('/heartbeats')).map((m) => Date.parse(String(m.json.published_at)));
    const sampledAt = () => measurements().map((m) => Date.parse((m.json.data as { sampled_at: string }).sampled_at));
    await sub!.waitFor(() => measurements().length >= 2 && heartbeatsAt().length >= 1, 'measurements and a heartbeat before the outage', 30_000);

    const downAt = Date.now();
    await broker.pause();
    const goneAt = Date.now(); // the broker process has exited
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const restartAt = Date.now(); // no broker to publish to before this
    await broker.resume();
    const upAt = Date.now();

    // What the gateway stored while the broker was away (read-only look at its database).
    const db = new Database(join(dir, 'data', 'metergate.db'), { readonly: true, fileMustExist: true });
    const stored = (db.prepare('SELECT sampled_at_ms FROM readings WHERE resource_id = ? AND sampled_at_ms > ? AND sampled_at_ms < ? ORDER BY sampled_at_ms').pluck().all(MINE, downAt, upAt) as number[]);
    db.close();
    expect(stored.length, daemon!.output()).toBeGreaterThanOrEqual(20); // ~1 a second

    await sub!.waitFor(
      () => {
        const got = new Set(sampledAt());
        return stored.every((t) => got.has(t));
      },
      `all ${stored.length} readings sampled during the outage`,
      40_000,
    );
    for (const m of measurements()) expect(messageProblems('measurement', m.json)).toEqual([]);

    // Oldest first: in arrival order (first arrival of each), the outage readings are sorted.
    const seen = new Set<number>();
    const outageOrder = sampledAt().filter((t) => t > downAt && t < upAt && !seen.has(t) && seen.add(t));
    expect(outageOrder).toEqual([...stored]);

    // Heartbeats only while connected: none stamped while the broker was away is sent later
    // (a second of slack after it exited, for one sent before the gateway saw the link drop),
    // and they resume after.
    await sub!.waitFor(() => heartbeatsAt().some((t) => t > upAt), 'a heartbeat after the outage', 20_000);
    expect(heartbeatsAt().filter((t) => t > goneAt + 1000 && t < restartAt).map((t) => new Date(t).toISOString())).toEqual([]);
  });
});
