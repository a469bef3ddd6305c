// The whole daemon (`metergate run` in its own process) polling two simulated meters on a
// pty, against a real mosquitto (TLS, password file, ACL) whose ACL refuses one meter's
// topics: the other meter is never held up; /healthz, /metrics and /status.json show the
// held messages with their code (to a client on the LAN /healthz says only how many, with no
// topic, resource id or broker host, as /status would not answer it); after the ACL is corrected and reloaded (SIGHUP) and
// `metergate outbox retry`, every stored reading of the refused meter arrives, oldest
// first, once — none lost (issue 14, point 1).
import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto, type BrokerUser } from '../helpers/mosquitto.js';
import { hasSocat } from '../helpers/peers.js';
import { METER_A, METER_B, ORG } from '../helpers/poller-harness.js';
import type { Received } from '../helpers/subscriber.js';
import { until } from '../helpers/wait.js';

const run = promisify(execFile);
const measurements = (id: string) => `svc/resources/${id}/measurements`;
const sampledAt = (m: Received) => Date.parse((m.json.data as { sampled_at: string }).sampled_at);

describe.skipIf(!hasMosquitto || !hasSocat)('a running daemon whose broker refuses one meter by ACL', () => {
  let rig: MeterRig;
  const cloud: BrokerUser = { username: 'cloud', password: 'cloud-pw', acl: ['topic read svc/resources/#'] };
  const refusing: BrokerUser = { username: 'gw', password: 'gw-pw', acl: [`topic write svc/resources/${METER_B}/#`] };
  const fixed: BrokerUser = { ...refusing, acl: ['topic write svc/resources/#'] };

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-refusals-daemon-',
      meters: [{ line: 'pty', args: ['--unit', '1,2'] }],
      broker: { users: [refusing, cloud] },
      subscriber: { username: 'cloud', topic: 'svc/resources/+/measurements' },
      config: ({ meters, httpPort }) => ({
        poll: { interval_ms: 1000 },
        buses: [{ name: 'rs485', type: 'rtu', port: meters[0].port, timeout_ms: 500 }],
        meters: [
          { resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630' },
          { resource_id: METER_B, bus: 'rs485', unit_id: 2, profile: 'sdm630' },
        ],
        mqtt: { reconnect_min_ms: 200, reconnect_max_ms: 1000 },
        http: { host: '0.0.0.0', port: httpPort, allow_plaintext_lan: true },
        prices: { source: 'none', regions: [] },
      }),
    });
  }, 120_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it('holds the refused meter, keeps the other flowing, shows it, and delivers every held reading after the fix', { timeout: 120_000 }, async () => {
    const { sub, broker, daemon, httpBase: base, configPath: configFile, dataDir } = rig;
    const ofA = () => sub.messages.filter((m) => m.topic === measurements(METER_A));
    const ofB = () => sub.messages.filter((m) => m.topic === measurements(METER_B));
    await sub.waitFor(() => ofB().length >= 8, 'the other meter flowing', 60_000);
    // Shown where an operator looks.
    const healthz = async () => (await (await fetch(`${base}/healthz`)).json()) as { status: string; reasons: string[] };
    await until(async () => (await healthz()).reasons.some((r) => r.includes(`${measurements(METER_A)} held: the broker refused them (0x87 not authorized)`)), '/healthz naming the held topic', 30_000);
    const health = await healthz();
    expect(health.status).toBe('degraded');
    expect(health.reasons.join(' ')).not.toContain(`${measurements(METER_B)} held`);
    const status = (await (await fetch(`${base}/status.json`)).json()) as { uplink: { held_messages: number; refusals: string } };
    expect(status.uplink.held_messages).toBeGreaterThan(0);
    expect(status.uplink.refusals).toContain(measurements(METER_A));
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/^metergate_outbox_held\{reason="refused"\} [1-9]\d*$/m);
    // From the LAN (our LAN address as the source, as in http-tls.test.ts): /status.json is
    // refused, and /healthz gives the same verdict naming no topic, resource id or broker.
    const lan = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    if (!lan) throw new Error('this test needs a non-loopback IPv4 address on the machine (none found)');
    const fromLan = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        httpGet(`${base}${path}`, { localAddress: lan }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        }).on('error', reject);
      });
    expect((await fromLan('/status.json')).status).toBe(403);
    for (const path of ['/healthz', '/healthz/ready']) {
      const lanHealth = await fromLan(path);
      expect(lanHealth.status, path).toBe(200);
      expect(JSON.parse(lanHealth.body), path).toMatchObject({ status: 'degraded' });
      expect(lanHealth.body, path).toMatch(/broker: [^"]*\d+ message\(s\) held or refused \(which, on \/status\)/);
      for (const secret of [METER_A, METER_B, ORG, 'svc/resources', 'localhost', `:${new URL(broker.url).port}`]) expect(lanHealth.body, `${path} names ${secret}`).not.toContain(secret);
    }
    expect(ofA()).toHaveLength(0);

    // The other meter was never held up: each of its readings stored up to a few seconds ago has arrived.
    const dbPath = join(dataDir, 'metergate.db');
    const readDb = <T>(fn: (db: Database.Database) => T): T => {
      const db = new Database(dbPath, { readonly: true });
      try {
        return fn(db);
      } finally {
        db.close();
      }
    };
    const stampsOf = (id: string, beforeMs = Number.MAX_SAFE_INTEGER) =>
      readDb((db) => db.prepare('SELECT sampled_at_ms FROM readings WHERE resource_id = ? AND sampled_at_ms < ? ORDER BY sampled_at_ms').pluck().all(id, beforeMs) as number[]);
    const settledB = stampsOf(METER_B, Date.now() - 3_000);
    await sub.waitFor(() => settledB.every((t) => ofB().some((m) => sampledAt(m) === t)), 'every settled reading of the other meter');

    // The operator corrects the ACL, reloads mosquitto, and asks the daemon to retry.
    await broker.reloadAcl([fixed, cloud]);
    const cli = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'outbox', 'retry', '-c', configFile], { encoding: 'utf8' });
    // (A reconnect in between — mosquitto closes the link after each refused heartbeat — may
    // have retried them already: the daemon retries after every reconnect by itself.)
    expect(cli.stdout).toMatch(/retry requested for \d+ refused message\(s\)|no held messages/);
    await until(async () => ((await (await fetch(`${base}/status.json`)).json()) as { uplink: { held_messages: number } }).uplink.held_messages === 0, 'nothing held', 60_000);
    await until(async () => (await healthz()).reasons.every((r) => !r.includes('held')), '/healthz without held messages', 30_000);

    // Stop polling, then compare what the broker delivered with what the daemon stored.
    await daemon.stop();
    const storedA = stampsOf(METER_A);
    const waitingA = readDb((db) =>
      (db.prepare('SELECT payload FROM outbox WHERE topic = ? UNION ALL SELECT payload FROM outbox_held WHERE topic = ?').pluck().all(measurements(METER_A), measurements(METER_A)) as string[]).map(
        (p) => Date.parse((JSON.parse(p) as { data: { sampled_at: string } }).data.sampled_at),
      ),
    );
    await sub.waitFor(() => ofA().length + waitingA.length >= storedA.length, 'the refused meter\'s readings');
    const receivedA = ofA().map(sampledAt);
    expect(storedA.length).toBeGreaterThan(8);
    expect(new Set(ofA().map((m) => m.messageId)).size).toBe(receivedA.length); // none twice
    expect([...receivedA, ...waitingA].sort((a, b) => a - b)).toEqual(storedA); // none lost
    expect(receivedA).toEqual([...receivedA].sort((a, b) => a - b)); // oldest first
  });
});
