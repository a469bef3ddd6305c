// The cron schedules that replaced node-cron: the expressions the daemon uses, across both
// Brussels clock changes, and the timer driven by an injected clock.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { firesAt, nextRunMs, parseCron, scheduleCron } from '../../src/schedule/cron-schedule.js';

const MINUTE_MS = 60_000;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Every firing in [fromMs, toMs), by walking nextRunMs. */
function runs(expr: string, zone: string, fromMs: number, toMs: number): string[] {
  const s = parseCron(expr, zone);
  const out: string[] = [];
  for (let t = nextRunMs(s, fromMs); t !== null && t < toMs; t = nextRunMs(s, t + 1)) out.push(iso(t)!);
  return out;
}

describe('cron schedules without node-cron', () => {
  it('daily 03:30 Brussels time on the spring-forward and fall-back days', () => {
    // 2024-03-31: CET -> CEST at 02:00 local; 2024-10-27: CEST -> CET at 03:00 local.
    expect(runs('30 3 * * *', 'Europe/Brussels', Date.UTC(2024, 2, 30), Date.UTC(2024, 3, 2))).toEqual([
      '2024-03-30T02:30:00.000Z',
      '2024-03-31T01:30:00.000Z',
      '2024-04-01T01:30:00.000Z',
    ]);
    expect(runs('30 3 * * *', 'Europe/Brussels', Date.UTC(2024, 9, 26), Date.UTC(2024, 9, 29))).toEqual([
      '2024-10-26T01:30:00.000Z',
      '2024-10-27T02:30:00.000Z',
      '2024-10-28T02:30:00.000Z',
    ]);
  });

  it('the price sync window */15 13-17 follows Brussels time through the change', () => {
    const before = runs('*/15 13-17 * * *', 'Europe/Brussels', Date.UTC(2024, 2, 30), Date.UTC(2024, 2, 31));
    const after = runs('*/15 13-17 * * *', 'Europe/Brussels', Date.UTC(2024, 2, 31), Date.UTC(2024, 3, 1));
    expect(before).toHaveLength(20);
    expect(after).toHaveLength(20);
    expect([before[0], before.at(-1), after[0], after.at(-1)]).toEqual([
      '2024-03-30T12:00:00.000Z',
      '2024-03-30T16:45:00.000Z',
      '2024-03-31T11:00:00.000Z',
      '2024-03-31T15:45:00.000Z',
    ]);
  });

  it('a wall minute skipped by the clock change never fires, a repeated one fires twice', () => {
    expect(runs('30 2 * * *', 'Europe/Brussels', Date.UTC(2024, 2, 31), Date.UTC(2024, 3, 1))).toEqual([]);
    expect(runs('30 2 * * *', 'Europe/Brussels', Date.UTC(2024, 9, 27), Date.UTC(2024, 9, 28))).toEqual(['2024-10-27T00:30:00.000Z', '2024-10-27T01:30:00.000Z']);
  });

  it('the hourly forecast refresh (7 * * * * UTC) runs once every hour, clock change or not', () => {
    const r = runs('7 * * * *', 'UTC', Date.UTC(2024, 9, 26, 22), Date.UTC(2024, 9, 27, 4));
    expect(r).toEqual(['22', '23', '00', '01', '02', '03'].map((h, i) => `2024-10-${i < 2 ? 26 : 27}T${h}:07:00.000Z`));
  });

  it('lists, ranges with steps, day of week (7 = Sunday) and month', () => {
    const s = parseCron('0,30 8-18/5 * 3 7', 'Europe/Amsterdam');
    expect(firesAt(s, Date.UTC(2024, 2, 31, 11, 30))).toBe(true); // Sunday 13:30 CEST
    expect(firesAt(s, Date.UTC(2024, 2, 30, 12, 30))).toBe(false); // Saturday 13:30 CET
    expect(firesAt(s, Date.UTC(2024, 2, 31, 12, 30))).toBe(false); // 14:30
    expect(nextRunMs(parseCron('0 0 30 2 *', 'UTC'), Date.UTC(2024, 0, 1))).toBeNull();
  });

  it('refuses what it does not implement, saying what', () => {
    expect(() => parseCron('*/15 13-17 * *', 'UTC')).toThrow(/five fields/);
    expect(() => parseCron('0 0 * JAN *', 'UTC')).toThrow(/"JAN" in the month field/);
    expect(() => parseCron('0 24 * * *', 'UTC')).toThrow(/outside 0-23/);
    expect(() => parseCron('0 0 1 * 1', 'UTC')).toThrow(/not both/);
    expect(() => parseCron('0 0 * * *', 'America/New_York')).toThrow(/not supported/);
  });

  describe('scheduleCron', () => {
    afterEach(() => void vi.useRealTimers());

    it('runs at each firing minute of the injected clock across the spring-forward night', () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      vi.setSystemTime(Date.UTC(2024, 2, 30, 23, 0));
      const at: string[] = [];
      const errors: unknown[] = [];
      const job = scheduleCron(
        parseCron('30 * * * *', 'Europe/Brussels'),
        () => {
          at.push(new Date(Date.now()).toISOString());
          if (at.length === 2) throw new Error('one failing run');
        },
        { now: () => Date.now(), onError: (e) => errors.push(e) },
      );
      expect(iso(job.nextRun()!.getTime())).toBe('2024-03-30T23:30:00.000Z');
      vi.advanceTimersByTime(4 * 60 * MINUTE_MS);
      job.stop();
      vi.advanceTimersByTime(60 * MINUTE_MS);
      expect(at).toEqual(['23:30', '00:30', '01:30', '02:30'].map((t, i) => `2024-03-${i === 0 ? 30 : 31}T${t}:00.000Z`));
      expect(errors).toHaveLength(1);
      expect(job.nextRun()).toBeNull();
    });

    it('started on a firing minute, waits for the next one', () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      vi.setSystemTime(Date.UTC(2020, 11, 2, 12, 0));
      let ran = 0;
      const job = scheduleCron(parseCron('*/15 13-17 * * *', 'Europe/Brussels'), () => void ran++, { now: () => Date.now(), onError: () => undefined });
      expect(iso(job.nextRun()!.getTime())).toBe('2020-12-02T12:15:00.000Z');
      vi.advanceTimersByTime(MINUTE_MS);
      expect(ran).toBe(0);
      job.stop();
    });
  });
});
