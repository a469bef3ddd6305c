// Plausibility of M-Bus channel readings: backwards and faster than the channel's largest flow.
import { describe, expect, it } from 'vitest';
import { CHANNEL_BELIEVE_AFTER, channelPlausibilityFrom, checkChannelReading, judgeChannelReading, NO_CHANNEL_READING, type ChannelValue } from '../../src/p1/channel-plausibility.js';

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

describe('M-Bus channel: a new level is believed after three readings that agree, either way', () => {
  /** Runs hourly gas readings through the judgement: which were handed on. */
  function run(values: readonly number[]): { published: number[]; believed: string[] } {
    let state = NO_CHANNEL_READING;
    const published: number[] = [];
    const believed: string[] = [];
    values.forEach((value, hour) => {
      const judgement = judgeChannelReading(state, at(hour * 60, value));
      state = judgement.state;
      if (judgement.ok) published.push(value);
      if (judgement.ok && judgement.believed) believed.push(judgement.believed);
    });
    return { published, believed };
  }

  it('a replaced meter with a higher counter is believed at its third reading, not after days', () => {
    expect(CHANNEL_BELIEVE_AFTER).toBe(3);
    const { published, believed } = run([1000, 1000.5, 5000, 5000.4, 5000.9, 5001.2]);
    expect(published).toEqual([1000, 1000.5, 5000.9, 5001.2]);
    expect(believed).toEqual([expect.stringMatching(/3 readings in a row agree: a new level/)]);
  });

  it('a replaced meter with a lower counter likewise', () => {
    expect(run([1000, 1000.5, 3, 3.2, 3.3, 3.5]).published).toEqual([1000, 1000.5, 3.3, 3.5]);
  });

  it('refused readings that do not agree with each other never make a level: the chain starts again', () => {
    // 9000 is a jump after 5000, and 5000.3 goes back after 9000: each starts the chain again.
    expect(run([1000, 5000, 9000, 5000.3, 5000.6]).published).toEqual([1000]);
    expect(run([1000, 5000, 9000, 5000.3, 5000.6, 5000.9]).published).toEqual([1000, 5000.9]);
    // A single garbled reading between true ones costs only itself.
    expect(run([1000, 7000, 1000.4, 1000.8]).published).toEqual([1000, 1000.4, 1000.8]);
    expect(run([1000, 3, 1000.4, 1000.8]).published).toEqual([1000, 1000.4, 1000.8]);
  });

  it('a garbled digit within the limit (DSMR 2.2, no CRC) is published, but the true readings after it are not lost', () => {
    // 100.5 -> 130.5 in an hour is within G25's 40 m3/h; 100.7 is then backwards after 130.5 but
    // plausible after 100.5: 130.5 was the outlier.
    const { published, believed } = run([100.3, 100.5, 130.5, 100.7, 100.9]);
    expect(published).toEqual([100.3, 100.5, 130.5, 100.7, 100.9]);
    expect(believed).toEqual([expect.stringMatching(/130\.5 was the outlier/)]);
  });

  it('the first reading (after a start: the reference is in memory only) is not judged', () => {
    expect(run([5000]).published).toEqual([5000]);
  });
});

describe('M-Bus channel: after a restart, judged against the readings the store kept', () => {
  const stored = (v: ChannelValue) => ({ sampledAtMs: v.capturedAtMs, metrics: [{ name: v.metric, value: v.value, unit: 'm3' }] });

  it('the last two stored readings are the reference and the one before: a register gone backwards while the gateway was down is refused', () => {
    const state = channelPlausibilityFrom([stored(at(60, 100.5)), stored(at(0, 100))]);
    expect(state).toEqual({ reference: at(60, 100.5), beforeReference: at(0, 100), candidates: [] });
    expect(judgeChannelReading(state, at(120, 99))).toMatchObject({ ok: false, reason: 'channel_backwards', detail: 'gas_volume went from 100.5 to 99' });
    expect(judgeChannelReading(state, at(120, 100.6)).ok).toBe(true);
    // The limit counts from the stored reading's time: a day down allows a day's flow.
    expect(judgeChannelReading(state, at(24 * 60 + 60, 900)).ok).toBe(true);
  });

  it('nothing stored, or nothing with limits: the first reading is believed, as before', () => {
    expect(channelPlausibilityFrom([])).toEqual(NO_CHANNEL_READING);
    expect(channelPlausibilityFrom([{ sampledAtMs: 0, metrics: [{ name: 'total_active_power', value: 5, unit: 'W' }] }])).toEqual(NO_CHANNEL_READING);
  });
});
