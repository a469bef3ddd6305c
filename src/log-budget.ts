// How often a warning that a peer can cause at will is written (pure): at most `perWindow`
// lines per `windowMs`; beyond that the occurrences are only counted, and the first one of
// the next window says how many were left out. Keeps a flood (a charger sending malformed
// frames as fast as the link allows) from filling the journal and the SD card.
export class LogBudget {
  private windowStartMs = Number.NEGATIVE_INFINITY;
  private logged = 0;
  private suppressed = 0;

  constructor(
    private readonly perWindow: number,
    private readonly windowMs: number,
  ) {}

  /**
   * One occurrence at `nowMs`: whether to log it, and how many of the window that just
   * ended were left out (to be said once, with this one; 0 when none or still in it).
   */
  take(nowMs: number): { readonly log: boolean; readonly suppressedBefore: number } {
    let suppressedBefore = 0;
    // A new window, or a clock that stepped back.
    if (nowMs - this.windowStartMs >= this.windowMs || nowMs < this.windowStartMs) {
      suppressedBefore = this.suppressed;
      this.windowStartMs = nowMs;
      this.logged = 0;
      this.suppressed = 0;
    }
    if (this.logged < this.perWindow) {
      this.logged += 1;
      return { log: true, suppressedBefore };
    }
    this.suppressed += 1;
    return { log: false, suppressedBefore };
  }
}
