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
});
