import { describe, expect, it } from 'vitest';
import { buildBootNotification, buildHeartbeat, buildMeasurement, buildNetworkScan } from '../../src/uplink/messages.js';
import { topicFor } from '../../src/uplink/topics.js';
import { messageProblems } from '../../src/uplink/validate.js';
import { assertTlsUrl, InsecureBrokerUrlError, redactUrl } from '../../src/uplink/connection.js';
import { reconnectDelayMs } from '../../src/uplink/backoff.js';
import { TokenBucket } from '../../src/uplink/token-bucket.js';
import { leaveVerdict } from '../../src/uplink/clock-gate.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const RID = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const T = Date.parse('2026-11-23T10:00:10.123Z');

describe('message builders and schemas', () => {
  it('builds a measurement exactly in the contract shape', () => {
    const m = buildMeasurement(ORG, {
      resourceId: RID,
      sampledAtMs: T,
      metrics: [
        { name: 'total_active_power', value: 1500.25, unit: 'W' },
        { name: 'active_energy_import', value: 123456789, unit: 'Wh' },
      ],
    });
    expect(m).toEqual({
      message_type: 'measurement',
      resource_id: RID,
      organization_id: ORG,
      data: {
        sampled_at: '2026-11-23T10:00:10.123Z',
        metrics: [
          { name: 'total_active_power', value: 1500.25, unit: 'W' },
          { name: 'active_energy_import', value: 123456789, unit: 'Wh' },
        ],
      },
    });
    expect(messageProblems('measurement', m)).toEqual([]);
  });

  it('refuses what the contract forbids', () => {
    const ok = buildMeasurement(ORG, { resourceId: RID, sampledAtMs: T, metrics: [{ name: 'total_active_power', value: 1, unit: 'W' }] });
    const bad = (patch: (m: Record<string, any>) => void) => {
      const copy = structuredClone(ok) as Record<string, any>;
      patch(copy);
      return messageProblems('measurement', copy);
    };
    expect(bad((m) => (m.extra = 1))).toContain('extra: is not a known setting');
    expect(bad((m) => (m.data.extra = 1)).length).toBeGreaterThan(0);
    expect(bad((m) => (m.data.metrics[0].extra = 1)).length).toBeGreaterThan(0);
    expect(bad((m) => (m.data.metrics = []))).toContain('data.metrics: must NOT have fewer than 1 items');
    expect(bad((m) => (m.data.sampled_at = '2026-11-23T10:00:10Z')).length).toBeGreaterThan(0); // fraction required
    expect(bad((m) => (m.data.sampled_at = '2026-11-23T11:00:10.123+01:00')).length).toBeGreaterThan(0); // UTC only
    expect(bad((m) => (m.data.sampled_at = '2026-11-23T10:00:10.123456789Z'))).toEqual([]); // nanoseconds allowed
    expect(bad((m) => (m.resource_id = 'meter-1'))).toContain('resource_id: must match format "uuid"');
    expect(bad((m) => (m.data.metrics[0].value = '1'))).toContain('data.metrics[0].value: must be number');
    expect(bad((m) => (m.data.metrics[0].unit = ''))).toContain('data.metrics[0].unit: must NOT have fewer than 1 characters');
    expect(bad((m) => (m.message_type = 'heartbeat'))).toContain('message_type: must be equal to constant');
  });

  it('builds valid heartbeat, boot notification and network scan messages', () => {
    expect(messageProblems('heartbeat', buildHeartbeat(ORG, RID, T))).toEqual([]);
    const boot = buildBootNotification({
      organizationId: ORG,
      resourceId: RID,
      bootedAtMs: T,
      gateway: { id: 'gw-1', hostname: 'pi', software_version: '0.1.0', os: 'linux 6.1', node_version: '20.20.2' },
      meter: { profile: 'sdm630', vendor: 'Eastron', model: 'SDM630', unit_id: 1, bus: 'rs485-1', serial_number: null, firmware: null },
    });
    expect(messageProblems('boot_notification', boot)).toEqual([]);
    expect(messageProblems('boot_notification', { ...boot, gateway: { ...boot.gateway, extra: 1 } }).length).toBeGreaterThan(0);
    const scan = buildNetworkScan(ORG, RID, T, {
      interfaces: [{ name: 'eth0', mac: 'dc:a6:32:01:02:03', ipv4: ['192.168.1.20'], ipv6: ['fe80::dea6:32ff:fe01:203'] }],
      modbus: [{ bus: 'rs485-1', port: '/dev/ttyUSB0', unit_ids: [1, 2], devices: [{ unit_id: 1, profile: 'sdm630' }, { unit_id: 2, profile: null }] }],
    });
    expect(messageProblems('network_scan', scan)).toEqual([]);
    expect(messageProblems('network_scan', { ...scan, interfaces: [{ name: 'eth0', mac: 'x', ipv4: [], ipv6: [] }] }).length).toBeGreaterThan(0);
  });

  it('names topics svc/resources/{id}/{type}s', () => {
    expect(topicFor('svc', RID, 'measurement')).toBe(`svc/resources/${RID}/measurements`);
    expect(topicFor('site/7/', RID, 'boot_notification')).toBe(`site/7/resources/${RID}/boot_notifications`);
    expect(topicFor('svc', RID, 'network_scan')).toBe(`svc/resources/${RID}/network_scans`);
    expect(topicFor('svc', RID, 'heartbeat')).toBe(`svc/resources/${RID}/heartbeats`);
  });
});

