// Sliding-window request limiter: never more than `maxPerWindow` starts in any window
// of `windowMs` (the platform counts requests per minute per token). Time and sleep are
// injected, so tests can check the schedule without waiting.

export interface LimiterClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realLimiterClock: LimiterClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export class SlidingWindowLimiter {
  private readonly starts: number[] = [];
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly maxPerWindow: number,
    private readonly windowMs = 60_000,
    private readonly clock: LimiterClock = realLimiterClock,
  ) {
    if (!(maxPerWindow >= 1)) throw new RangeError('maxPerWindow must be >= 1');
  }

  /** Resolves when one more request may start; callers are served in order. */
  acquire(): Promise<void> {
    const next = this.queue.then(() => this.waitForSlot());
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async waitForSlot(): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      // The wall clock stepped back (NTP): starts "in the future" count as starting now, so
      // the wait is at most one window, not the size of the step.
      for (let i = 0; i < this.starts.length; i++) if (this.starts[i] > now) this.starts[i] = now;
      while (this.starts.length > 0 && this.starts[0] <= now - this.windowMs) this.starts.shift();
      if (this.starts.length < this.maxPerWindow) {
        this.starts.push(now);
        return;
      }
      // Whole milliseconds, at least one: with fractional times the exact difference can
      // fall an ulp short of the window's end, and sleeping it would never get there.
      await this.clock.sleep(Math.max(1, Math.ceil(this.starts[0] + this.windowMs - now)));
    }
  }
}
