// Stores day-ahead prices by the merge rule (merge.ts, docs/prices.md "Merging prices"):
// the incoming periods checked, per market the stored neighbourhood read, the plan made
// and applied, and sessions over a price that changed told, all in one transaction.
import type { PricePeriod } from '../domain.js';
import type { PriceProvenance, PriceStore } from '../store/prices.js';
import type { BackfillStore } from './backfill.js';
import { requireMarket } from './markets.js';
import { KEPT_OUTCOMES, planMerge, type MergeOutcome, type MergeRun, type StoredPeriod } from './merge.js';

/** What a merge did: periods written, every incoming period's outcome, and runs of all but `unchanged`. */
export interface PriceMergeReport {
  readonly written: number;
  readonly counts: Readonly<Record<MergeOutcome, number>>;
  readonly runs: readonly MergeRun[];
}

export interface PriceMergeOptions {
  /** Let coarser periods replace finer stored ones, and a lower-ranked source a higher one (`prices import --replace`). */
  readonly replace?: boolean;
}

/** Merge outcomes that change a stored price. */
const PRICE_CHANGES: ReadonlySet<MergeOutcome> = new Set(['corrected', 'refined', 'replaced']);

/**
 * Stores periods by the merge rule (a coarser period never replaces finer stored ones;
 * corrections need a source ranking at least as high), idempotent, in one transaction, with
 * the report of what was stored, corrected, replaced or kept out. Throws, storing nothing,
 * on a price that is not a number, a period without a whole positive length, or periods of
 * one market that overlap.
 */
export function mergePrices(store: PriceStore, periods: readonly PricePeriod[], provenance: PriceProvenance, options: PriceMergeOptions = {}): PriceMergeReport {
  const byMarket = new Map<string, PricePeriod[]>();
  for (const p of periods) {
    if (!Number.isFinite(p.pricePerMwh)) throw new RangeError(`price for ${p.marketArea} at ${new Date(p.startMs).toISOString()} is not a number`);
    if (!Number.isInteger(p.durationS) || p.durationS <= 0) throw new RangeError(`period of ${p.marketArea} at ${new Date(p.startMs).toISOString()} has length ${p.durationS} s`);
    let list = byMarket.get(p.marketArea);
    if (!list) byMarket.set(p.marketArea, (list = []));
    list.push(p);
  }
  return store.transaction(() => {
    let written = 0;
    const counts = Object.fromEntries(['filled', 'unchanged', 'corrected', 'refined', 'replaced', ...KEPT_OUTCOMES].map((o) => [o, 0])) as Record<MergeOutcome, number>;
    const runs: MergeRun[] = [];
    for (const [area, list] of byMarket) {
      const currency = requireMarket(area).currency;
      const sorted = list.every((p, k) => k === 0 || list[k - 1].startMs <= p.startMs) ? list : [...list].sort((a, b) => a.startMs - b.startMs);
      for (let k = 1; k < sorted.length; k++) {
        if (sorted[k].startMs < sorted[k - 1].startMs + sorted[k - 1].durationS * 1000) {
          throw new RangeError(`periods of ${area} overlap at ${new Date(sorted[k].startMs).toISOString()}: nothing stored`);
        }
      }
      const lo = sorted[0].startMs;
      const last = sorted[sorted.length - 1];
      const hi = last.startMs + last.durationS * 1000;
      const stored: StoredPeriod[] = store.storedForMerge(area, lo, hi).map((r) => ({ marketArea: area, ...r }));
      const plan = planMerge(stored, sorted, { source: provenance.source, replace: options.replace });
      store.applyMerge(area, plan.deleteStartMs, plan.write, currency, provenance);
      written += plan.write.length;
      // A session over a price that changed has another price record now (docs/http-api.md).
      for (const r of plan.runs) {
        if (PRICE_CHANGES.has(r.outcome) && r.maxChangePerMwh !== 0) store.pricesChanged(area, r.fromMs, r.toMs, provenance.fetchedAtMs);
      }
      for (const [o, n] of Object.entries(plan.counts)) counts[o as MergeOutcome] += n;
      runs.push(...plan.runs);
    }
    return { written, counts, runs };
  });
}

/** mergePrices() without the report: the number of rows written. */
export function storePrices(store: PriceStore, periods: readonly PricePeriod[], provenance: PriceProvenance): number {
  return mergePrices(store, periods, provenance).written;
}

/** The price store as the backfill fills it (backfill.ts): its periods merged by the rule. */
export function mergingPriceStore(store: PriceStore): BackfillStore<PricePeriod> {
  return {
    gapsIn: (marketArea, fromMs, toMs) => store.gapsIn(marketArea, fromMs, toMs),
    merge: (periods, provenance) => mergePrices(store, periods, provenance),
    transaction: (fn) => store.transaction(fn),
    firstStartMs: (marketArea) => store.firstStartMs(marketArea),
  };
}
