// A token bucket (pure): `ratePerS` tokens a second, holding at most `burst`. Paces the
// backlog after an outage so it does not crowd out fresh readings or flood the broker.
export class TokenBucket {
  private tokens: number;
  private lastMs: number;

  constructor(
    private readonly ratePerS: number,
    private readonly burst: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.lastMs = nowMs;
  }

  private refill(nowMs: number): void {
    if (nowMs > this.lastMs) {
      this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.lastMs) * this.ratePerS) / 1000);
      this.lastMs = nowMs;
    }
  }

  /** Takes one token if there is one. */
  take(nowMs: number): boolean {
    this.refill(nowMs);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until a token will be there (0 if one is). */
  waitMs(nowMs: number): number {
    this.refill(nowMs);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.ratePerS);
  }
}
