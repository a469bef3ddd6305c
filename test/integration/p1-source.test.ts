// The P1 source on its own, against a simulated smart meter on a socat pty and a P1 bridge on
// TCP (replaying ../shared/data/dsmr/v5.txt in place): samples per slot each followed by
// tick-done, the meter's clock checked against the gateway's, offline when the meter goes quiet.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { validateConfig } from '../../src/config/load.js';
import type { MeterSample, MeterStatus } from '../../src/domain.js';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { dsmrCrcHex } from '../../src/p1/crc.js';
import { P1Source } from '../../src/p1/p1-source.js';
import { dutchTimestamp } from '../../src/sim/p1-telegrams.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { hasSocat } from '../helpers/peers.js';
import { seriesValue } from '../helpers/prom-text.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { smlFiles, smlRecording } from '../helpers/sml-recordings.js';
import { startSim } from '../helpers/sim-process.js';
import { startPtyPair } from '../helpers/socat.js';
import { until } from '../helpers/wait.js';
import { METER_A, ORG } from '../helpers/poller-harness.js';

const GAS = '1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b';
const CHANNEL_1 = '2c3d4e5f-6071-4829-9bac-1d2e3f4a5b6c';

describe.skipIf(!hasSocat || !hasSharedData)('P1 source', () => {
  const cleanup = cleanupsAfterEach();
  let source: P1Source | null = null;
  afterEach(async () => {
    await source?.stop();
    source = null;
  });

  function startSource(bus: Record<string, unknown>, metrics: Registry, channels?: Record<string, string>) {
    const config = validateConfig({ organization_id: ORG, poll: { interval_ms: 1000 }, buses: [{ name: 'p1', ...bus }], meters: [{ resource_id: METER_A, bus: 'p1', ...(channels ? { channels } : {}) }] }, 'test', {});
    const events: Array<{ kind: 'sample'; sample: MeterSample } | { kind: 'tick-done' } | { kind: 'status'; statuses: readonly MeterStatus[] }> = [];
    const logger = createLogger('silent');
    const eventBus = new EventBus(logger);
    eventBus.on('sample.taken', (sample) => events.push({ kind: 'sample', sample }));
    eventBus.on('poll.tick-done', () => events.push({ kind: 'tick-done' }));
    eventBus.on('meter.state-changed', ({ statuses }) => events.push({ kind: 'status', statuses }));
    source = new P1Source({ config, logger, clock: systemClock, metrics, events: eventBus });
    return events;
  }

  /**
   * A TCP serial bridge on 127.0.0.1 (what a P1-to-Wi-Fi adapter is to the gateway): every
   * `periodMs` it calls `send` for each connected client, with the instant the first client
   * connected. Closed after the test. Resolves to its port.
   */
  async function serialBridge(periodMs: number, send: (socket: Socket, firstConnectedAtMs: number) => void): Promise<number> {
    const clients = new Set<Socket>();
    let firstConnectedAtMs: number | null = null;
    const server = createServer((socket) => {
      firstConnectedAtMs ??= Date.now();
      clients.add(socket.on('error', () => undefined).on('close', () => clients.delete(socket)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const timer = setInterval(() => {
      for (const socket of clients) send(socket, firstConnectedAtMs!);
    }, periodMs);
    cleanup.push(() => new Promise<void>((resolve) => {
      clearInterval(timer);
      for (const socket of clients) socket.destroy();
      server.close(() => resolve());
    }));
    return (server.address() as AddressInfo).port;
  }

  it('one sample per slot, each followed by tick-done; a meter clock an hour off is counted; quiet meter goes offline', { timeout: 90_000 }, async () => {
    const pair = cleanup.trackPair(await startPtyPair());
    const sim = await startSim(['--p1', sharedData('dsmr/v5.txt'), '--serial', pair.b, '--p1-period-ms', '300', '--p1-clock-offset-s', '3600']);
    cleanup.push(() => sim.stop());
    const metrics = new Registry();
    const events = startSource({ type: 'p1', port: pair.a }, metrics);
    await source!.start();
    await until(() => events.filter((e) => e.kind === 'sample').length >= 3, 'three samples', 30_000);
    // Every sample is followed by the tick-done of its slot before the next sample.
    const kinds = events.filter((e) => e.kind !== 'status').map((e) => e.kind);
    kinds.forEach((k, i) => {
      if (k === 'sample') expect(kinds[i + 1] ?? 'tick-done').toBe('tick-done');
    });
    const text = await metrics.metrics();
    expect(seriesValue(text, 'metergate_p1_meter_clock_disagreements_total', { resource_id: METER_A })).toBeGreaterThanOrEqual(1);
    const offset = seriesValue(text, 'metergate_p1_meter_clock_offset_seconds', { resource_id: METER_A })!;
    expect(Math.abs(offset - 3600)).toBeLessThan(5);
    expect(source!.identity(METER_A)).toEqual({ vendor: 'Iskraemeco', model: 'MT382-1000', serialNumber: 'K8EG004046395507', firmware: 'DSMR 5.0' });

    await sim.stop();
    await until(() => source!.statuses()[0].state === 'offline', 'offline after the meter went quiet', 30_000);
    const last = events.filter((e) => e.kind === 'status').at(-1);
    expect(last).toMatchObject({ statuses: [{ resourceId: METER_A, state: 'offline', unitId: 1, profile: 'dsmr', bus: 'p1' }] });
    expect(source!.busScan()).toEqual([{ bus: 'p1', port: pair.a, unit_ids: [], devices: [] }]);
  });

  it('reads a meter behind a TCP serial bridge (p1-tcp); its own clock, right, is not counted', { timeout: 60_000 }, async () => {
    const sim = await startSim(['--p1', sharedData('dsmr/v5_two_mbus.txt'), '--tcp', '0', '--p1-period-ms', '300']);
    cleanup.push(() => sim.stop());
    const metrics = new Registry();
    const events = startSource({ type: 'p1-tcp', host: '127.0.0.1', tcp_port: sim.ready.tcpPort }, metrics);
    await source!.start();
    await until(() => events.filter((e) => e.kind === 'sample').length >= 2, 'two samples', 30_000);
    const sample = events.find((e) => e.kind === 'sample')!;
    expect(sample.kind === 'sample' && sample.sample.metrics.find((m) => m.name === 'total_active_power')).toEqual({ name: 'total_active_power', value: 111, unit: 'W' });
    expect(source!.busScan()).toEqual([{ bus: 'p1', port: `127.0.0.1:${sim.ready.tcpPort}`, unit_ids: [1], devices: [{ unit_id: 1, profile: 'dsmr' }] }]);
    const text = await metrics.metrics();
    expect(seriesValue(text, 'metergate_p1_meter_clock_disagreements_total', { resource_id: METER_A })).toBe(0);
    expect(Math.abs(seriesValue(text, 'metergate_p1_meter_clock_offset_seconds', { resource_id: METER_A })!)).toBeLessThan(5);
  });

  it('M-Bus channels are resources of their own: gas once per capture time, stamped with it; a channel without a reading says why', { timeout: 60_000 }, async () => {
    const sim = await startSim(['--p1', sharedData('dsmr/v5_two_mbus.txt'), '--tcp', '0', '--p1-period-ms', '250']);
    cleanup.push(() => sim.stop());
    const metrics = new Registry();
    const events = startSource({ type: 'p1-tcp', host: '127.0.0.1', tcp_port: sim.ready.tcpPort }, metrics, { 1: CHANNEL_1, 2: GAS });
    await source!.start();
    await until(() => events.filter((e) => e.kind === 'sample' && e.sample.resourceId === METER_A).length >= 4, 'four meter samples', 30_000);
    const gas = events.flatMap((e) => (e.kind === 'sample' && e.sample.resourceId === GAS ? [e.sample] : []));
    // Four telegrams with new electricity, the channel's capture time (a 5-minute mark) moved at most once.
    expect(gas.length).toBeGreaterThanOrEqual(1);
    expect(new Set(gas.map((g) => g.sampledAtMs)).size).toBe(gas.length);
    for (const g of gas) {
      expect(g.sampledAtMs % 300_000).toBe(0);
      expect(g.metrics).toEqual([{ name: 'gas_volume', value: 246.138, unit: 'm3' }]);
    }
    expect(events.some((e) => e.kind === 'sample' && e.sample.resourceId === CHANNEL_1)).toBe(false);
    expect(source!.identity(GAS)).toEqual({ vendor: 'unknown', model: 'M-Bus gas meter (device type 3, channel 2)', serialNumber: 'G0039001936990619', firmware: null });
    const statuses = source!.statuses();
    expect(statuses.map((s) => [s.resourceId, s.unitId, s.profile, s.state])).toEqual([
      [METER_A, 1, 'dsmr', 'online'],
      [CHANNEL_1, 1, 'dsmr-mbus', 'online'],
      [GAS, 2, 'dsmr-mbus', 'online'],
    ]);
    expect(statuses[1].problem).toMatch(/^channel 1: unit null is not one of m3/);
    expect(statuses[2].problem).toBeNull();
  });

  it('a channel of a meter whose clock runs 10 min ahead is stamped no later than its telegram was heard (never in the future, where the clock gate would quarantine it)', { timeout: 60_000 }, async () => {
    const sim = await startSim(['--p1', sharedData('dsmr/v5_two_mbus.txt'), '--tcp', '0', '--p1-period-ms', '250', '--p1-clock-offset-s', '600']);
    cleanup.push(() => sim.stop());
    const events = startSource({ type: 'p1-tcp', host: '127.0.0.1', tcp_port: sim.ready.tcpPort }, new Registry(), { 2: GAS });
    await source!.start();
    await until(() => events.some((e) => e.kind === 'sample' && e.sample.resourceId === GAS), 'a gas sample', 30_000);
    const gas = events.flatMap((e) => (e.kind === 'sample' && e.sample.resourceId === GAS ? [e.sample] : []));
    for (const g of gas) expect(g.sampledAtMs).toBeLessThanOrEqual(Date.now());
    expect(gas.length).toBe(new Set(gas.map((g) => g.sampledAtMs)).size);
  });

  it('whole telegrams without electricity (a heat interface unit): online, no electricity sample, the reason and fix in its status; its M-Bus channel still published', { timeout: 60_000 }, async () => {
    // The recorded DSMR 5 telegram with every electricity object taken out (the simulator recomputes the CRC).
    const dir = mkdtempSync(join(tmpdir(), 'mg-hiu-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'hiu.txt');
    writeFileSync(file, readFileSync(sharedData('dsmr/v5.txt'), 'latin1').replace(/^1-0:.*\r\n/gm, ''), 'latin1');
    const pair = cleanup.trackPair(await startPtyPair());
    const sim = await startSim(['--p1', file, '--serial', pair.b, '--p1-period-ms', '300']);
    cleanup.push(() => sim.stop());
    const metrics = new Registry();
    const events = startSource({ type: 'p1', port: pair.a }, metrics, { 1: GAS });
    await source!.start();
    await until(() => events.some((e) => e.kind === 'sample' && e.sample.resourceId === GAS) && source!.statuses()[0].state === 'online', 'the gas channel published, the device online', 30_000);
    // Several slots later: still online, never an electricity sample.
    const ticks = events.filter((e) => e.kind === 'tick-done').length;
    await until(() => events.filter((e) => e.kind === 'tick-done').length >= ticks + 4, 'four more slots', 30_000);
    expect(events.some((e) => e.kind === 'sample' && e.sample.resourceId === METER_A)).toBe(false);
    const [device] = source!.statuses();
    expect(device.state).toBe('online');
    expect(device.problem).toMatch(/^whole telegrams without electricity objects \(a heat interface unit/);
    expect(seriesValue(await metrics.metrics(), 'metergate_p1_telegrams_total', { bus: 'p1', outcome: 'no_electricity' })).toBeGreaterThanOrEqual(4);
  });

  it('an eBZ DD3 pushing IEC 62056-21 mode D at 2400 7E1 (a real recorded telegram): per-phase power and voltages, its id and maker', { timeout: 60_000 }, async () => {
    const pair = cleanup.trackPair(await startPtyPair());
    const sim = await startSim(['--p1', fileURLToPath(new URL('../data/iec62056-21/ebz_dd3.txt', import.meta.url)), '--p1-line', '2400 7E1', '--serial', pair.b, '--p1-period-ms', '300']);
    cleanup.push(() => sim.stop());
    const metrics = new Registry();
    const events = startSource({ type: 'p1', port: pair.a, line: '2400 7E1' }, metrics);
    await source!.start();
    await until(() => events.filter((e) => e.kind === 'sample').length >= 2, 'two samples', 30_000);
    const sample = events.find((e) => e.kind === 'sample');
    expect(sample?.kind === 'sample' && Object.fromEntries(sample.sample.metrics.map((m) => [m.name, m.value]))).toEqual({
      total_active_power: 259.2,
      active_power_l1: 75.18,
      active_power_l2: 92.34,
      active_power_l3: 91.68,
      active_energy_import: 125256.886,
      voltage_l1: 232.4,
      voltage_l2: 231.7,
      voltage_l3: 233.7,
    });
    expect(source!.identity(METER_A)).toEqual({ vendor: 'eBZ', model: 'DD3BZ06ETA_107', serialNumber: '1EBZ0100507409', firmware: null });
    expect(seriesValue(await metrics.metrics(), 'metergate_p1_telegrams_total', { bus: 'p1', outcome: 'garbled' })).toBe(0);
  });

  it('a DSMR 2.2 meter at 9600 7E1 (no CRC, no clock): samples from its telegrams, nothing counted against its clock; its gas (0-1:24.3.0 + value line) on its channel, stamped with the hour', { timeout: 60_000 }, async () => {
    const pair = cleanup.trackPair(await startPtyPair());
    const sim = await startSim(['--p1', sharedData('dsmr/v2_2.txt'), '--p1-line', '9600 7E1', '--serial', pair.b, '--p1-period-ms', '300']);
    cleanup.push(() => sim.stop());
    const metrics = new Registry();
    const events = startSource({ type: 'p1', port: pair.a, line: '9600 7E1' }, metrics, { 1: GAS });
    await source!.start();
    await until(() => events.filter((e) => e.kind === 'sample' && e.sample.resourceId === METER_A).length >= 2, 'two samples', 30_000);
    const gas = events.flatMap((e) => (e.kind === 'sample' && e.sample.resourceId === GAS ? [e.sample] : []));
    expect(gas.length).toBeGreaterThanOrEqual(1);
    for (const g of gas) {
      expect(g.sampledAtMs % 3_600_000).toBe(0);
      expect(g.metrics).toEqual([{ name: 'gas_volume', value: 1.001, unit: 'm3' }]);
    }
    expect(source!.identity(GAS)).toEqual({ vendor: 'unknown', model: 'M-Bus gas meter (device type 3, channel 1)', serialNumber: '000000000000', firmware: null });
    const sample = events.find((e) => e.kind === 'sample' && e.sample.resourceId === METER_A);
    expect(sample?.kind === 'sample' && Object.fromEntries(sample.sample.metrics.map((m) => [m.name, m.unit]))).toEqual({ total_active_power: 'W', active_energy_import: 'Wh', active_energy_export: 'Wh' });
    const text = await metrics.metrics();
    expect(seriesValue(text, 'metergate_p1_telegrams_total', { bus: 'p1', outcome: 'ok' })).toBeGreaterThanOrEqual(2);
    expect(seriesValue(text, 'metergate_p1_meter_clock_offset_seconds', { resource_id: METER_A })).toBeUndefined();
    expect(source!.identity(METER_A)).toEqual({ vendor: 'Iskraemeco', model: 'MT382-1004', serialNumber: '00000000000000', firmware: null });
  });

  it('a gas reading going backwards or rising faster than a G25 meter can is not published, counted, and named as the channel\'s problem', { timeout: 60_000 }, async () => {
    // The recorded DSMR 5 telegram with its gas line set to each step in turn (capture times 5 min apart), CRC recomputed.
    const template = readFileSync(sharedData('dsmr/v5.txt'), 'latin1').replace(/!.*$/s, '!');
    const steps = [100, 100.1, 99, 100.2, 150, 100.3];
    const base = Math.floor(Date.now() / 300_000) * 300_000 - 3_600_000;
    const telegram = (i: number) => {
      const body = template
        .replace(/^0-0:1\.0\.0\(\d{12}[SW]\)/m, `0-0:1.0.0(${dutchTimestamp(Date.now())})`)
        .replace(/^0-1:24\.2\.1\(.*$/m, `0-1:24.2.1(${dutchTimestamp(base + i * 300_000)})(${steps[i]!.toFixed(3).padStart(9, '0')}*m3)`);
      return `${body}${dsmrCrcHex(body)}\r\n`;
    };
    // From the gateway's connection on: the first step for 3 s, each other for 2 s (two poll slots), a telegram every 250 ms.
    const port = await serialBridge(250, (socket, connectedAt) => {
      const elapsed = Date.now() - connectedAt;
      const i = elapsed < 3000 ? 0 : Math.min(steps.length - 1, 1 + Math.floor((elapsed - 3000) / 2000));
      socket.write(telegram(i), 'latin1');
    });
    const metrics = new Registry();
    const events = startSource({ type: 'p1-tcp', host: '127.0.0.1', tcp_port: port }, metrics, { 1: GAS });
    await source!.start();
    const dropped = async (reason: string) => seriesValue(await metrics.metrics(), 'metergate_meter_samples_dropped_total', { resource_id: GAS, reason }) ?? 0;
    await until(async () => (await dropped('channel_jump')) >= 1, 'the jump dropped', 30_000);
    expect(source!.statuses()[1]!.problem).toMatch(/^channel 1: reading not published, implausible: gas_volume rose 49\.8 in 5 min/);
    const gas = () => events.flatMap((e) => (e.kind === 'sample' && e.sample.resourceId === GAS ? [e.sample] : []));
    await until(() => gas().some((g) => g.metrics[0]!.value === 100.3), 'the reading after the jump', 30_000);
    expect(await dropped('channel_backwards')).toBe(1);
    expect(await dropped('channel_jump')).toBe(1);
    // Every step but the two implausible ones, once, stamped with its capture time.
    expect(gas().map((g) => [g.metrics[0]!.value, g.sampledAtMs - base])).toEqual([
      [100, 0],
      [100.1, 300_000],
      [100.2, 900_000],
      [100.3, 1_500_000],
    ]);
    expect(source!.statuses()[1]!.problem).toBeNull();
  });

  it('an SML meter behind a TCP serial bridge (p1-tcp, line 9600 8N1): a real recorded Iskra MT631 file, its values and id', { timeout: 60_000 }, async () => {
    const [file] = smlFiles(smlRecording('iskra_mt631.hex'));
    // Sent in two pieces, as a bridge forwards what its UART had.
    const port = await serialBridge(300, (socket) => {
      socket.write(file!.subarray(0, 100));
      socket.write(file!.subarray(100));
    });
    const metrics = new Registry();
    const events = startSource({ type: 'p1-tcp', host: '127.0.0.1', tcp_port: port, line: '9600 8N1' }, metrics);
    await source!.start();
    await until(() => events.filter((e) => e.kind === 'sample').length >= 2, 'two samples', 30_000);
    for (const e of events) {
      if (e.kind === 'sample') expect(e.sample.metrics).toEqual([{ name: 'total_active_power', value: 2144, unit: 'W' }, { name: 'active_energy_import', value: 79139.3, unit: 'Wh' }, { name: 'active_energy_export', value: 0, unit: 'Wh' }]);
    }
    expect(source!.identity(METER_A)).toEqual({ vendor: 'Iskraemeco', model: 'SML meter', serialNumber: '1ISK0075126084', firmware: null });
    expect(source!.statuses()[0]!.problem).toBeNull();
    expect(seriesValue(await metrics.metrics(), 'metergate_p1_telegrams_total', { bus: 'p1', outcome: 'ok' })).toBeGreaterThanOrEqual(2);
  });
});
