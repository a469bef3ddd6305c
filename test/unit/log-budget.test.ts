// The budget of warnings a peer can cause at will (src/log-budget.ts, pure).
import { describe, expect, it } from 'vitest';
import { LogBudget } from '../../src/log-budget.js';

describe('LogBudget', () => {
  it('logs perWindow a window, counts the rest, and says how many with the first of the next window', () => {
    const b = new LogBudget(3, 60_000);
    const at = (ms: number, n: number) => Array.from({ length: n }, () => b.take(ms));
    expect(at(0, 5).map((t) => t.log)).toEqual([true, true, true, false, false]);
    expect(b.take(59_999)).toEqual({ log: false, suppressedBefore: 0 });
    expect(b.take(60_000)).toEqual({ log: true, suppressedBefore: 3 });
    expect(b.take(60_001)).toEqual({ log: true, suppressedBefore: 0 });
  });

  it('starts a new window when the clock steps back', () => {
    const b = new LogBudget(1, 60_000);
    b.take(100_000);
    expect(b.take(100_001)).toEqual({ log: false, suppressedBefore: 0 });
    expect(b.take(50_000)).toEqual({ log: true, suppressedBefore: 1 });
  });
});
