// The whole pipeline against real peers: simulated SDM630s as Modbus RTU slaves behind
// socat pty pairs, `metergate run` as its own process, mosquitto with TLS, a password
// file and an ACL that lets the subscriber read only svc/resources/<its id>/#.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageProblems } from '../../src/uplink/validate.js';
import { cloudUser, GATEWAY_USER, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import type { DaemonProcess } from '../helpers/daemon-process.js';
import { hasMosquitto, type TlsBroker } from '../helpers/mosquitto.js';
import { ORG } from '../helpers/poller-harness.js';
import type { SimProcess } from '../helpers/sim-process.js';
import { subscribe, type TestSubscriber } from '../helpers/subscriber.js';
import { until } from '../helpers/wait.js';

const MINE = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const OTHER = '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f';

describe.skipIf(!hasMosquitto)('pipeline: RTU meters -> SQLite -> TLS MQTT, as a subscriber sees it', () => {
  let rig: MeterRig;
  let broker: TlsBroker;
  let sims: SimProcess[];
  let daemon: DaemonProcess;
  let sub: TestSubscriber;

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-pipeline-',
      broker: { users: [GATEWAY_USER, cloudUser(MINE), { username: 'operator', password: 'op-secret', acl: ['topic read svc/resources/#'] }] },
      meters: [
        { line: 'pty', args: ['--unit', '1'] },
        { line: 'pty', args: ['--unit', '2'] },
      ],
      config: ({ meters }) => ({
        poll: { interval_ms: 1000 },
        buses: [
          { name: 'line-a', type: 'rtu', port: meters[0].port, baud_rate: 9600, parity: 'even', timeout_ms: 300 },
          { name: 'line-b', type: 'rtu', port: meters[1].port, baud_rate: 9600, parity: 'even', timeout_ms: 300 },
        ],
        meters: [
          { resource_id: MINE, bus: 'line-a', unit_id: 1, profile: 'sdm630', extra_metrics: ['voltage_l1', 'frequency'] },
          { resource_id: OTHER, bus: 'line-b', unit_id: 2, profile: 'sdm630' },
        ],
        mqtt: { heartbeat_interval_ms: 2000, reconnect_min_ms: 200, reconnect_max_ms: 1000 },
      }),
      subscriber: { username: 'cloud', topic: 'svc/resources/+/+' },
      http: true,
    });
    [broker, daemon, sub, sims] = [rig.broker, rig.daemon, rig.sub, rig.meters.map((m) => m.sim)];
  });

  afterAll(async () => {
    await rig?.stop();
  });

  it('delivers valid measurements, heartbeats and the retained boot notification of its own resource only', async () => {
    const of = (type: string) => sub.messages.filter((m) => m.topic.endsWith(`/${type}`));
    await sub.waitFor(() => of('measurements').length >= 3 && of('heartbeats').length >= 1 && of('boot_notifications').length >= 1, 'measurements, a heartbeat and a boot notification', 40_000);
    expect(sub.messages.every((m) => m.topic.startsWith(`svc/resources/${MINE}/`)), daemon.output()).toBe(true);

    for (const m of of('measurements')) {
      expect(messageProblems('measurement', m.json)).toEqual([]);
      expect(m.retain).toBe(false);
      const names = (m.json.data as { metrics: Array<{ name: string; unit: string }> }).metrics.map((x) => `${x.name}:${x.unit}`);
      expect(names).toEqual(expect.arrayContaining(['total_active_power:W', 'active_energy_import:Wh', 'voltage_l1:V', 'frequency:Hz']));
    }
    for (const m of of('heartbeats')) expect(messageProblems('heartbeat', m.json)).toEqual([]);
    const boot = of('boot_notifications')[0];
    expect(messageProblems('boot_notification', boot.json)).toEqual([]);
    expect(boot.json).toMatchObject({ resource_id: MINE, organization_id: ORG, meter: { profile: 'sdm630', unit_id: 1, bus: 'line-a' } });

    // Measurements come oldest first and energy only grows.
    const sampled = of('measurements').map((m) => (m.json.data as { sampled_at: string }).sampled_at);
    expect(sampled).toEqual([...sampled].sort());

    // A subscriber that arrives later gets the boot notification (and network scan) as retained messages.
    const late = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: 'cloud-secret', topic: `svc/resources/${MINE}/#` });
    try {
      await late.waitFor((all) => all.some((m) => m.topic.endsWith('/boot_notifications')) && all.some((m) => m.topic.endsWith('/network_scans')), 'retained messages');
      const retained = late.messages.filter((m) => m.retain);
      expect(retained.map((m) => m.topic.split('/').pop()).sort()).toEqual(['boot_notifications', 'network_scans']);
      const scan = retained.find((m) => m.topic.endsWith('/network_scans'))!;
      expect(messageProblems('network_scan', scan.json)).toEqual([]);
    } finally {
      await late.close();
    }
  });

  it('a subscriber cannot read another resource, even with a wildcard', async () => {
    await sub.waitFor((all) => all.filter((m) => m.topic.endsWith('/measurements')).length >= 5, 'more measurements');
    expect(sub.messages.some((m) => m.topic.includes(OTHER))).toBe(false);
    // ...and the boot notification came once for this start, not with every poll or reconnect.
    expect(sub.messages.filter((m) => m.topic.endsWith('/boot_notifications'))).toHaveLength(1);
  });

  it('a killed slave: its meter goes offline and its heartbeats stop; the meter on the other bus keeps publishing', { timeout: 90_000 }, async () => {
    const all = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'operator', password: 'op-secret', topic: 'svc/resources/+/+' });
    try {
      const isType = (m: { topic: string }, rid: string, type: string) => m.topic === `svc/resources/${rid}/${type}`;
      await all.waitFor((ms) => ms.some((m) => isType(m, MINE, 'heartbeats')) && ms.some((m) => isType(m, OTHER, 'heartbeats')), 'heartbeats of both');
      await sims[0].kill();
      const killedAt = Date.now();
      // Offline after 3 missed polls (1 s apart, 300 ms timeout, 1 retry). Waited for as the
      // daemon says it (not assumed within a time): from then on it sends no heartbeat of it.
      const stateOf = async (rid: string) =>
        ((await (await fetch(`${rig.httpBase}/status.json`)).json()) as { meters: Array<{ resource_id: string; state: string }> }).meters.find((m) => m.resource_id === rid)?.state;
      await until(async () => (await stateOf(MINE)) === 'offline', 'the killed meter offline on /status.json');
      const settledAt = Date.now();
      const after = (rid: string, type: string, from: number) =>
        all.messages.filter((m) => isType(m, rid, type) && Date.parse(String(type === 'measurements' ? (m.json.data as { sampled_at: string }).sampled_at : m.json.published_at)) > from);
      // Heartbeats do not go through the outbox with the measurements: waited for on their own.
      await all.waitFor(() => after(OTHER, 'measurements', settledAt + 4_000).length >= 1 && after(OTHER, 'heartbeats', settledAt).length >= 1, 'the other meter to keep publishing for a while after', 40_000);
      expect(after(MINE, 'heartbeats', settledAt)).toEqual([]);
      expect(after(MINE, 'measurements', killedAt + 1_000)).toEqual([]);
      expect(after(OTHER, 'heartbeats', settledAt).length).toBeGreaterThanOrEqual(1);
      expect(after(OTHER, 'measurements', settledAt).length).toBeGreaterThanOrEqual(3);
    } finally {
      await all.close();
    }
  });
});
