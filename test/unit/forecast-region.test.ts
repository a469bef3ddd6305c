import { describe, expect, it } from 'vitest';
import { parseRegion } from '../../src/forecast/region.js';
import { TokenBucketThrottle } from '../../src/http/throttle.js';
import { localMidnightMs, periodStartsOfDay, dayFromIso, formatLocalIso } from '../../src/forecast/local-days.js';

const known = (code: string) => ['NL', 'DE-LU'].includes(code);

describe('region parameter', () => {
  it('defaults to NL at 3600 s', () => {
    expect(parseRegion(undefined, known)).toEqual({ ok: true, marketArea: 'NL', intervalS: 3600 });
  });
  it.each([
    ['NL', 'NL', 3600],
    ['NL-900', 'NL', 900],
    ['nl-1800', 'NL', 1800],
    ['DE-LU', 'DE-LU', 3600],
    ['DE-LU-900', 'DE-LU', 900],
    ['DE-LU-3600', 'DE-LU', 3600],
  ])('%s -> %s at %i s', (raw, code, interval) => {
    expect(parseRegion(raw, known)).toEqual({ ok: true, marketArea: code, intervalS: interval });
  });
  it.each(['XX', 'DE', 'LU', 'NL-', 'NL-60', 'NL-7200', 'DE-LU-0', '', 'NL-900-900'])('rejects %j', (raw) => {
    expect(parseRegion(raw, known).ok).toBe(false);
  });
});

describe('throttle per key', () => {
  it('allows a burst, then one per interval, and says when to retry', () => {
    let now = 1_000_000;
    const t = new TokenBucketThrottle({ now: () => now }, 2, 300);
    expect(t.take('a').allowed).toBe(true);
    expect(t.take('a').allowed).toBe(true);
    const denied = t.take('a');
    expect(denied).toEqual({ allowed: false, retryAfterS: 300 });
    expect(t.take('b').allowed).toBe(true);
    now += 299_000;
    expect(t.take('a')).toEqual({ allowed: false, retryAfterS: 1 });
    now += 1_000;
    expect(t.take('a').allowed).toBe(true);
    expect(t.take('a').allowed).toBe(false);
  });
});

describe('local days of the market', () => {
  it('DST days have 92 and 100 quarter-hours, other days 96', () => {
    const tz = 'Europe/Amsterdam';
    expect(periodStartsOfDay(tz, dayFromIso('2026-03-29'), 900)).toHaveLength(92);
    expect(periodStartsOfDay(tz, dayFromIso('2026-10-25'), 900)).toHaveLength(100);
    expect(periodStartsOfDay(tz, dayFromIso('2026-10-26'), 900)).toHaveLength(96);
    expect(periodStartsOfDay(tz, dayFromIso('2026-03-29'), 3600)).toHaveLength(23);
    expect(formatLocalIso(tz, localMidnightMs(tz, dayFromIso('2026-03-29')) + 2 * 3_600_000)).toBe('2026-03-29T03:00:00+02:00');
    expect(formatLocalIso(tz, localMidnightMs(tz, dayFromIso('2026-01-15')))).toBe('2026-01-15T00:00:00+01:00');
  });
});
