// network_scan from `metergate run` against real peers: complete content (interfaces with
// MAC and addresses; per bus what answered and with which profile), valid against its
// schema, retained, and published again when it changes: meters go silent, one returns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageProblems } from '../../src/uplink/validate.js';
import { GATEWAY_USER, cloudUser, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { METER_A, METER_B } from '../helpers/poller-harness.js';
import { subscribe, type Received } from '../helpers/subscriber.js';
import { hasSocat } from '../helpers/peers.js';

if (!hasMosquitto || !hasSocat) console.warn('network scan test skipped: needs mosquitto and socat (scripts/install-test-deps)');

interface Scan {
  scanned_at: string;
  interfaces: Array<{ name: string; mac: string; ipv4: string[]; ipv6: string[] }>;
  modbus: Array<{ bus: string; port: string; unit_ids: number[]; devices: Array<{ unit_id: number; profile: string | null }> }>;
}
const scansOf = (all: readonly Received[], resource: string) => all.filter((m) => m.topic === `svc/resources/${resource}/network_scans`).map((m) => m.json as unknown as Scan);
const unitIds = (s: Scan) => s.modbus.find((b) => b.bus === 'rs485')!.unit_ids;

describe.skipIf(!hasMosquitto || !hasSocat)('network_scan of a running daemon', () => {
  let rig: MeterRig;

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-netscan-',
      meters: [{ line: 'pty', args: ['--unit', '1:sdm630,2:sdm120'] }],
      broker: { users: [GATEWAY_USER, cloudUser()] },
      config: ({ meters }) => ({
        poll: { interval_ms: 1000, offline_after_misses: 2, reprobe_initial_ms: 1000, reprobe_max_ms: 2000 },
        buses: [
          { name: 'rs485', type: 'rtu', port: meters[0].port, timeout_ms: 400, retries: 0 },
          { name: 'cabinet', type: 'tcp', host: '127.0.0.1', tcp_port: 1 },
        ],
        meters: [
          { resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630' },
          { resource_id: METER_B, bus: 'rs485', unit_id: 2, profile: 'sdm120' },
        ],
        mqtt: { reconnect_min_ms: 200, reconnect_max_ms: 1000 },
      }),
      subscriber: { username: 'cloud', topic: 'svc/resources/+/network_scans' },
    });
  }, 120_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it('is complete and valid, and is published again (retained) each time what answers changes', { timeout: 180_000 }, async () => {
    const { broker, sub, meters } = rig!;
    const line = meters[0];
    await sub.waitFor((all) => scansOf(all, METER_A).some((s) => unitIds(s).length === 2), 'a scan with both meters', 60_000);
    const first = scansOf(sub.messages, METER_A).find((s) => unitIds(s).length === 2)!;
    expect(messageProblems('network_scan', first)).toEqual([]);
    expect(first.interfaces.length).toBeGreaterThan(0);
    for (const i of first.interfaces) {
      expect(i.mac).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
      expect(i.ipv4.length + i.ipv6.length).toBeGreaterThan(0);
    }
    expect(first.modbus).toEqual([
      { bus: 'cabinet', port: '127.0.0.1:1', unit_ids: [], devices: [] }, // configured, nothing answers
      { bus: 'rs485', port: line.port, unit_ids: [1, 2], devices: [{ unit_id: 1, profile: 'sdm630' }, { unit_id: 2, profile: 'sdm120' }] },
    ]);
    // Every resource of the gateway carries the same scan.
    await sub.waitFor((all) => scansOf(all, METER_B).some((s) => unitIds(s).length === 2), 'the scan for the second resource');

    // The line goes dead: both meters go offline, the scan says so.
    await line.sim.stop();
    await sub.waitFor((all) => scansOf(all, METER_A).some((s) => unitIds(s).length === 0), 'a scan with nothing answering', 90_000);

    // One meter comes back.
    await rig.restartSim(0, ['--unit', '1:sdm630']);
    await sub.waitFor((all) => {
      const scans = scansOf(all, METER_A);
      const emptyAt = scans.findIndex((s) => unitIds(s).length === 0);
      return scans.slice(emptyAt + 1).some((s) => unitIds(s).join() === '1');
    }, 'a scan with unit 1 back', 90_000);
    const latest = scansOf(sub.messages, METER_A).at(-1)!;
    expect(messageProblems('network_scan', latest)).toEqual([]);

    // A subscriber arriving now gets the latest content as the retained message.
    const late = await subscribe({ url: broker.url, caFile: broker.caFile, username: 'cloud', password: cloudUser().password, topic: `svc/resources/${METER_A}/network_scans` });
    try {
      await late.waitFor((all) => all.length > 0, 'the retained scan');
      expect(late.messages[0].retain).toBe(true);
      expect(unitIds(late.messages[0].json as unknown as Scan)).toEqual([1]);
    } finally {
      await late.close();
    }
  });
});
