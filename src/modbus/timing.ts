// Sub-millisecond waits for line timing (inter-frame silences, emulated wire time).

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the monotonic clock reaches `target`. Timers have millisecond granularity and
 * may truncate, so the sub-millisecond rest is waited out by yielding to the event loop: the
 * silence is never short, and not a millisecond longer than needed.
 */
export async function waitUntil(target: number): Promise<void> {
  const wait = target - performance.now();
  if (wait >= 1) await sleep(Math.floor(wait));
  while (performance.now() < target) await new Promise<void>((resolve) => setImmediate(resolve));
}
