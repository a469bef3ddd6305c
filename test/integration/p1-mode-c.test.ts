// An IEC 62056-21 mode C meter (`mode: C` on a p1 bus): the P1 source asks it each poll slot
// on a socat pty, where a simulated meter answers with a real recorded readout (Itron EM214,
// test/data/iec62056-21/itron_em214_mode_c.txt): sign-on at 300 baud, option select for the
// meter's 9600 (the meter checks the gateway's speed with stty), data block with BCC. A wrong
// BCC and a meter that does not answer are counted and named; the next poll asks again.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { ConfigError, validateConfig } from '../../src/config/load.js';
import type { MeterSample, MeterStatus } from '../../src/domain.js';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { ALL_CHECKS, formatResult, runDoctor } from '../../src/ops/doctor/run.js';
import type { BusConfig } from '../../src/config/types.js';
import { P1Connection } from '../../src/p1/connection.js';
import { ModeCSession } from '../../src/p1/mode-c-session.js';
import { P1Source } from '../../src/p1/p1-source.js';
import type { ReaderEvent } from '../../src/p1/reader.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { startMeterRig } from '../helpers/meter-rig.js';
import { startModeCMeter, type ModeCMeter } from '../helpers/mode-c-meter.js';
import { hasSocat } from '../helpers/peers.js';
import { METER_A, METER_B, ORG } from '../helpers/poller-harness.js';
import { seriesValue } from '../helpers/prom-text.js';
import { removeDir, startPtyPair } from '../helpers/socat.js';
import { until } from '../helpers/wait.js';

const RECORDING = fileURLToPath(new URL('../data/iec62056-21/itron_em214_mode_c.txt', import.meta.url));
const EM214 = [
  { name: 'total_active_power', value: 490, unit: 'W' },
  { name: 'active_energy_import', value: 22_108_700, unit: 'Wh' },
  { name: 'active_energy_export', value: 10_452_000, unit: 'Wh' },
  { name: 'current_l1', value: 0.8, unit: 'A' },
  { name: 'current_l2', value: 0.7, unit: 'A' },
  { name: 'current_l3', value: 1.2, unit: 'A' },
];

