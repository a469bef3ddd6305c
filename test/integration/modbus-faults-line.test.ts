import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { METER_A, METER_B, metricValue, startPoller, stateOf } from '../helpers/poller-harness.js';
import { startNoisyLine } from '../helpers/noisy-line.js';
import { startSim } from '../helpers/sim-process.js';
import { removeDir, startPtyPair, startTappedLine } from '../helpers/socat.js';
import { freePort } from '../../src/free-port.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { until } from '../helpers/wait.js';
import { slotAt } from '../../src/modbus/slots.js';

const cleanups = cleanupsAfterEach();
const { track } = cleanups;

/** A USB RS-485 adapter with a simulated meter (unit 3) behind it, to unplug and plug back in. */
async function usbAdapter(): Promise<{ readonly port: string; unplug(): Promise<void>; plugBack(): Promise<void> }> {
  let pair = await startPtyPair();
  const dir = pair.dir;
  cleanups.push(async () => {
    await pair.stop();
    removeDir(dir);
  });
  track(await startSim(['--serial', pair.b, '--unit', '3']));
  return {
    port: pair.a,
    // The device nodes vanish, as when the adapter is pulled out.
    unplug: () => pair.stop(),
    // Re-enumerated under the same name; the simulator reopens its end.
    plugBack: async () => {
      pair = await startPtyPair(dir);
    },
  };
}

