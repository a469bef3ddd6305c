// The demo's console line for each message it receives (src/demo/message-line.ts): one line
// by default with the topic, the schema verdict and the fields a person looks for; the
// whole JSON with --json. Messages made by the gateway's own builders and checked against
// their schemas, as the demo's subscriber gets them.
import { describe, expect, it } from 'vitest';
import { messageLines, readable, type ReceivedMessage } from '../../src/demo/message-line.js';
import { buildBootNotification, buildHeartbeat, buildMeasurement, buildNetworkScan } from '../../src/uplink/messages.js';
import { topicFor } from '../../src/uplink/topics.js';
import { messageProblems, type MessageType } from '../../src/uplink/validate.js';

const ORG = '5b0d7c3e-0f4e-4c1a-9d7e-3a2b1c0d9e8f';
const METER = '6f9a2c1e-4b3d-4e8f-9a0b-1c2d3e4f5a6b';
const AT = Date.parse('2026-11-29T06:00:20.133Z');

const received = (type: MessageType, json: unknown, retained = false): ReceivedMessage => ({
  topic: topicFor('svc', METER, type),
  type,
  json,
  retained,
  problems: messageProblems(type, json),
});

const measurement = buildMeasurement(ORG, {
  resourceId: METER,
  sampledAtMs: AT,
  metrics: [
    { name: 'voltage_l1', value: 229.8289, unit: 'V' },
    { name: 'total_active_power', value: 3070.685, unit: 'W' },
    { name: 'active_energy_import', value: 3808222, unit: 'Wh' },
    { name: 'power_factor', value: -0.987, unit: '1' },
  ],
});

describe('the demo prints a message', () => {
  it('as one line by default: topic, verdict, time and each reading rounded with its unit', () => {
    const m = received('measurement', measurement);
    expect(m.problems).toEqual([]);
    expect(messageLines(m, false)).toEqual([
      `<- svc/resources/${METER}/measurements  [schema-valid]  sampled 06:00:20.133Z: voltage_l1 229.83 V, total_active_power 3071 W, active_energy_import 3808222 Wh, power_factor -0.99 1`,
    ]);
  });

  it('in full with --json: the line, then the JSON a subscriber receives', () => {
    const lines = messageLines(received('measurement', measurement), true);
    expect(lines[0]).toBe(`<- svc/resources/${METER}/measurements  [schema-valid]`);
    expect(lines.length).toBeGreaterThan(20);
    expect(JSON.parse(lines.slice(1).join('\n'))).toEqual(measurement);
  });

  it('one line for each other message type, with what identifies it', () => {
    const heartbeat = buildHeartbeat(ORG, METER, AT);
    const boot = buildBootNotification({
      organizationId: ORG,
      resourceId: METER,
      bootedAtMs: AT,
      gateway: { id: 'metergate-demo', hostname: 'vm', software_version: '0.1.0', os: 'linux 6.1', node_version: '20.20.2' },
      meter: { profile: 'sdm630', vendor: 'Eastron', model: 'SDM630', unit_id: 1, bus: 'sim', serial_number: null, firmware: null },
    });
    const scan = buildNetworkScan(ORG, METER, AT, {
      interfaces: [
        { name: 'eth0', mac: '02:fc:00:00:00:01', ipv4: ['192.0.2.2'], ipv6: ['fd00::2'] },
        { name: 'wlan0', mac: '02:fc:00:00:00:02', ipv4: [], ipv6: ['fd00::3'] },
      ],
      modbus: [{ bus: 'sim', port: '127.0.0.1:1502', unit_ids: [1, 2], devices: [{ unit_id: 1, profile: 'sdm630' }, { unit_id: 2, profile: null }] }],
    });
    const lines = [received('heartbeat', heartbeat), received('boot_notification', boot, true), received('network_scan', scan)].map((m) => {
      expect(m.problems).toEqual([]);
      const out = messageLines(m, false);
      expect(out).toHaveLength(1);
      return out[0];
    });
    expect(lines).toEqual([
      `<- svc/resources/${METER}/heartbeats  [schema-valid]  published 06:00:20.133Z`,
      `<- svc/resources/${METER}/boot_notifications  [retained, schema-valid]  booted 06:00:20.133Z: Eastron SDM630 unit 1 on bus sim, gateway metergate-demo (metergate 0.1.0, Node 20.20.2)`,
      `<- svc/resources/${METER}/network_scans  [schema-valid]  scanned 06:00:20.133Z: eth0 192.0.2.2; wlan0 fd00::3; bus sim (127.0.0.1:1502): unit 1 sdm630, unit 2 unknown`,
    ]);
  });

  it('a message that breaks its schema: its problems and the JSON as it came, on one line', () => {
    const broken = { ...measurement, data: { sampled_at: measurement.data.sampled_at } };
    const m = received('measurement', broken);
    expect(m.problems.length).toBeGreaterThan(0);
    const [line, ...rest] = messageLines(m, false);
    expect(rest).toEqual([]);
    expect(line).toContain('[SCHEMA PROBLEMS: ');
    expect(line!.endsWith(`  ${JSON.stringify(broken)}`)).toBe(true);
  });

  it('rounds readings for the eye only', () => {
    expect([readable(3808222), readable(3070.685), readable(-1500.5), readable(999.999), readable(4.493631), readable(-0.987), readable(0)]).toEqual(['3808222', '3071', '-1500', '1000', '4.49', '-0.99', '0']);
  });
});
