// Ridge penalties chosen by leave-one-out, kept between forecast origins (shared by the
// per-hour LEAR model and the cross-hour model).

/**
 * Penalties chosen by leave-one-out, kept between consecutive origins: the coefficients are
 * refitted at every origin, the penalty is chosen again once it is four weeks old (the
 * leave-one-out search is most of the cost, and a day's data barely moves it).
 */
export class PenaltyCache {
  private readonly chosen = new Map<string, { penalty: number; originDay: number }>();
  constructor(readonly maxAgeDays = 28) {}

  get(key: string, originDay: number): number | undefined {
    const c = this.chosen.get(key);
    return c && originDay - c.originDay < this.maxAgeDays && originDay >= c.originDay ? c.penalty : undefined;
  }

  set(key: string, originDay: number, penalty: number): void {
    this.chosen.set(key, { penalty, originDay });
  }
}
