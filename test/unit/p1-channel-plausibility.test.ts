// Plausibility of M-Bus channel readings: backwards and faster than the channel's largest flow.
import { describe, expect, it } from 'vitest';
import { checkChannelReading, type ChannelValue } from '../../src/p1/channel-plausibility.js';

const at = (minutes: number, value: number, metric = 'gas_volume'): ChannelValue => ({ capturedAtMs: Date.parse('2026-01-10T12:00:00Z') + minutes * 60_000, metric, value });

describe('M-Bus channel plausibility', () => {
  it('a counter going down is refused, one standing still or rising within the largest flow is not', () => {
    expect(checkChannelReading(at(5, 100.099), at(0, 100.1))).toEqual({ ok: false, reason: 'channel_backwards', detail: 'gas_volume went from 100.1 to 100.099' });
    expect(checkChannelReading(at(5, 100.1), at(0, 100.1))).toEqual({ ok: true });
    // G25: 40 m3/h, so 3.333 m3 in 5 minutes (+ one 0.01 step) at most.
    expect(checkChannelReading(at(5, 103.44), at(0, 100.1))).toEqual({ ok: true });
    expect(checkChannelReading(at(5, 103.45), at(0, 100.1))).toMatchObject({ ok: false, reason: 'channel_jump' });
    // An hourly DSMR 4 channel may rise 40 m3 an hour; a day without readings 960.
    expect(checkChannelReading(at(60, 140), at(0, 100.1))).toEqual({ ok: true });
    expect(checkChannelReading(at(24 * 60, 1000), at(0, 100.1))).toEqual({ ok: true });
    expect(checkChannelReading(at(0, 100.2), at(0, 100.1))).toMatchObject({ ok: false, reason: 'channel_jump' });
  });

  it('water by its own limit (10 m3/h), heat in Wh (100 kW); the first reading and another metric are not judged', () => {
    expect(checkChannelReading(at(60, 12, 'water_volume'), at(0, 1, 'water_volume'))).toMatchObject({ ok: false, reason: 'channel_jump' });
    expect(checkChannelReading(at(60, 10, 'water_volume'), at(0, 1, 'water_volume'))).toEqual({ ok: true });
    expect(checkChannelReading(at(60, 200_000, 'heat_energy'), at(0, 50_000, 'heat_energy'))).toMatchObject({ ok: false, reason: 'channel_jump', detail: 'heat_energy rose 150000 in 60 min (at most 101000 at 100000/h)' });
    expect(checkChannelReading(at(0, 5), null)).toEqual({ ok: true });
    expect(checkChannelReading(at(5, 1, 'water_volume'), at(0, 100))).toEqual({ ok: true });
  });
});
