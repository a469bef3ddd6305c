import { describe, expect, it } from 'vitest';
import { SlidingWindowLimiter, type LimiterClock } from '../../src/prices/rate-limit.js';

/** A clock that only moves when the limiter sleeps. */
function fakeClock(): LimiterClock & { t: number } {
  const c = {
    t: 0,
    now: () => c.t,
    sleep: async (ms: number) => {
      c.t += ms;
    },
  };
  return c;
}

describe('sliding-window rate limiter', () => {
  it('never lets more than N requests start in any 60-s window', async () => {
    const clock = fakeClock();
    const limiter = new SlidingWindowLimiter(5, 60_000, clock);
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 17 }, async () => {
        await limiter.acquire();
        starts.push(clock.now());
      }),
    );
    expect(starts).toHaveLength(17);
    for (const s of starts) expect(starts.filter((x) => x >= s && x < s + 60_000).length).toBeLessThanOrEqual(5);
    // ...and does not wait longer than needed: 17 starts take three full windows.
    expect(Math.max(...starts)).toBe(180_000);
  });

  it('terminates on fractional clock times (backoff jitter is fractional) and still keeps the limit', async () => {
    // 120004.30870584877 + 60000 - 120004.30870584877 is 59999.999999999985 in floating point:
    // sleeping exactly that never reaches the end of the window.
    const clock = fakeClock();
    clock.t = 120_004.30870584877;
    let sleeps = 0;
    const sleep = clock.sleep;
    clock.sleep = async (ms: number) => {
      if (++sleeps > 100) throw new Error('limiter spins');
      await sleep(ms);
    };
    const limiter = new SlidingWindowLimiter(2, 60_000, clock);
    const starts: number[] = [];
    for (let i = 0; i < 5; i++) {
      await limiter.acquire();
      starts.push(clock.now());
    }
    for (const s of starts) expect(starts.filter((x) => x >= s && x < s + 60_000).length).toBeLessThanOrEqual(2);
    expect(sleeps).toBeLessThanOrEqual(4);
  });

  it('waits at most one window after the wall clock stepped back', async () => {
    const clock = fakeClock();
    clock.t = Date.UTC(2026, 0, 1, 12);
    const limiter = new SlidingWindowLimiter(2, 60_000, clock);
    await limiter.acquire();
    await limiter.acquire();
    clock.t -= 3_600_000; // NTP stepped the clock back an hour
    const before = clock.t;
    await limiter.acquire();
    expect(clock.t - before).toBeLessThanOrEqual(60_000);
  });
});