describe('Modbus faults: the line', () => {
  it('garbage bytes on the line: the bus recovers and no corrupt value gets through', async () => {
    const line = track(await startTappedLine());
    track(await startSim(['--serial', line.meterSide, '--unit', '1,2']));
    const h = track(
      await startPoller({
        poll: { interval_ms: 1000, offline_after_misses: 3, reprobe_initial_ms: 1000, reprobe_max_ms: 2000 },
        buses: [{ name: 'rs485', type: 'rtu', port: line.gatewaySide, timeout_ms: 300, retries: 2 }],
        meters: [
          { resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630', extra_metrics: ['voltage_l1'] },
          { resource_id: METER_B, bus: 'rs485', unit_id: 2, profile: 'sdm630', extra_metrics: ['voltage_l1'] },
        ],
      }),
    );
    await h.waitFor(() => h.samplesOf(METER_A).length >= 1 && h.samplesOf(METER_B).length >= 1, 'first samples');

    // Noise for 2.5 s in both directions: junk between frames, and frames hit by junk in
    // front, junk behind and flipped bits, including bytes that look like the start of an
    // answer (unit id + function code).
    let hit = 0;
    line.mangle((chunk, towardsGateway) => {
      const kind = hit++ % 4;
      if (kind === 0) return Buffer.concat([Buffer.from([1, 4, 24]), randomBytes(5), chunk]);
      if (kind === 1) return Buffer.concat([chunk, randomBytes(7)]);
      if (kind === 2) {
        const c = Buffer.from(chunk);
        c[Math.floor(c.length / 2)] ^= 0x5a;
        return c;
      }
      return towardsGateway ? Buffer.concat([randomBytes(3), chunk.subarray(0, Math.max(1, chunk.length - 4))]) : chunk;
    });
    const garbled = async () => (await h.metric('metergate_modbus_requests_total', { outcome: 'frame_error' })) + (await h.metric('metergate_modbus_requests_total', { outcome: 'timeout' }));
    // At least 2.5 s, and on until the noise has hit a request (a starved poller may not
    // have sent one in the 2.5 s); bounded, so a poller that never notices fails here.
    const minimumUntil = Date.now() + 2500;
    const bound = Date.now() + 60_000;
    let bursts = 0;
    while (Date.now() < minimumUntil || ((await garbled()) === 0 && Date.now() < bound)) {
      await line.inject(randomBytes(1 + (bursts % 40)), bursts % 2 === 0);
      bursts++;
      await new Promise((r) => setTimeout(r, 15));
    }
    line.mangle(null);
    expect(await garbled()).toBeGreaterThan(0);
    const after = h.samples.length;
    await h.waitFor(() => h.samples.length >= after + 4 && h.samplesOf(METER_A).length >= 3 && h.samplesOf(METER_B).length >= 3, 'samples after the noise', 15_000);
    await h.waitFor(() => h.poller.statuses().every((s) => s.state === 'online'), 'both meters online');
    for (const s of h.samples) {
      expect(metricValue(s, 'voltage_l1')).toBeGreaterThan(220);
      expect(metricValue(s, 'voltage_l1')).toBeLessThan(240);
      expect(metricValue(s, 'total_active_power')).toBeGreaterThan(0);
      expect(metricValue(s, 'total_active_power')).toBeLessThan(20_000);
    }
    expect(await h.metric('metergate_modbus_requests_total', { outcome: 'ok' })).toBeGreaterThan(0);
  });

  it('a USB adapter that vanishes and returns is reopened without a restart', async () => {
    const usb = await usbAdapter();
    const h = track(
      await startPoller({
        poll: { interval_ms: 1000, offline_after_misses: 2, reprobe_initial_ms: 1000, reprobe_max_ms: 2000 },
        buses: [{ name: 'usb', type: 'rtu', port: usb.port, timeout_ms: 400, retries: 0 }],
        meters: [{ resource_id: METER_A, bus: 'usb', unit_id: 3, profile: 'sdm630' }],
      }),
    );
    await h.waitFor(() => h.samplesOf(METER_A).length >= 2, 'first samples');

    await usb.unplug();
    await h.waitFor(() => stateOf(h, METER_A) === 'offline', 'meter offline while the adapter is gone');
    const before = h.samplesOf(METER_A).length;

    await usb.plugBack();
    await h.waitFor(() => h.samplesOf(METER_A).length >= before + 2, 'samples after the adapter returned', 25_000);
    expect(stateOf(h, METER_A)).toBe('online');
    expect(await h.metric('metergate_modbus_port_reopens_total', { bus: 'usb' })).toBeGreaterThanOrEqual(1);
  });
  it('a serial port that reappears is probed in the next slot, not when the offline backoff runs out', async () => {
    const usb = await usbAdapter();
    const intervalMs = 1000;
    const h = track(
      await startPoller({
        // a silent meter would next be probed 30 slots later
        poll: { interval_ms: intervalMs, offline_after_misses: 2, reprobe_initial_ms: 30_000, reprobe_max_ms: 60_000 },
        buses: [{ name: 'usb', type: 'rtu', port: usb.port, timeout_ms: 400, retries: 1 }],
        meters: [{ resource_id: METER_A, bus: 'usb', unit_id: 3, profile: 'sdm630' }],
      }),
    );
    await h.waitFor(() => h.samplesOf(METER_A).length >= 2, 'first samples');

    await usb.unplug();
    await h.waitFor(() => stateOf(h, METER_A) === 'offline', 'meter offline while the adapter is gone');
    // gone for three slots more, so the port's absence is established
    const offlineSlot = slotAt(Date.now(), intervalMs);
    await until(() => slotAt(Date.now(), intervalMs) >= offlineSlot + 3, 'three slots without the port');
    const before = h.samplesOf(METER_A).length;

    await usb.plugBack();
    const returnedSlot = slotAt(Date.now(), intervalMs);
    await h.waitFor(() => h.samplesOf(METER_A).length > before, 'a sample after the adapter returned', 25_000);
    // The next slot probes the port; the simulator needs a moment to reopen its end of the
    // pty, so allow one slot more. Waiting out the backoff would take 30.
    expect(slotAt(h.samplesOf(METER_A)[before].sampledAtMs, intervalMs) - returnedSlot).toBeLessThanOrEqual(3);
    expect(stateOf(h, METER_A)).toBe('online');
    expect(await h.metric('metergate_modbus_port_reopens_total', { bus: 'usb' })).toBeGreaterThanOrEqual(1);
  });

  it('on a line corrupting 5 % of the bytes the meter is probed every slot with retries, not left on a backoff', { timeout: 180_000 }, async () => {
    const line = track(await startNoisyLine(0, 7));
    track(await startSim(['--serial', line.meterSide, '--unit', '1']));
    const intervalMs = 1000;
    const h = track(
      await startPoller({
        // a silent offline meter would wait 3 slots, then 6, 12, 24
        poll: { interval_ms: intervalMs, offline_after_misses: 3, reprobe_initial_ms: 3000, reprobe_max_ms: 30_000 },
        buses: [{ name: 'noisy', type: 'rtu', port: line.gatewaySide, timeout_ms: 200, retries: 1 }],
        meters: [{ resource_id: METER_A, bus: 'noisy', unit_id: 1, profile: 'sdm630' }],
      }),
    );
    await h.waitFor(() => h.samplesOf(METER_A).length >= 1, 'a first sample on the clean line');
    await line.setRate(0.05);
    const slots = 40;
    const first = slotAt(Date.now(), intervalMs) + 1;
    const pollsBefore = await h.metric('metergate_meter_polls_total', { resource_id: METER_A });
    await until(() => slotAt(Date.now(), intervalMs) >= first + slots, `${slots} noisy slots`, 120_000);
    const polls = (await h.metric('metergate_meter_polls_total', { resource_id: METER_A })) - pollsBefore;
    const stats = await line.stats();
    expect(stats.corrupted).toBeGreaterThan(0);

    const published = new Set(h.samplesOf(METER_A).map((s) => slotAt(s.sampledAtMs, intervalMs)));
    let gap = 0;
    let longestGap = 0;
    let count = 0;
    for (let slot = first; slot < first + slots; slot++) {
      if (published.has(slot)) {
        count++;
        gap = 0;
      } else longestGap = Math.max(longestGap, ++gap);
    }
    // About 40 % of polls get through at 5 % (each request 17 bytes on the wire, one retry).
    // Offline or not, a meter that garbles answers is polled or probed in (nearly) every slot
    // (a tick is skipped only if a poll outlasts its slot), so it is never dark for long.
    expect(polls).toBeGreaterThanOrEqual(slots - 3);
    expect(count).toBeGreaterThanOrEqual(6);
    expect(longestGap).toBeLessThanOrEqual(20);
    for (const s of h.samplesOf(METER_A)) expect(metricValue(s, 'total_active_power')).toBeGreaterThan(0);
  });

  it('a Modbus TCP gateway that restarts is reconnected', async () => {
    const port = await freePort();
    const gw = await startSim(['--tcp', String(port), '--unit', '4']);
    const h = track(
      await startPoller({
        poll: { interval_ms: 1000, offline_after_misses: 2, reprobe_initial_ms: 1000, reprobe_max_ms: 2000 },
        buses: [{ name: 'gw', type: 'tcp', host: '127.0.0.1', tcp_port: port, timeout_ms: 500, retries: 0 }],
        meters: [{ resource_id: METER_A, bus: 'gw', unit_id: 4, profile: 'sdm630' }],
      }),
    );
    await h.waitFor(() => h.samplesOf(METER_A).length >= 2, 'first samples');
    await gw.kill();
    await h.waitFor(() => stateOf(h, METER_A) === 'offline', 'offline while the gateway is down');
    const before = h.samplesOf(METER_A).length;
    track(await startSim(['--tcp', String(port), '--unit', '4']));
    await h.waitFor(() => h.samplesOf(METER_A).length >= before + 2, 'samples after the gateway restarted', 25_000);
    expect(stateOf(h, METER_A)).toBe('online');
  });
});