describe('connection rules', () => {
  it('refuses anything but mqtts://', () => {
    expect(() => assertTlsUrl('mqtt://broker:1883')).toThrow(InsecureBrokerUrlError);
    expect(() => assertTlsUrl('mqtt://broker:1883')).toThrow(/only mqtts:\/\/ is accepted/);
    expect(() => assertTlsUrl('ws://broker')).toThrow(InsecureBrokerUrlError);
    expect(() => assertTlsUrl('not a url')).toThrow(InsecureBrokerUrlError);
    expect(assertTlsUrl('mqtts://broker:8883').port).toBe('8883');
  });

  it('never shows credentials in the broker URL', () => {
    expect(redactUrl('mqtts://user:secret@broker:8883')).toBe('mqtts://broker:8883');
  });

  it('backs off exponentially with full jitter between min and max', () => {
    const p = { minMs: 1000, maxMs: 60_000 };
    expect(reconnectDelayMs(p, 0, 0)).toBe(1000);
    expect(reconnectDelayMs(p, 0, 0.999)).toBe(1000);
    expect(reconnectDelayMs(p, 3, 0.999)).toBeLessThanOrEqual(8000);
    expect(reconnectDelayMs(p, 3, 0.5)).toBe(4500);
    expect(reconnectDelayMs(p, 50, 0.999)).toBeLessThanOrEqual(60_000);
    expect(reconnectDelayMs(p, 50, 0.999)).toBeGreaterThan(59_000);
    expect(reconnectDelayMs(p, 50, 0)).toBe(1000);
  });

  it('paces the backlog with a token bucket', () => {
    const b = new TokenBucket(10, 2, 0);
    expect(b.take(0)).toBe(true);
    expect(b.take(0)).toBe(true);
    expect(b.take(0)).toBe(false);
    expect(b.waitMs(0)).toBe(100);
    expect(b.take(100)).toBe(true);
    expect(b.take(10_000) && b.take(10_000) && !b.take(10_000)).toBe(true); // burst caps the refill
  });

  it('lets a message leave only with a trusted clock and a possible timestamp', () => {
    const build = Date.parse('2026-11-01T00:00:00Z');
    const trusted = { trustedNow: () => T };
    expect(leaveVerdict(trusted, build, T - 1000)).toBe('send');
    expect(leaveVerdict({ trustedNow: () => null }, build, T - 1000)).toBe('hold');
    expect(leaveVerdict(trusted, build, Date.parse('1970-01-01T00:00:10Z'))).toBe('quarantine');
    expect(leaveVerdict(trusted, build, Date.parse('2026-09-01T00:00:00Z'))).toBe('send'); // a backlog older than this build
    expect(leaveVerdict(trusted, build, T + 86_400_000)).toBe('quarantine');
  });
});
