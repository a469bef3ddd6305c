// The poller says when a poll tick is done — every meter polled in it answered or failed —
// after all of that tick's samples went out, so the store commits a tick in one durable
// transaction (docs/uplink.md). Two simulated SDM630s answer over Modbus TCP; a third unit
// is silent and costs each tick its timeout.
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { METER_A, METER_B, METER_C, startPoller } from '../helpers/poller-harness.js';
import { startSim } from '../helpers/sim-process.js';

const { track } = cleanupsAfterEach();

describe('poll tick done', () => {
  it('comes once per tick, after every sample of the tick and after the silent meter timed out', async () => {
    const sim = track(await startSim(['--tcp', '0', '--unit', '1,2']));
    const h = track(
      await startPoller({
        poll: { interval_ms: 1000, offline_after_misses: 100 },
        buses: [{ name: 'gw', type: 'tcp', host: '127.0.0.1', tcp_port: sim.ready.tcpPort, timeout_ms: 300, retries: 0 }],
        meters: [
          { resource_id: METER_A, bus: 'gw', unit_id: 1, profile: 'sdm630' },
          { resource_id: METER_B, bus: 'gw', unit_id: 2, profile: 'sdm630' },
          { resource_id: METER_C, bus: 'gw', unit_id: 3, profile: 'sdm630' },
        ],
      }),
    );
    // At each tick-done: which samples came since the previous one, and the silent meter's misses.
    const ticks: Array<{ resources: string[]; misses: number }> = [];
    let seen = 0;
    h.events.on('poll.tick-done', () => {
      ticks.push({ resources: h.samples.slice(seen).map((s) => s.resourceId).sort(), misses: h.poller.statuses().find((s) => s.resourceId === METER_C)!.consecutiveMisses });
      seen = h.samples.length;
    });
    await h.waitFor(() => ticks.length >= 5, 'five ticks', 60_000);
    // The first tick-done may come in the middle of a tick; after it each one closes one tick.
    for (const [i, t] of ticks.slice(1).entries()) {
      expect(t.resources).toEqual([METER_A, METER_B].sort());
      expect(t.misses).toBe(ticks[1].misses + i); // the silent meter's poll ended before it
    }
  });
});
