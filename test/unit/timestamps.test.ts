import { describe, expect, it } from 'vitest';
import { formatUtc, parseTimestamp, subMillisecondNs } from '../../src/http/timestamps.js';

describe('parseTimestamp', () => {
  it('accepts Z and offsets, fractions up to nanoseconds', () => {
    expect(parseTimestamp('2024-01-15T10:00:00Z')).toBe(Date.UTC(2024, 0, 15, 10));
    expect(parseTimestamp('2024-01-15t10:00:00z')).toBe(Date.UTC(2024, 0, 15, 10));
    expect(parseTimestamp('2024-01-15T11:00:00+01:00')).toBe(Date.UTC(2024, 0, 15, 10));
    expect(parseTimestamp('2024-01-15T05:30:00-04:30')).toBe(Date.UTC(2024, 0, 15, 10));
    expect(parseTimestamp('2024-01-15T10:00:00.5Z')).toBe(Date.UTC(2024, 0, 15, 10, 0, 0, 500));
    expect(parseTimestamp('2024-01-15T10:00:00.123456789Z')).toBe(Date.UTC(2024, 0, 15, 10, 0, 0, 123));
    expect(parseTimestamp('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
    expect(parseTimestamp('2025-10-26T02:00:00+01:00') as number - (parseTimestamp('2025-10-26T02:00:00+02:00') as number)).toBe(3_600_000);
  });

  it('says what is wrong', () => {
    expect(parseTimestamp('2024-01-15T10:00:00')).toMatch(/UTC designator/);
    expect(parseTimestamp('2024-01-15T10:00:00.123')).toMatch(/UTC designator/);
    expect(parseTimestamp('2024-01-15 10:00:00Z')).toMatch(/RFC 3339/);
    expect(parseTimestamp('2025-02-29T00:00:00Z')).toMatch(/no such day/);
    expect(parseTimestamp('2024-13-01T00:00:00Z')).toMatch(/not a valid/);
    expect(parseTimestamp('2024-01-01T24:00:00Z')).toMatch(/not a valid/);
    expect(parseTimestamp('2024-01-01T00:00:00+19:00')).toMatch(/offset/);
    expect(parseTimestamp('2024-01-01T00:00:00.Z')).toMatch(/RFC 3339/);
    expect(parseTimestamp('2024-01-01T00:00:00.1234567890Z')).toMatch(/RFC 3339/);
    expect(parseTimestamp('2024-01-01T00:00:00Z ')).toMatch(/RFC 3339/);
    expect(parseTimestamp('１９７０-01-01T00:00:00Z')).toMatch(/RFC 3339/);
    expect(parseTimestamp('1969-12-31T23:59:59Z')).toMatch(/not a valid/);
    expect(parseTimestamp('')).toMatch(/RFC 3339/);
  });

  it('formats UTC with milliseconds only when present', () => {
    expect(formatUtc(Date.UTC(2024, 0, 15, 10))).toBe('2024-01-15T10:00:00Z');
    expect(formatUtc(Date.UTC(2024, 0, 15, 10, 0, 0, 5))).toBe('2024-01-15T10:00:00.005Z');
  });

  it('gives back the digits below the millisecond as they were given (issue 16 point 8)', () => {
    const cases: Array<[string, string]> = [
      ['2025-11-03T09:14:37.708914Z', '2025-11-03T09:14:37.708914Z'],
      ['2025-11-03T10:14:37.708914123+01:00', '2025-11-03T09:14:37.708914123Z'],
      ['2025-11-03T09:14:37.000000001Z', '2025-11-03T09:14:37.000000001Z'],
      ['2025-11-03T09:14:37.0000001Z', '2025-11-03T09:14:37.000000100Z'],
      ['2025-11-03T09:14:37.708000000Z', '2025-11-03T09:14:37.708Z'],
      ['2025-11-03T09:14:37.7089Z', '2025-11-03T09:14:37.708900Z'],
      ['2025-11-03T09:14:37.5+00:00', '2025-11-03T09:14:37.500Z'],
      ['2025-11-03T09:14:37.12-01:30', '2025-11-03T10:44:37.120Z'],
      ['2025-11-03T09:14:37Z', '2025-11-03T09:14:37Z'],
      ['2025-11-03T09:14:37+02:00', '2025-11-03T07:14:37Z'],
    ];
    for (const [given, expected] of cases) {
      const ms = parseTimestamp(given) as number;
      expect(formatUtc(ms, subMillisecondNs(given)), given).toBe(expected);
      // The same instant as the input: Date agrees on the milliseconds.
      expect(Date.parse(expected), given).toBe(Date.parse(given));
    }
    expect(subMillisecondNs('2025-11-03T09:14:37.708914Z')).toBe(914_000);
    expect(subMillisecondNs('2025-11-03T09:14:37.5+01:23')).toBe(0);
  });
});

describe('parseTimestamp agrees with Date.parse', () => {
  it('on 20,000 instants from 1970 to 2100', () => {
    let x = 12345;
    for (let i = 0; i < 20_000; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const ms = Math.floor((x / 2 ** 31) * Date.UTC(2100, 0, 1));
      const iso = new Date(ms).toISOString();
      expect(parseTimestamp(iso)).toBe(ms);
    }
  });
});
