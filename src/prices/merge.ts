// Which incoming price periods may replace stored ones. Pure: stored and incoming periods
// in, a plan (rows to delete, rows to write) and a report out; price-merge.ts applies it.
//
// The rule (docs/prices.md, "Merging prices"):
//   - a period with no stored price overlapping it is stored (a coarser source fills holes);
//   - the same period (same start and length) is replaced by a source that ranks at least
//     as high as the stored one's (a correction); an equal price only refreshes provenance;
//   - finer periods replace a stored coarser one only when they tile it completely and
//     their source ranks at least as high (never leaving part of it without a price);
//   - a coarser period never replaces finer stored ones: it is kept out and reported,
//     unless `replace` is asked for, which also lets a lower-ranked source replace;
//   - anything else that overlaps stored periods (misaligned, or finer periods covering
//     only part of a stored one) is never stored, and reported.
import type { PricePeriod } from '../domain.js';

export interface StoredPeriod extends PricePeriod {
  readonly source: string;
}

/** How a source ranks: the ENTSO-E platform (the market's own publication) above files and anything else. */
export function sourceRank(source: string): number {
  return source === 'entsoe' ? 2 : 1;
}

export type MergeOutcome =
  /** No price was stored there. */
  | 'filled'
  /** Same period, same price: provenance refreshed (or kept, from a lower-ranked source). */
  | 'unchanged'
  /** Same period, another price, from a source ranking at least as high. */
  | 'corrected'
  /** Finer periods replaced a stored coarser one they tile completely. */
  | 'refined'
  /** With `replace`: stored finer periods, or a higher-ranked source's, replaced. */
  | 'replaced'
  /** Not stored: finer prices are stored there (a coarser period only fills holes). */
  | 'kept-finer'
  /** Not stored: the stored price of this period comes from a higher-ranked source. */
  | 'kept-better-source'
  /** Not stored: finer periods that cover only part of a stored coarser period. */
  | 'kept-partial'
  /** Not stored: overlaps stored periods on other boundaries. */
  | 'kept-misaligned';

export const KEPT_OUTCOMES: readonly MergeOutcome[] = ['kept-finer', 'kept-better-source', 'kept-partial', 'kept-misaligned'];

/** Consecutive incoming periods with the same outcome over stored periods of the same kind. */
export interface MergeRun {
  readonly outcome: MergeOutcome;
  readonly marketArea: string;
  readonly fromMs: number;
  readonly toMs: number;
  readonly incomingPeriods: number;
  readonly incomingDurationS: number;
  /** Stored periods the run touched (replaced, or kept in place of the incoming ones). */
  readonly storedPeriods: number;
  /** Lengths of those stored periods, seconds, ascending (empty: none). */
  readonly storedDurationsS: readonly number[];
  readonly storedSources: readonly string[];
  /** Largest |incoming - stored| price over the run (market currency per MWh); null where nothing was stored. */
  readonly maxChangePerMwh: number | null;
}

export interface MergePlan {
  /** Start times of stored periods to delete (all of the one market). */
  readonly deleteStartMs: number[];
  /** Periods to write (insert or overwrite at their start). */
  readonly write: PricePeriod[];
  readonly counts: Readonly<Record<MergeOutcome, number>>;
  /** Every outcome except `unchanged`, as runs. */
  readonly runs: MergeRun[];
}

export interface MergeOptions {
  readonly source: string;
  readonly replace?: boolean;
}

const endOf = (p: PricePeriod) => p.startMs + p.durationS * 1000;
const NONE: readonly number[] = [];
const NONE_STORED: readonly StoredPeriod[] = [];
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Plans merging `incoming` (one market, sorted by start, not overlapping each other) into
 * `stored` (the same market's stored periods overlapping the incoming span, sorted, not
 * overlapping).
 */
