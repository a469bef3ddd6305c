import { describe, expect, it } from 'vitest';
import { interFrameGapMs, ModbusBus } from '../../src/modbus/bus.js';
import { METER_A, METER_B, METER_C, metricValue, startPoller, type Harness } from '../helpers/poller-harness.js';
import { startSim, type SimProcess } from '../helpers/sim-process.js';
import { startPtyPair, startTappedLine } from '../helpers/socat.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';

const cleanups = cleanupsAfterEach();
const { track, trackPair } = cleanups;

describe('MeterPoller against the simulator', () => {
  it('reads SDM630s over RTU on a pty, Modbus TCP and RTU-over-TCP, with consistent values', async () => {
    const pair = trackPair(await startPtyPair());
    const sim: SimProcess = track(await startSim(['--serial', pair.b, '--tcp', '0', '--rtu-over-tcp', '0', '--unit', '1,2']));
    const h: Harness = track(
      await startPoller({
        poll: { interval_ms: 1000 },
        buses: [
          { name: 'rs485', type: 'rtu', port: pair.a, timeout_ms: 300 },
          { name: 'gw', type: 'tcp', host: '127.0.0.1', tcp_port: sim.ready.tcpPort },
          { name: 'rtutcp', type: 'rtu-over-tcp', host: '127.0.0.1', tcp_port: sim.ready.rtuOverTcpPort },
        ],
        meters: [
          { resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630', extra_metrics: ['voltage_l1', 'frequency', 'current_l1', 'active_energy_export'] },
          { resource_id: METER_B, bus: 'gw', unit_id: 2, profile: 'sdm630' },
          { resource_id: METER_C, bus: 'rtutcp', unit_id: 1, profile: 'sdm630' },
        ],
      }),
    );
    await h.waitFor(() => [METER_A, METER_B, METER_C].every((id) => h.samplesOf(id).length >= 3), 'three samples from each meter');

    const a = h.samplesOf(METER_A);
    expect(a[0].metrics.map((m) => `${m.name}:${m.unit}`).sort()).toEqual(
      ['active_energy_export:Wh', 'active_energy_import:Wh', 'current_l1:A', 'frequency:Hz', 'total_active_power:W', 'voltage_l1:V'].sort(),
    );
    for (const s of h.samples) {
      expect(metricValue(s, 'total_active_power')).toBeGreaterThan(0);
      expect(metricValue(s, 'total_active_power')).toBeLessThan(20_000);
      expect(metricValue(s, 'active_energy_import')).toBeGreaterThan(0);
    }
    for (const s of a) {
      expect(metricValue(s, 'voltage_l1')).toBeGreaterThan(220);
      expect(metricValue(s, 'voltage_l1')).toBeLessThan(240);
      expect(Math.abs(metricValue(s, 'frequency')! - 50)).toBeLessThan(0.1);
    }
    for (const id of [METER_A, METER_B, METER_C]) {
      const list = h.samplesOf(id);
      for (let i = 1; i < list.length; i++) {
        expect(list[i].sampledAtMs).toBeGreaterThan(list[i - 1].sampledAtMs);
        // the counter grows, and by no more than the power seen could explain (generous bound)
        const dE = metricValue(list[i], 'active_energy_import')! - metricValue(list[i - 1], 'active_energy_import')!;
        const dtH = (list[i].sampledAtMs - list[i - 1].sampledAtMs) / 3_600_000;
        expect(dE).toBeGreaterThanOrEqual(0);
        expect(dE).toBeLessThanOrEqual(20_000 * dtH + 1);
      }
    }
    // units 1 on the pty and on RTU-over-TCP are the same simulated meter, unit 2 another one
    expect(metricValue(h.samplesOf(METER_B)[0], 'active_energy_import')).not.toBe(metricValue(a[0], 'active_energy_import'));

    expect(h.poller.statuses().every((s) => s.state === 'online')).toBe(true);
    expect(h.poller.busScan()).toEqual([
      { bus: 'rs485', port: pair.a, unit_ids: [1], devices: [{ unit_id: 1, profile: 'sdm630' }] },
      { bus: 'gw', port: `127.0.0.1:${sim.ready.tcpPort}`, unit_ids: [2], devices: [{ unit_id: 2, profile: 'sdm630' }] },
      { bus: 'rtutcp', port: `127.0.0.1:${sim.ready.rtuOverTcpPort}`, unit_ids: [1], devices: [{ unit_id: 1, profile: 'sdm630' }] },
    ]);
    expect(await h.metric('metergate_meter_polls_total', { resource_id: METER_A })).toBeGreaterThanOrEqual(3);
    expect(await h.metric('metergate_meter_samples_dropped_total')).toBe(0);
    const live = h.liveness.check();
    expect(live.alive).toBe(true);
    expect(live.loops.map((l) => l.loop)).toContain('modbus-poll');
  });

  it('polls each slot once when timers fire early by the wall clock, and does not warn about it', async () => {
    // A wall clock running 2 % slow (as one being slewed, exaggerated): every timer, armed on
    // it but run on the monotonic clock, fires ~20 ms before its slot starts by this clock.
    const t0 = Date.now();
    const slowClock = { now: () => t0 + (Date.now() - t0) * 0.98 };
    const warnings: string[] = [];
    const sim = track(await startSim(['--tcp', '0', '--unit', '1']));
    const h = track(
      await startPoller(
        {
          poll: { interval_ms: 1000 },
          buses: [{ name: 'gw', type: 'tcp', host: '127.0.0.1', tcp_port: sim.ready.tcpPort }],
          meters: [{ resource_id: METER_A, bus: 'gw', unit_id: 1, profile: 'sdm630' }],
        },
        { clock: slowClock, onLog: (r) => warnings.push(r.msg) },
      ),
    );
    await h.waitFor(() => h.samplesOf(METER_A).length >= 6, 'six samples', 30_000);
    const polls = await h.metric('metergate_meter_polls_total', { resource_id: METER_A });
    const samples = h.samplesOf(METER_A);
    // one poll per slot: the polls started are the samples taken (one may be under way)
    expect(polls - samples.length).toBeGreaterThanOrEqual(0);
    expect(polls - samples.length).toBeLessThanOrEqual(1);
    for (let i = 1; i < samples.length; i++) expect(samples[i].sampledAtMs - samples[i - 1].sampledAtMs).toBeGreaterThan(500);
    expect(warnings).toEqual([]);
  });

  it('reads the other built-in profiles and a user-defined one from a simulator emulating their maps', async () => {
    const sim = track(await startSim(['--tcp', '0', '--unit', '1:abb-b23,2:em24,3:em340,4:sdm120,5:sdm72d,6:sdm630']));
    const ids = ['a1000000-0000-4000-8000-000000000001', 'a1000000-0000-4000-8000-000000000002', 'a1000000-0000-4000-8000-000000000003', 'a1000000-0000-4000-8000-000000000004', 'a1000000-0000-4000-8000-000000000005'];
    const profiles = ['abb-b23', 'em24', 'em340', 'sdm120', 'sdm72d'];
    const USER = 'a1000000-0000-4000-8000-000000000006';
    const h = track(
      await startPoller({
        poll: { interval_ms: 1000 },
        buses: [{ name: 'gw', type: 'tcp', host: '127.0.0.1', tcp_port: sim.ready.tcpPort }],
        meters: [
          ...ids.map((id, i) => ({ resource_id: id, bus: 'gw', unit_id: i + 1, profile: profiles[i], extra_metrics: ['voltage_l1', 'frequency'] })),
          { resource_id: USER, bus: 'gw', unit_id: 6, profile: 'my-meter', extra_metrics: ['voltage_l1', 'frequency'] },
        ],
        // a user-defined profile in the config: same shape as the built-in ones
        profiles: {
          'my-meter': {
            vendor: 'Acme',
            model: 'SDM-alike',
            function_code: 4,
            max_registers_per_request: 40,
            registers: [
              { metric: 'total_active_power', address: 0x34, type: 'float32', unit: 'W', default: true },
              { metric: 'active_energy_import', address: 0x48, type: 'float32', scale: 1000, unit: 'Wh', default: true },
              { metric: 'voltage_l1', address: 0, type: 'float32', unit: 'V' },
              { metric: 'frequency', address: 0x46, type: 'float32', unit: 'Hz' },
            ],
          },
        },
      }),
    );
    ids.push(USER);
    await h.waitFor(() => ids.every((id) => h.samplesOf(id).length >= 2), 'two samples from each meter');
    for (const id of ids) {
      const s = h.samplesOf(id)[1];
      expect(metricValue(s, 'voltage_l1'), id).toBeGreaterThan(220);
      expect(metricValue(s, 'voltage_l1'), id).toBeLessThan(240);
      expect(Math.abs(metricValue(s, 'frequency')! - 50), id).toBeLessThan(0.2);
      expect(metricValue(s, 'total_active_power'), id).toBeGreaterThan(0);
      expect(metricValue(s, 'active_energy_import'), id).toBeGreaterThan(0);
    }
  });

  it('never has two requests on the line, and keeps 3.5 characters of silence before each (seen from a tap on the line)', async () => {
    const line = track(await startTappedLine());
    track(await startSim(['--serial', line.meterSide, '--unit', '1,2,3']));
    const busConfig = { name: 'x', type: 'rtu' as const, port: line.gatewaySide, baud_rate: 9600, parity: 'even' as const, data_bits: 8 as const, stop_bits: 1 as const, tcp_port: 502, timeout_ms: 1000, retries: 0 };
    const bus = new ModbusBus({ bus: busConfig, logger: (await import('../../src/log.js')).createLogger('silent') });
    cleanups.push(() => bus.close());
    // What crosses the line, in order, timed where the bytes pass the tap.
    const chunks: Array<{ toMeter: boolean; atMs: number; bytes: number }> = [];
    line.mangle((chunk, towardsGateway) => {
      chunks.push({ toMeter: !towardsGateway, atMs: performance.now(), bytes: chunk.length });
      return chunk;
    });
    await bus.open();
    // 30 reads fired at once across three units, then one more: each must wait for the
    // answer to the one before it.
    const reads = Array.from({ length: 30 }, (_, i) => bus.read({ unitId: (i % 3) + 1, functionCode: 4, address: 0x0000, count: 2 }));
    const results = await Promise.all(reads);
    for (const r of results) expect(r.words).toHaveLength(2);
    const probe = await bus.read({ unitId: 1, functionCode: 3, address: 0xfc02, count: 2 });
    expect(probe.words[0]).toBe(112); // SDM630 model code

    // Chunks in one direction in a row form one run: a request run longer than one request
    // frame (8 bytes) would be two requests on the line without an answer between them.
    const runs: Array<{ toMeter: boolean; firstMs: number; lastMs: number; bytes: number }> = [];
    for (const c of chunks) {
      const last = runs[runs.length - 1];
      if (last && last.toMeter === c.toMeter) {
        last.bytes += c.bytes;
        last.lastMs = c.atMs;
      } else runs.push({ toMeter: c.toMeter, firstMs: c.atMs, lastMs: c.atMs, bytes: c.bytes });
    }
    expect(runs.map((r) => `${r.toMeter ? 'req' : 'ans'}:${r.bytes}`)).toEqual(Array.from({ length: 31 }, () => ['req:8', 'ans:9']).flat());
    // Silence after an answer before the next request: at least 3.5 characters of 11 bits at
    // 9600 baud (4.01 ms). The tap sees the answer before the gateway can, so load only adds.
    const gapMs = interFrameGapMs(busConfig);
    expect(gapMs).toBeCloseTo((3.5 * 11 * 1000) / 9600, 6);
    for (let i = 2; i < runs.length; i += 2) expect(runs[i].firstMs - runs[i - 1].lastMs, `silence before request ${i / 2 + 1}`).toBeGreaterThanOrEqual(gapMs);
  });
});
