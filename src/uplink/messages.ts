// Message builders (pure): domain values in, contract-shaped JSON objects out.
import type { MeterSample } from '../domain.js';

/** RFC 3339 UTC with millisecond fraction, e.g. 2026-11-23T10:00:00.000Z. */
export const utcIso = (ms: number): string => new Date(ms).toISOString();

export interface MeasurementMessage {
  readonly message_type: 'measurement';
  readonly resource_id: string;
  readonly organization_id: string;
  readonly data: {
    readonly sampled_at: string;
    readonly metrics: ReadonlyArray<{ readonly name: string; readonly value: number; readonly unit: string }>;
  };
}

export function buildMeasurement(organizationId: string, sample: MeterSample): MeasurementMessage {
  return {
    message_type: 'measurement',
    resource_id: sample.resourceId,
    organization_id: organizationId,
    data: {
      sampled_at: utcIso(sample.sampledAtMs),
      // Only the three contract fields, whatever else a Metric object may carry.
      metrics: sample.metrics.map((m) => ({ name: m.name, value: m.value, unit: m.unit })),
    },
  };
}

export interface HeartbeatMessage {
  readonly message_type: 'heartbeat';
  readonly resource_id: string;
  readonly organization_id: string;
  readonly published_at: string;
}

export function buildHeartbeat(organizationId: string, resourceId: string, publishedAtMs: number): HeartbeatMessage {
  return { message_type: 'heartbeat', resource_id: resourceId, organization_id: organizationId, published_at: utcIso(publishedAtMs) };
}

export interface GatewayInfo {
  readonly id: string;
  readonly hostname: string;
  readonly software_version: string;
  readonly os: string;
  readonly node_version: string;
}

export interface MeterInfo {
  readonly profile: string;
  readonly vendor: string;
  readonly model: string;
  readonly unit_id: number;
  readonly bus: string;
  readonly serial_number: string | null;
  readonly firmware: string | null;
}

export interface BootNotificationMessage {
  readonly message_type: 'boot_notification';
  readonly resource_id: string;
  readonly organization_id: string;
  readonly booted_at: string;
  readonly gateway: GatewayInfo;
  readonly meter: MeterInfo;
}

export function buildBootNotification(input: {
  organizationId: string;
  resourceId: string;
  bootedAtMs: number;
  gateway: GatewayInfo;
  meter: MeterInfo;
}): BootNotificationMessage {
  return {
    message_type: 'boot_notification',
    resource_id: input.resourceId,
    organization_id: input.organizationId,
    booted_at: utcIso(input.bootedAtMs),
    gateway: { ...input.gateway },
    meter: { ...input.meter },
  };
}

export interface NetworkInterfaceInfo {
  readonly name: string;
  readonly mac: string;
  readonly ipv4: readonly string[];
  readonly ipv6: readonly string[];
}

export interface ModbusBusInfo {
  readonly bus: string;
  readonly port: string;
  readonly unit_ids: readonly number[];
  readonly devices: ReadonlyArray<{ readonly unit_id: number; readonly profile: string | null }>;
}

/** What a network scan reports, without its timestamp: "changed" means this changed. */
export interface NetworkScanContent {
  readonly interfaces: readonly NetworkInterfaceInfo[];
  readonly modbus: readonly ModbusBusInfo[];
}

export interface NetworkScanMessage extends NetworkScanContent {
  readonly message_type: 'network_scan';
  readonly resource_id: string;
  readonly organization_id: string;
  readonly scanned_at: string;
}

export function buildNetworkScan(organizationId: string, resourceId: string, scannedAtMs: number, content: NetworkScanContent): NetworkScanMessage {
  return {
    message_type: 'network_scan',
    resource_id: resourceId,
    organization_id: organizationId,
    scanned_at: utcIso(scannedAtMs),
    interfaces: content.interfaces.map((i) => ({ name: i.name, mac: i.mac, ipv4: [...i.ipv4], ipv6: [...i.ipv6] })),
    modbus: content.modbus.map((b) => ({
      bus: b.bus,
      port: b.port,
      unit_ids: [...b.unit_ids],
      devices: b.devices.map((d) => ({ unit_id: d.unit_id, profile: d.profile })),
    })),
  };
}
