// The car's observed maximum draw (planning/car-draw.ts): pure.
import { describe, expect, it } from 'vitest';
import { observeCarDraw, type DrawSample } from '../../src/planning/car-draw.js';

const MIN = 60_000;
const T0 = Date.parse('2025-11-12T12:05:00Z');
const charger = { phases: 3, voltageV: 230 };
/** 16 A on 3 phases allowed throughout. */
const full = () => 16 * 3 * 230;
const minutes = (n: number, currentsA: [number, number, number], fromMin = 1): DrawSample[] =>
  Array.from({ length: n }, (_, i) => ({ atMs: T0 + (fromMin + i) * MIN, currentsA, powerW: null }));

describe('observeCarDraw', () => {
  it('a car on one phase at 16 A of a 16 A three-phase profile, for 10 minutes: 16 A on 1 phase', () => {
    expect(observeCarDraw(minutes(11, [16, 0, 0]), full, charger)).toEqual({ maxCurrentA: 16, phases: 1, atMs: T0 + 11 * MIN });
  });

  it('a car whose on-board charger takes 11 A on three phases', () => {
    expect(observeCarDraw(minutes(11, [10.8, 11, 10.9]), full, charger)).toMatchObject({ maxCurrentA: 11, phases: 3 });
  });

  it('less than 10 minutes says nothing yet', () => {
    expect(observeCarDraw(minutes(10, [16, 0, 0]), full, charger)).toBeNull();
  });

  it('a car drawing what it is allowed (or nearly: 90 %) says nothing about its maximum', () => {
    expect(observeCarDraw(minutes(20, [16, 16, 16]), full, charger)).toBeNull();
    expect(observeCarDraw(minutes(20, [14.4, 14.4, 14.4]), full, charger)).toBeNull();
  });

  it('a pause (nothing drawn) or a period the profile does not charge ends the run', () => {
    const paused = [...minutes(6, [16, 0, 0]), ...minutes(1, [0, 0, 0], 7), ...minutes(6, [16, 0, 0], 8)];
    expect(observeCarDraw(paused, full, charger)).toBeNull();
    const gap = (atMs: number) => (atMs >= T0 + 7 * MIN && atMs < T0 + 8 * MIN ? 0 : full());
    expect(observeCarDraw(minutes(13, [16, 0, 0]), gap, charger)).toBeNull();
  });

  it('power alone: spread over the charger phases', () => {
    const samples = Array.from({ length: 11 }, (_, i) => ({ atMs: T0 + (i + 1) * MIN, currentsA: null, powerW: 7360 }));
    expect(observeCarDraw(samples, full, charger)).toMatchObject({ maxCurrentA: 10.67, phases: 3 });
  });

  it('the highest run wins', () => {
    const samples = [...minutes(11, [8, 8, 8]), ...minutes(1, [0, 0, 0], 12), ...minutes(11, [11, 11, 11], 13)];
    expect(observeCarDraw(samples, full, charger)).toMatchObject({ maxCurrentA: 11, phases: 3 });
  });
});
