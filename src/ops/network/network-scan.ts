// The content of the network_scan message: the gateway's network interfaces and what
// answered on each Modbus bus. Pure helpers plus a small module that re-checks the content
// periodically and when a meter changes state, and emits network.changed (the uplink builds,
// stores and publishes the retained message) only when something changed.
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import type { EventBus } from '../../events.js';
import type { Module } from '../../lifecycle.js';
import type { Logger } from '../../log.js';
import type { Probes } from '../observability/probes.js';
import type { BusScanView } from '../observability/views.js';

export interface InterfaceView {
  readonly name: string;
  /** Lower-case colon notation, as the OS reports it (00:00:00:00:00:00 for tunnels). */
  readonly mac: string;
  readonly ipv4: readonly string[];
  readonly ipv6: readonly string[];
}

export interface NetworkScanContent {
  readonly interfaces: readonly InterfaceView[];
  readonly modbus: readonly BusScanView[];
}

/**
 * os.networkInterfaces() as the message lists it: external interfaces only (loopback
 * says nothing about the site), sorted by name, addresses sorted, link-local IPv6
 * scope ids dropped (they differ per host and would look like changes).
 */
export function describeInterfaces(ifaces: NodeJS.Dict<NetworkInterfaceInfo[]>): InterfaceView[] {
  const out: InterfaceView[] = [];
  for (const [name, addrs] of Object.entries(ifaces)) {
    const list = (addrs ?? []).filter((a) => !a.internal);
    if (list.length === 0) continue;
    const mac = list.map((a) => a.mac.toLowerCase()).find((m) => m && m !== '00:00:00:00:00:00') ?? list[0].mac.toLowerCase();
    const ipv4 = [...new Set(list.filter((a) => a.family === 'IPv4').map((a) => a.address))].sort();
    const ipv6 = [...new Set(list.filter((a) => a.family === 'IPv6').map((a) => a.address.split('%')[0]))].sort();
    out.push({ name, mac, ipv4, ipv6 });
  }
  return out.sort((a, b) => compareCodeUnits(a.name, b.name));
}

function normalizeBuses(buses: readonly BusScanView[]): BusScanView[] {
  return [...buses]
    .map((b) => ({
      bus: b.bus,
      port: b.port,
      unit_ids: [...b.unit_ids].sort((x, y) => x - y),
      devices: [...b.devices].sort((x, y) => x.unit_id - y.unit_id).map((d) => ({ unit_id: d.unit_id, profile: d.profile })),
    }))
    .sort((a, b) => compareCodeUnits(a.bus, b.bus));
}

export function buildScanContent(ifaces: NodeJS.Dict<NetworkInterfaceInfo[]>, buses: readonly BusScanView[]): NetworkScanContent {
  return { interfaces: describeInterfaces(ifaces), modbus: normalizeBuses(buses) };
}

/** A canonical string of the content: equal strings mean nothing worth republishing changed. */
export function scanContentKey(content: NetworkScanContent): string {
  return JSON.stringify(content);
}

export interface NetworkScanWatcherDeps {
  readonly logger: Logger;
  readonly probes: Probes;
  readonly events: EventBus;
  /** How often interfaces are looked at (DHCP renewals, cable plugged in). */
  readonly intervalMs?: number;
  readonly listInterfaces?: () => NodeJS.Dict<NetworkInterfaceInfo[]>;
}

export class NetworkScanWatcher implements Module {
  readonly name = 'network-scan';
  private timer: NodeJS.Timeout | undefined;
  private lastKey: string | null = null;

  constructor(private readonly deps: NetworkScanWatcherDeps) {}

  async start(): Promise<void> {
    this.check();
    this.timer = setInterval(() => this.check(), this.deps.intervalMs ?? 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private compute(): NetworkScanContent {
    return buildScanContent((this.deps.listInterfaces ?? networkInterfaces)(), this.deps.probes.busScan?.() ?? []);
  }

  /** Recomputes; emits network.changed if the content differs from the last one (and the first time). Returns whether it did. */
  check(): boolean {
    const content = this.compute();
    const key = scanContentKey(content);
    if (key === this.lastKey) return false;
    const first = this.lastKey === null;
    this.lastKey = key;
    this.deps.logger.info(
      { interfaces: content.interfaces.map((i) => i.name), buses: content.modbus.map((b) => `${b.bus}:${b.unit_ids.join(',') || '-'}`) },
      first ? 'network scan' : 'network scan changed',
    );
    this.deps.events.emit('network.changed', content);
    return true;
  }
}

/** Plain code-unit order: stable across locales, and localeCompare would load ICU collation data (resident memory) into the daemon. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
