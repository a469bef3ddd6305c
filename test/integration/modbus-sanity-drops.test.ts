// A meter that sends implausible values, over real Modbus TCP (the simulator's server and
// SDM630 register map, its values scripted by the test): the poller drops each bad sample
// with a warning and a counter by reason, never passes it on, and accepts a counter that
// stays lower as a meter reset.
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { validateConfig } from '../../src/config/load.js';
import type { MeterSample } from '../../src/domain.js';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { MeterPoller } from '../../src/modbus/poller.js';
import { builtInProfiles } from '../../src/modbus/profiles/index.js';
import type { MeterModel } from '../../src/sim/meter-model.js';
import { TcpServer } from '../../src/sim/servers.js';
import { SimulatedMeter } from '../../src/sim/simulated-meter.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const METER = '0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b';

const cleanups = cleanupsAfterEach();

describe('sanity checks in the poller', () => {
  it('drops NaN, impossible power, an energy jump and a counter going backwards, each logged and counted', async () => {
    const now = { total_active_power: 2000, active_energy_import: 1_000_000 };
    const model = { values: () => ({ ...now }) } as unknown as MeterModel;
    const meter = new SimulatedMeter(1, 'sdm630', builtInProfiles.sdm630, model);
    const server = new TcpServer('tcp', (unit) => (unit === 1 ? meter : undefined), { baudRate: 9600, bitsPerChar: 11, turnaroundMs: 0, emulate: false });
    const port = await server.start(0);
    cleanups.push(() => server.stop());

    const logLines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const config = validateConfig(
      {
        organization_id: ORG,
        poll: { interval_ms: 1000 },
        buses: [{ name: 'gw', type: 'tcp', host: '127.0.0.1', tcp_port: port, timeout_ms: 2000 }],
        meters: [{ resource_id: METER, bus: 'gw', unit_id: 1, profile: 'sdm630', max_power_w: 50_000 }],
      },
      'test',
      {},
    );
    const samples: MeterSample[] = [];
    const registry = new Registry();
    const logger = createLogger('warn', sink);
    const events = new EventBus(logger);
    events.on('sample.taken', (s) => samples.push(s));
    const poller = new MeterPoller({ config, logger, clock: systemClock, metrics: registry, events });
    await poller.start();
    cleanups.push(() => poller.stop());

    const dropped = async (reason: string) => {
      const m = (await registry.getMetricsAsJSON()).find((x) => x.name === 'metergate_meter_samples_dropped_total');
      return ((m?.values ?? []) as Array<{ value: number; labels: Record<string, string> }>).filter((v) => v.labels.reason === reason).reduce((a, v) => a + v.value, 0);
    };
    const waitFor = async (check: () => Promise<boolean> | boolean, what: string) => {
      const until = Date.now() + 20_000;
      while (!(await check())) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const value = (s: MeterSample, name: string) => s.metrics.find((m) => m.name === name)!.value;

    await waitFor(() => samples.length >= 2, 'plausible samples');

    now.total_active_power = Number.NaN;
    await waitFor(async () => (await dropped('not_a_number')) >= 1, 'a NaN dropped');
    now.total_active_power = 200_000; // beyond max_power_w
    await waitFor(async () => (await dropped('power_out_of_range')) >= 1, 'impossible power dropped');
    now.total_active_power = 2000;
    now.active_energy_import = 11_000_000; // +10 MWh in seconds
    await waitFor(async () => (await dropped('energy_jump')) >= 1, 'an energy jump dropped');

    // Lower than the last accepted counter: dropped twice, then believed (meter replaced or reset).
    now.active_energy_import = 999_000;
    await waitFor(() => samples.some((s) => value(s, 'active_energy_import') === 999_000), 'the reset counter accepted');
    expect(await dropped('energy_backwards')).toBe(2);

    for (const s of samples) {
      expect(Number.isFinite(value(s, 'total_active_power'))).toBe(true);
      expect(value(s, 'total_active_power')).toBe(2000);
      expect(value(s, 'active_energy_import')).not.toBe(11_000_000);
    }
    const drops = logLines.filter((l) => l.msg === 'implausible sample dropped');
    for (const reason of ['not_a_number', 'power_out_of_range', 'energy_jump', 'energy_backwards']) {
      expect(drops.some((l) => l.reason === reason && l.resource_id === METER), reason).toBe(true);
    }
    expect(logLines.some((l) => String(l.msg).includes('accepting it as a meter reset'))).toBe(true);
  });
});
