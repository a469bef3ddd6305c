// The P1 source on its own, against a simulated smart meter on a socat pty and a P1 bridge on
// TCP (replaying ../shared/data/dsmr/v5.txt in place): samples per slot each followed by
// tick-done, the meter's clock checked against the gateway's, offline when the meter goes quiet.
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { validateConfig } from '../../src/config/load.js';
import type { MeterSample, MeterStatus } from '../../src/domain.js';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { P1Source } from '../../src/p1/p1-source.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { hasSocat } from '../helpers/peers.js';
import { seriesValue } from '../helpers/prom-text.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { startSim } from '../helpers/sim-process.js';
import { startPtyPair } from '../helpers/socat.js';
import { until } from '../helpers/wait.js';
import { METER_A, ORG } from '../helpers/poller-harness.js';

describe.skipIf(!hasSocat || !hasSharedData)('P1 source', () => {
  const cleanup = cleanupsAfterEach();
  let source: P1Source | null = null;
  afterEach(async () => {
    await source?.stop();
    source = null;
  });

  function startSource(bus: Record<string, unknown>, metrics: Registry) {
    const config = validateConfig({ organization_id: ORG, poll: { interval_ms: 1000 }, buses: [{ name: 'p1', ...bus }], meters: [{ resource_id: METER_A, bus: 'p1' }] }, 'test', {});
    const events: Array<{ kind: 'sample'; sample: MeterSample } | { kind: 'tick-done' } | { kind: 'status'; statuses: readonly MeterStatus[] }> = [];
    const logger = createLogger('silent');
    const eventBus = new EventBus(logger);
    eventBus.on('sample.taken', (sample) => events.push({ kind: 'sample', sample }));
    eventBus.on('poll.tick-done', () => events.push({ kind: 'tick-done' }));
    eventBus.on('meter.state-changed', ({ statuses }) => events.push({ kind: 'status', statuses }));
    source = new P1Source({ config, logger, clock: systemClock, metrics, events: eventBus });
    return events;
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

  it('a DSMR 2.2 meter at 9600 7E1 (no CRC, no clock): samples from its telegrams, nothing counted against its clock', { timeout: 60_000 }, async () => {
    const pair = cleanup.trackPair(await startPtyPair());
    const sim = await startSim(['--p1', sharedData('dsmr/v2_2.txt'), '--p1-line', '9600 7E1', '--serial', pair.b, '--p1-period-ms', '300']);
    cleanup.push(() => sim.stop());
    const metrics = new Registry();
    const events = startSource({ type: 'p1', port: pair.a, line: '9600 7E1' }, metrics);
    await source!.start();
    await until(() => events.filter((e) => e.kind === 'sample').length >= 2, 'two samples', 30_000);
    const sample = events.find((e) => e.kind === 'sample');
    expect(sample?.kind === 'sample' && Object.fromEntries(sample.sample.metrics.map((m) => [m.name, m.unit]))).toEqual({ total_active_power: 'W', active_energy_import: 'Wh', active_energy_export: 'Wh' });
    const text = await metrics.metrics();
    expect(seriesValue(text, 'metergate_p1_telegrams_total', { bus: 'p1', outcome: 'ok' })).toBeGreaterThanOrEqual(2);
    expect(seriesValue(text, 'metergate_p1_meter_clock_offset_seconds', { resource_id: METER_A })).toBeUndefined();
    expect(source!.identity(METER_A)).toEqual({ vendor: 'Iskraemeco', model: 'MT382-1004', serialNumber: '00000000000000', firmware: null });
  });
});
