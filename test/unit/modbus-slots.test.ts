import { describe, expect, it } from 'vitest';
import { nextSlot, slotAt } from '../../src/modbus/slots.js';

const I = 10_000;
const at = (h: number, m: number, s: number, ms = 0) => Date.UTC(2026, 0, 1, h, m, s, ms);

describe('poll slots on the wall clock', () => {
  it('arms the first timer for the next multiple of the interval, never for now', () => {
    expect(nextSlot(at(12, 0, 3, 250), I, null)).toEqual({ slot: slotAt(at(12, 0, 10), I), delayMs: 6_750 });
    expect(nextSlot(at(12, 0, 10), I, null)).toEqual({ slot: slotAt(at(12, 0, 20), I), delayMs: 10_000 });
    expect(nextSlot(at(12, 0, 59, 999), I, null)).toEqual({ slot: slotAt(at(12, 1, 0), I), delayMs: 1 });
  });

  it('a timer that fires a millisecond early moves on to the following slot', () => {
    const s = slotAt(at(12, 0, 10), I);
    // armed for :10, fired at :09.999 by the wall clock
    expect(nextSlot(at(12, 0, 9, 999), I, s)).toEqual({ slot: s + 1, delayMs: 10_001 });
    const subMs = nextSlot(at(12, 0, 10) - 0.4, I, s);
    expect(subMs.slot).toBe(s + 1);
    expect(subMs.delayMs).toBeCloseTo(10_000.4, 2);
    // on time and late: the next slot, as before
    expect(nextSlot(at(12, 0, 10), I, s)).toEqual({ slot: s + 1, delayMs: 10_000 });
    expect(nextSlot(at(12, 0, 10, 7), I, s)).toEqual({ slot: s + 1, delayMs: 9_993 });
  });

  it('a timer that fires more than an interval late polls once and skips what it overslept', () => {
    const s = slotAt(at(12, 0, 10), I);
    expect(nextSlot(at(12, 0, 45), I, s)).toEqual({ slot: s + 4, delayMs: 5_000 });
  });

  it('realigns to a wall clock stepped back, without waiting for the old time to come again', () => {
    const s = slotAt(at(12, 0, 10), I);
    const r = nextSlot(at(11, 0, 10, 2), I, s);
    expect(r.slot).toBe(slotAt(at(11, 0, 20), I));
    expect(r.delayMs).toBe(9_998);
    // stepped back less than an interval: the slot just polled is not polled again
    expect(nextSlot(at(12, 0, 7), I, s)).toEqual({ slot: s + 1, delayMs: 13_000 });
  });

  it('every slot is polled exactly once when timers fire early and late', () => {
    // A timer fires delayMs after it was armed, give or take a jitter, measured on the wall
    // clock; the poller re-arms from the fire time.
    const jitterMs = [-1, 0, -0.3, 4, -2, 25, -1, -1, 0.5, -9];
    let now = at(12, 0, 3, 250);
    let polled: number | null = null;
    const slots: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const { slot, delayMs } = nextSlot(now, I, polled);
      now += delayMs + jitterMs[i % jitterMs.length];
      polled = slot;
      slots.push(slot);
      // the fire is within the jitter of the slot's start
      expect(Math.abs(now - slot * I)).toBeLessThanOrEqual(25);
    }
    for (let i = 1; i < slots.length; i++) expect(slots[i]).toBe(slots[i - 1] + 1);
  });
});