describe.skipIf(!hasSocat)('an IEC 62056-21 mode C meter on a P1 bus', () => {
  const cleanup = cleanupsAfterEach();
  let source: P1Source | null = null;
  afterEach(async () => {
    await source?.stop();
    source = null;
  });

  async function start(): Promise<{ meter: ModeCMeter; metrics: Registry; samples: MeterSample[]; status: () => MeterStatus }> {
    const pair = await startPtyPair();
    cleanup.push(async () => {
      await pair.stop();
      removeDir(pair.dir);
    });
    const meter = await startModeCMeter({ recording: RECORDING, gatewaySide: pair.a, meterSide: pair.b });
    cleanup.push(() => meter.stop());
    const config = validateConfig({ organization_id: ORG, poll: { interval_ms: 1000, offline_after_misses: 2 }, buses: [{ name: 'optical', type: 'p1', port: pair.a, mode: 'C' }], meters: [{ resource_id: METER_A, bus: 'optical' }] }, 'test', {});
    const metrics = new Registry();
    const logger = createLogger('silent');
    const events = new EventBus(logger);
    const samples: MeterSample[] = [];
    events.on('sample.taken', (s) => void samples.push(s));
    source = new P1Source({ config, logger, clock: systemClock, metrics, events });
    await source.start();
    return { meter, metrics, samples, status: () => source!.statuses()[0]! };
  }

  const outcome = async (metrics: Registry, o: string) => seriesValue(await metrics.metrics(), 'metergate_p1_telegrams_total', { bus: 'optical', outcome: o }) ?? 0;

  it('asks at 300 baud, selects the 9600 its identification proposes, and publishes the recorded readout; its id and maker', { timeout: 60_000 }, async () => {
    const { meter, metrics, samples, status } = await start();
    await until(() => samples.length >= 2, 'two samples of the mode C meter', 30_000);
    for (const s of samples) expect(s.metrics).toEqual(EM214);
    expect(meter.signOnSpeeds.length).toBeGreaterThanOrEqual(2);
    expect(new Set(meter.signOnSpeeds)).toEqual(new Set([300]));
    expect(new Set(meter.optionSelects)).toEqual(new Set(['\x06050\r\n']));
    expect(meter.unexpected).toEqual([]);
    expect(source!.identity(METER_A)).toEqual({ vendor: 'Itron', model: 'EM214', serialNumber: '1240007670003202', firmware: 'V01.69#EEA3546C' });
    expect(status()).toMatchObject({ state: 'online', problem: null });
    expect(await outcome(metrics, 'ok')).toBeGreaterThanOrEqual(2);
    expect(await outcome(metrics, 'bcc')).toBe(0);
  });

  it('a readout whose BCC is wrong is dropped and counted, one that does not come is no_answer; each named, and the next poll asks again', { timeout: 90_000 }, async () => {
    const { meter, metrics, samples, status } = await start();
    await until(() => samples.length >= 1, 'a first sample', 30_000);

    // One bit flipped in the data (a digit of a value): the BCC no longer matches.
    meter.answer((block) => {
      const out = Buffer.from(block);
      out[40]! ^= 0x01;
      return out;
    });
    await until(async () => (await outcome(metrics, 'bcc')) >= 2, 'two readouts dropped for their BCC', 30_000);
    await until(() => status().state === 'offline', 'the meter offline after two slots without a readout', 30_000);
    expect(status().problem).toMatch(/^mode C readouts dropped for bit errors \(\d+ failed their BCC\): seat the optical reading head/);
    for (const s of samples) expect(s.metrics).toEqual(EM214);

    meter.answer(null);
    const before = samples.length;
    await until(() => samples.length > before && status().state === 'online', 'samples again once the readouts are whole', 30_000);
    expect(status().problem).toBeNull();

    meter.answer('silent');
    await until(async () => (await outcome(metrics, 'no_answer')) >= 2, 'two sign-ons without an answer', 30_000);
    await until(() => status().state === 'offline', 'offline while the meter is silent', 30_000);
    expect(status().problem).toMatch(/^no answer to the sign-on request \(\/\?! at 300 baud 7E1\)/);
    meter.answer(null);
    const again = samples.length;
    await until(() => samples.length > again, 'samples once it answers again', 30_000);
    for (const s of samples) expect(s.metrics).toEqual(EM214);
  });

  it('a slow block is read as long as it keeps coming: the timeout counts from its last bytes, not from the option select', { timeout: 60_000 }, async () => {
    const pair = await startPtyPair();
    cleanup.push(async () => {
      await pair.stop();
      removeDir(pair.dir);
    });
    const meter = await startModeCMeter({ recording: RECORDING, gatewaySide: pair.a, meterSide: pair.b });
    cleanup.push(() => meter.stop());
    // 8 pieces 600 ms apart: 4.2 s for the block, each gap well inside the 2.5 s allowed (as a
    // long readout at 300 baud takes minutes, each character within the standard's 1.5 s).
    meter.pace({ pieces: 8, gapMs: 600 });
    const events: ReaderEvent[] = [];
    const bus: BusConfig = { name: 'optical', type: 'p1', port: pair.a, mode: 'C', tcp_port: 0, baud_rate: 300, parity: 'even', data_bits: 7, stop_bits: 1, timeout_ms: 1000, retries: 0 };
    let session: ModeCSession | null = null;
    const connection = new P1Connection({ bus, logger: createLogger('silent'), reopenMaxMs: 1000, onOpen: () => session?.request(), onData: (text) => session?.data(text) });
    session = new ModeCSession({ connection, blockTimeoutMs: 2_500, onEvent: (event) => void events.push(event) });
    cleanup.push(async () => {
      session?.stop();
      await connection.close();
    });
    connection.open();
    await until(() => events.length >= 1, 'the readout ended', 30_000);
    const [event] = events;
    expect(event).toMatchObject({ kind: 'whole', outcome: { kind: 'ok' } });
    if (event?.kind === 'whole' && event.outcome.kind === 'ok') expect(event.outcome.reading.metrics).toEqual(EM214);
    expect(meter.readouts()).toBe(1);
  });

  it('metergate run reads it: the readout on /status.json and /metrics, its boot identity from the readout', { timeout: 120_000 }, async () => {
    const pair = await startPtyPair();
    cleanup.push(async () => {
      await pair.stop();
      removeDir(pair.dir);
    });
    const meter = await startModeCMeter({ recording: RECORDING, gatewaySide: pair.a, meterSide: pair.b });
    cleanup.push(() => meter.stop());
    const rig = await startMeterRig({
      tmpPrefix: 'mg-mode-c-run-',
      http: true,
      config: () => ({ poll: { interval_ms: 1000 }, buses: [{ name: 'optical', type: 'p1', port: pair.a, mode: 'C' }], meters: [{ resource_id: METER_A, bus: 'optical' }] }),
    });
    cleanup.push(() => rig.stop());
    const ok = async () => seriesValue(await (await fetch(`${rig.httpBase}/metrics`)).text(), 'metergate_p1_telegrams_total', { bus: 'optical', outcome: 'ok' }) ?? 0;
    await until(async () => (await ok()) >= 2, 'two mode C readouts in the running daemon', 60_000);
    const status = (await (await fetch(`${rig.httpBase}/status.json`)).json()) as { meters: Array<{ resource_id: string; state: string; problem: string | null }> };
    expect(status.meters.find((m) => m.resource_id === METER_A)).toMatchObject({ state: 'online', problem: null });
    expect(new Set(meter.signOnSpeeds)).toEqual(new Set([300]));
  });

  it('doctor asks it once: passes the meter with its id and values, fails a silent port with the fix', { timeout: 60_000 }, async () => {
    const pairs = [await startPtyPair(), await startPtyPair()];
    const dir = mkdtempSync(join(tmpdir(), 'mg-mode-c-doctor-'));
    cleanup.push(async () => {
      for (const p of pairs) {
        await p.stop();
        removeDir(p.dir);
      }
      rmSync(dir, { recursive: true, force: true });
    });
    const meter = await startModeCMeter({ recording: RECORDING, gatewaySide: pairs[0]!.a, meterSide: pairs[0]!.b });
    cleanup.push(() => meter.stop());
    const configPath = join(dir, 'config.yaml');
    writeFileSync(
      configPath,
      stringify({
        organization_id: ORG,
        data_dir: join(dir, 'data'),
        buses: [
          { name: 'optical-a', type: 'p1', port: pairs[0]!.a, mode: 'C' },
          { name: 'optical-b', type: 'p1', port: pairs[1]!.a, mode: 'C' },
        ],
        meters: [
          { resource_id: METER_A, bus: 'optical-a' },
          { resource_id: METER_B, bus: 'optical-b' },
        ],
        prices: { source: 'none' },
      }),
    );
    const results = await runDoctor({ configPath, checks: ALL_CHECKS.filter((c) => c.name === 'config' || c.name === 'meters'), timeoutMs: 3000, serviceUser: 'root' });
    const text = results.map(formatResult).join('\n');
    const of = (id: string) => results.find((r) => r.check === `meter ${id.slice(0, 8)}`)!;
    expect(of(METER_A), text).toMatchObject({ status: 'pass' });
    expect(of(METER_A).detail).toMatch(/^optical-a P1 meter \(.*\): IEC 62056-21 mode C meter 1240007670003202 \(Itron EM214\), asked with the sign-on request, BCC checked: 490 W, 22108\.7 kWh imported$/);
    expect(meter.signOnSpeeds).toEqual([300]);
    expect(of(METER_B), text).toMatchObject({ status: 'fail', fix: expect.stringMatching(/^no answer to the sign-on request/) });
    expect(of(METER_B).detail).toMatch(/no whole mode C readout after the sign-on request \(0 bytes; dropped: 1 no_answer/);
  });

  it('mode C needs a serial port and no line setting', () => {
    const problems = (bus: Record<string, unknown>) => {
      try {
        validateConfig({ organization_id: ORG, buses: [{ name: 'optical', ...bus, mode: 'C' }], meters: [{ resource_id: METER_A, bus: 'optical' }] }, 'test', {});
        return [];
      } catch (err) {
        if (err instanceof ConfigError) return err.problems;
        throw err;
      }
    };
    expect(problems({ type: 'p1', port: '/dev/ttyUSB0' })).toEqual([]);
    expect(problems({ type: 'p1-tcp', host: '127.0.0.1', tcp_port: 2001 }).join('\n')).toMatch(/mode C, which needs type p1 \(a serial port\)/);
    expect(problems({ type: 'p1', port: '/dev/ttyUSB0', line: '9600 7E1' }).join('\n')).toMatch(/leave line out/);
  });
});
