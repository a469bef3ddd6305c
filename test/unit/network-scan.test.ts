import type { NetworkInterfaceInfo } from 'node:os';
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { buildScanContent, describeInterfaces, NetworkScanWatcher, scanContentKey } from '../../src/ops/network/network-scan.js';
import { Probes } from '../../src/ops/observability/probes.js';
import type { BusScanView } from '../../src/ops/observability/views.js';

const v4 = (address: string, mac: string, internal = false): NetworkInterfaceInfo => ({ address, netmask: '255.255.255.0', family: 'IPv4', mac, internal, cidr: `${address}/24` });
const v6 = (address: string, mac: string, scopeid = 0): NetworkInterfaceInfo => ({ address, netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', mac, internal: false, cidr: `${address}/64`, scopeid });

describe('network scan content', () => {
  it('lists external interfaces with mac, IPv4 and IPv6, sorted, without loopback', () => {
    const content = describeInterfaces({
      wlan0: [v4('192.168.1.23', 'DC:A6:32:00:00:02'), v6('fe80::dea6:32ff:fe00:2%wlan0', 'DC:A6:32:00:00:02', 3)],
      lo: [v4('127.0.0.1', '00:00:00:00:00:00', true)],
      eth0: [v4('10.0.0.5', 'dc:a6:32:00:00:01'), v4('10.0.0.6', 'dc:a6:32:00:00:01'), v6('2001:db8::5', 'dc:a6:32:00:00:01')],
      tun0: [v4('10.8.0.2', '00:00:00:00:00:00')],
    });
    expect(content).toEqual([
      { name: 'eth0', mac: 'dc:a6:32:00:00:01', ipv4: ['10.0.0.5', '10.0.0.6'], ipv6: ['2001:db8::5'] },
      { name: 'tun0', mac: '00:00:00:00:00:00', ipv4: ['10.8.0.2'], ipv6: [] },
      { name: 'wlan0', mac: 'dc:a6:32:00:00:02', ipv4: ['192.168.1.23'], ipv6: ['fe80::dea6:32ff:fe00:2'] },
    ]);
  });

  it('works on this machine\'s real interfaces', () => {
    const content = describeInterfaces(networkInterfaces());
    for (const i of content) {
      expect(i.name).not.toBe('lo');
      for (const a of i.ipv4) expect(a).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    }
  });

  it('a different order of the same facts is the same content', () => {
    const a = buildScanContent({ eth0: [v4('10.0.0.5', 'aa:bb:cc:dd:ee:ff')] }, [{ bus: 'rs485', port: '/dev/ttyUSB0', unit_ids: [2, 1], devices: [{ unit_id: 2, profile: 'em24' }, { unit_id: 1, profile: 'sdm630' }] }]);
    const b = buildScanContent({ eth0: [v4('10.0.0.5', 'AA:BB:CC:DD:EE:FF')] }, [{ bus: 'rs485', port: '/dev/ttyUSB0', unit_ids: [1, 2], devices: [{ unit_id: 1, profile: 'sdm630' }, { unit_id: 2, profile: 'em24' }] }]);
    expect(scanContentKey(a)).toBe(scanContentKey(b));
  });

  it('emits network.changed at start and again only when interfaces or answering meters change', async () => {
    let ifaces: NodeJS.Dict<NetworkInterfaceInfo[]> = { eth0: [v4('10.0.0.5', 'dc:a6:32:00:00:01')] };
    let buses: BusScanView[] = [{ bus: 'rs485', port: '/dev/ttyUSB0', unit_ids: [1], devices: [{ unit_id: 1, profile: 'sdm630' }] }];
    const probes = new Probes();
    probes.observe([{ name: 'source', start: async () => {}, stop: async () => {}, views: { busScan: () => buses } }]);
    const logger = createLogger('silent');
    const events = new EventBus(logger);
    const watcher = new NetworkScanWatcher({ logger, probes, events, listInterfaces: () => ifaces, intervalMs: 3_600_000 });
    const seen: string[] = [];
    events.on('network.changed', (c) => seen.push(`${c.interfaces.map((i) => i.ipv4.join('+')).join()}|${c.modbus.map((m) => m.unit_ids.join('+')).join()}`));
    await watcher.start();
    expect(watcher.check()).toBe(false);
    ifaces = { eth0: [v4('10.0.0.9', 'dc:a6:32:00:00:01')] }; // DHCP gave a new address
    expect(watcher.check()).toBe(true);
    buses = [{ bus: 'rs485', port: '/dev/ttyUSB0', unit_ids: [], devices: [] }]; // the meter went offline
    expect(watcher.check()).toBe(true);
    expect(watcher.check()).toBe(false);
    await watcher.stop();
    expect(seen).toEqual(['10.0.0.5|1', '10.0.0.9|1', '10.0.0.9|']);
  });
});
