import { describe, expect, it } from 'vitest';
import { METER_A, METER_B, startPoller, stateOf } from '../helpers/poller-harness.js';
import { startSim } from '../helpers/sim-process.js';
import { startPtyPair } from '../helpers/socat.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';

const cleanups = cleanupsAfterEach();
const { track, trackPair } = cleanups;

describe('Modbus faults: meters', () => {
  it('a killed slave goes offline while a meter on another bus keeps going, and comes back when restarted', async () => {
    const pair = trackPair(await startPtyPair());
    const simA = track(await startSim(['--serial', pair.b, '--unit', '1']));
    const simB = track(await startSim(['--tcp', '0', '--unit', '7']));
    const changes: string[] = [];
    const h = track(
      await startPoller({
        poll: { interval_ms: 1000, offline_after_misses: 2, reprobe_initial_ms: 1000, reprobe_max_ms: 2000 },
        buses: [
          { name: 'rs485', type: 'rtu', port: pair.a, timeout_ms: 400, retries: 0 },
          { name: 'gw', type: 'tcp', host: '127.0.0.1', tcp_port: simB.ready.tcpPort, timeout_ms: 1000 },
        ],
        meters: [
          { resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630' },
          { resource_id: METER_B, bus: 'gw', unit_id: 7, profile: 'sdm630' },
        ],
      }),
    );
    h.events.on('meter.state-changed', ({ statuses }) => changes.push(statuses.map((x) => `${x.resourceId.slice(0, 4)}=${x.state}`).join(',')));
    await h.waitFor(() => h.samplesOf(METER_A).length >= 2 && h.samplesOf(METER_B).length >= 2, 'both meters answering');

    await simA.kill();
    await h.waitFor(() => stateOf(h, METER_A) === 'offline', 'meter A offline');
    const aCount = h.samplesOf(METER_A).length;
    const bCount = h.samplesOf(METER_B).length;
    await h.waitFor(() => h.samplesOf(METER_B).length >= bCount + 2, 'meter B to keep publishing');
    expect(h.samplesOf(METER_A).length).toBe(aCount);
    expect(stateOf(h, METER_B)).toBe('online');
    expect(h.poller.busScan().find((b) => b.bus === 'rs485')?.unit_ids).toEqual([]);
    expect(h.poller.busScan().find((b) => b.bus === 'gw')?.unit_ids).toEqual([7]);
    expect(changes.some((c) => c.includes(`${METER_A.slice(0, 4)}=offline`))).toBe(true);
    expect(await h.metric('metergate_meter_poll_failures_total', { resource_id: METER_A })).toBeGreaterThanOrEqual(2);

    // the meter returns: the backoff re-probe finds it without a restart
    track(await startSim(['--serial', pair.b, '--unit', '1']));
    await h.waitFor(() => stateOf(h, METER_A) === 'online' && h.samplesOf(METER_A).length > aCount, 'meter A back online');
  });

  it('a dead meter on the same bus does not make the live one miss', async () => {
    const pair = trackPair(await startPtyPair());
    track(await startSim(['--serial', pair.b, '--unit', '1']));
    const h = track(
      await startPoller({
        poll: { interval_ms: 1000, offline_after_misses: 2, reprobe_initial_ms: 1000, reprobe_max_ms: 1000 },
        buses: [{ name: 'rs485', type: 'rtu', port: pair.a, timeout_ms: 800, retries: 0 }],
        meters: [
          { resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630' },
          { resource_id: METER_B, bus: 'rs485', unit_id: 9, profile: 'sdm630' }, // nobody home
        ],
      }),
    );
    await h.waitFor(() => stateOf(h, METER_B) === 'offline', 'silent meter offline');
    const polls = await h.metric('metergate_meter_polls_total', { resource_id: METER_A });
    // several re-probes of the dead meter interleave with the live meter's polls
    await h.waitFor(() => h.samplesOf(METER_A).length >= polls + 4, 'live meter keeps its rhythm');
    expect(await h.metric('metergate_meter_poll_failures_total', { resource_id: METER_A })).toBe(0);
    expect(stateOf(h, METER_A)).toBe('online');
    expect(await h.metric('metergate_meter_poll_failures_total', { resource_id: METER_B })).toBeGreaterThanOrEqual(4);
  });


});
