// A connector's default target (src/planning/default-target.ts): the next configured local
// time after the transaction's start, in the market's time zone, DST days included.
import { describe, expect, it } from 'vitest';
import { defaultTarget, nextLocalTimeMs } from '../../src/planning/default-target.js';
import { requireMarket } from '../../src/prices/markets.js';

const NL = requireMarket('NL');
const iso = (ms: number) => new Date(ms).toISOString();

describe('nextLocalTimeMs', () => {
  it('is the same day when the time is still ahead, else the next day (Amsterdam, winter and summer)', () => {
    expect(iso(nextLocalTimeMs(NL.timeZone, Date.parse('2025-11-12T17:00:00Z'), '07:00'))).toBe('2025-11-13T06:00:00.000Z');
    expect(iso(nextLocalTimeMs(NL.timeZone, Date.parse('2025-11-12T05:00:00Z'), '07:00'))).toBe('2025-11-12T06:00:00.000Z');
    expect(iso(nextLocalTimeMs(NL.timeZone, Date.parse('2025-06-12T04:59:00Z'), '07:00'))).toBe('2025-06-12T05:00:00.000Z');
    // Exactly at the time: the next one.
    expect(iso(nextLocalTimeMs(NL.timeZone, Date.parse('2025-06-12T05:00:00Z'), '07:00'))).toBe('2025-06-13T05:00:00.000Z');
    // Late evening UTC is already the next local day.
    expect(iso(nextLocalTimeMs(NL.timeZone, Date.parse('2025-11-12T23:30:00Z'), '07:00'))).toBe('2025-11-13T06:00:00.000Z');
  });

  it('over the DST changes: 07:00 is 06:00Z before and 05:00Z after spring forward; a time in the gap is an hour later; a repeated time is the first', () => {
    expect(iso(nextLocalTimeMs(NL.timeZone, Date.parse('2025-03-29T20:00:00Z'), '07:00'))).toBe('2025-03-30T05:00:00.000Z');
    expect(iso(nextLocalTimeMs(NL.timeZone, Date.parse('2025-03-29T20:00:00Z'), '02:30'))).toBe('2025-03-30T01:30:00.000Z');
    expect(iso(nextLocalTimeMs(NL.timeZone, Date.parse('2025-10-25T20:00:00Z'), '02:30'))).toBe('2025-10-26T00:30:00.000Z');
    expect(iso(nextLocalTimeMs(NL.timeZone, Date.parse('2025-10-25T20:00:00Z'), '07:00'))).toBe('2025-10-26T06:00:00.000Z');
  });

  it('refuses what is not HH:MM', () => {
    expect(() => nextLocalTimeMs(NL.timeZone, 0, '7:00')).toThrow(/HH:MM/);
    expect(() => nextLocalTimeMs(NL.timeZone, 0, '24:00')).toThrow(/HH:MM/);
  });
});

describe('defaultTarget', () => {
  const connector = { connector_id: 2, max_current_a: 32, min_current_a: 6, phases: 3 as const, voltage_v: 230, default_target: { departure_local_time: '07:30', energy_wh: 25_000 } };
  it('is the configured energy by the next departure time, with the connector limits, counted from the start', () => {
    const startedAtMs = Date.parse('2025-11-12T17:04:00Z');
    expect(defaultTarget('CP-1', connector, NL, startedAtMs)).toEqual({
      chargePointId: 'CP-1',
      connectorId: 2,
      marketArea: 'NL',
      departureMs: Date.parse('2025-11-13T06:30:00Z'),
      energyWh: 25_000,
      maxCurrentA: 32,
      minCurrentA: 6,
      phases: 3,
      voltageV: 230,
      siteLimitA: null,
      siteOtherLoadA: null,
      updatedAtMs: startedAtMs,
      source: 'default',
    });
  });
  it('none without a configured default', () => {
    expect(defaultTarget('CP-1', { ...connector, default_target: undefined }, NL, 0)).toBeNull();
  });
});
