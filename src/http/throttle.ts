// Per-key token bucket: `burst` requests at once, then one more every `intervalS`.
// In memory (a gateway restart forgets it, which is harmless for a polling limit).
import type { Clock } from '../clock.js';

export type ThrottleDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterS: number };

export class TokenBucketThrottle {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly burst: number,
    private readonly intervalS: number,
  ) {}

  take(key: string): ThrottleDecision {
    if (this.intervalS <= 0) return { allowed: true };
    const now = this.clock.now();
    const intervalMs = this.intervalS * 1000;
    const b = this.buckets.get(key) ?? { tokens: this.burst, atMs: now };
    const refill = Math.max(0, now - b.atMs) / intervalMs;
    b.tokens = Math.min(this.burst, b.tokens + refill);
    b.atMs = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, retryAfterS: Math.max(1, Math.ceil(((1 - b.tokens) * intervalMs) / 1000)) };
  }
}