export function planMerge(stored: readonly StoredPeriod[], incoming: readonly PricePeriod[], opts: MergeOptions): MergePlan {
  const rank = sourceRank(opts.source);
  const replace = opts.replace === true;
  const counts = Object.fromEntries(
    (['filled', 'unchanged', 'corrected', 'refined', 'replaced', ...KEPT_OUTCOMES] as MergeOutcome[]).map((o) => [o, 0]),
  ) as Record<MergeOutcome, number>;
  const deleteStartMs: number[] = [];
  const write: PricePeriod[] = [];
  const runs: Array<Mutable<MergeRun>> = [];
  /** Decisions on stored coarser periods, shared by the finer incoming periods inside them. */
  const refine = new Map<number, 'refined' | 'kept-partial' | 'kept-better-source'>();

  /** `span`: the time the outcome is about (a stored period around finer incoming ones, else p's own). */
  const note = (outcome: MergeOutcome, p: PricePeriod, touched: readonly StoredPeriod[], change: number | null, span?: { fromMs: number; toMs: number }) => {
    counts[outcome]++;
    if (outcome === 'unchanged') return;
    const fromMs = span?.fromMs ?? p.startMs;
    const toMs = span?.toMs ?? endOf(p);
    // One stored length and source in the common case: no sets to build.
    const storedDurationsS = touched.length === 0 ? NONE : touched.length === 1 ? [touched[0].durationS] : [...new Set(touched.map((s) => s.durationS))].sort((x, y) => x - y);
    const last = runs[runs.length - 1];
    if (
      last &&
      last.outcome === outcome &&
      fromMs <= last.toMs &&
      last.incomingDurationS === p.durationS &&
      sameNumbers(last.storedDurationsS, storedDurationsS) &&
      touched.every((s) => last.storedSources.includes(s.source))
    ) {
      // A stored coarser period is shared by the finer incoming ones inside it: counted once.
      for (const s of touched) if (s.startMs >= last.toMs) last.storedPeriods++;
      last.toMs = Math.max(last.toMs, toMs);
      last.incomingPeriods++;
      if (change !== null) last.maxChangePerMwh = Math.max(last.maxChangePerMwh ?? 0, change);
      return;
    }
    runs.push({
      outcome,
      marketArea: p.marketArea,
      fromMs,
      toMs,
      incomingPeriods: 1,
      incomingDurationS: p.durationS,
      storedPeriods: touched.length,
      storedDurationsS,
      storedSources: touched.length === 0 ? [] : [...new Set(touched.map((s) => s.source))].sort(),
      maxChangePerMwh: change,
    });
  };
  const maxChange = (p: PricePeriod, touched: readonly StoredPeriod[]) => (touched.length === 0 ? null : Math.max(...touched.map((s) => Math.abs(s.pricePerMwh - p.pricePerMwh))));

  if (stored.length === 0) {
    // Nothing stored near the batch (a first import): every period fills a hole.
    for (const p of incoming) note('filled', p, NONE_STORED, null);
    return { deleteStartMs, write: [...incoming], counts, runs };
  }
  let j = 0;
  for (let i = 0; i < incoming.length; i++) {
    const p = incoming[i];
    const pEnd = endOf(p);
    while (j < stored.length && endOf(stored[j]) <= p.startMs) j++;
    const over: StoredPeriod[] = [];
    for (let k = j; k < stored.length && stored[k].startMs < pEnd; k++) over.push(stored[k]);

    if (over.length === 0) {
      write.push(p);
      note('filled', p, over, null);
      continue;
    }
    const s0 = over[0];
    if (over.length === 1 && s0.startMs === p.startMs && s0.durationS === p.durationS) {
      if (s0.pricePerMwh === p.pricePerMwh) {
        // Same price: the newer fetch time is recorded, unless the stored one is from a better source.
        if (rank >= sourceRank(s0.source)) write.push(p);
        note('unchanged', p, over, 0);
      } else if (rank >= sourceRank(s0.source) || replace) {
        write.push(p);
        note(rank >= sourceRank(s0.source) ? 'corrected' : 'replaced', p, over, Math.abs(s0.pricePerMwh - p.pricePerMwh));
      } else note('kept-better-source', p, over, Math.abs(s0.pricePerMwh - p.pricePerMwh));
      continue;
    }
    if (over.every((s) => s.startMs >= p.startMs && endOf(s) <= pEnd)) {
      // p is coarser than what is stored inside it.
      if (replace) {
        for (const s of over) deleteStartMs.push(s.startMs);
        write.push(p);
        note('replaced', p, over, maxChange(p, over));
      } else note('kept-finer', p, over, maxChange(p, over));
      continue;
    }
    if (over.length === 1 && s0.startMs <= p.startMs && endOf(s0) >= pEnd) {
      // p is finer than the stored period around it: decided once for all of s0.
      let decision = refine.get(s0.startMs);
      if (decision === undefined) {
        decision = tiles(incoming, i, s0) ? (rank >= sourceRank(s0.source) || replace ? 'refined' : 'kept-better-source') : 'kept-partial';
        refine.set(s0.startMs, decision);
        if (decision === 'refined') deleteStartMs.push(s0.startMs);
      }
      const span = { fromMs: s0.startMs, toMs: endOf(s0) };
      if (decision === 'refined') {
        write.push(p);
        note(rank >= sourceRank(s0.source) ? 'refined' : 'replaced', p, over, Math.abs(s0.pricePerMwh - p.pricePerMwh), span);
      } else note(decision, p, over, Math.abs(s0.pricePerMwh - p.pricePerMwh), span);
      continue;
    }
    note('kept-misaligned', p, over, null);
  }
  return { deleteStartMs, write, counts, runs };
}

/** Do the incoming periods from index `i` on cover `s` exactly, without gaps or overhang? */
function tiles(incoming: readonly PricePeriod[], i: number, s: PricePeriod): boolean {
  if (incoming[i].startMs !== s.startMs) return false;
  const sEnd = endOf(s);
  let cursor = s.startMs;
  for (let k = i; k < incoming.length && incoming[k].startMs < sEnd; k++) {
    if (incoming[k].startMs !== cursor) return false;
    cursor = endOf(incoming[k]);
  }
  return cursor === sEnd;
}
