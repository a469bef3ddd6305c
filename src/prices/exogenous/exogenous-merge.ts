// The rules over the stored exogenous series (store/exogenous.ts): which source fills and
// which replaces, and what the backfill (prices/backfill.ts) chases of them.
import type { PriceGap } from '../../store/prices.js';
import type { ExogenousProvenance, ExogenousStore } from '../../store/exogenous.js';
import type { BackfillStore } from '../backfill.js';
import { EXOGENOUS_SERIES_NAMES, REQUIRED_SERIES, type ExogenousPoint } from './series.js';

const DAY_MS = 86_400_000;
/** A series counts for a block when it has a point in it or in the five weeks before. */
const LOOK_BACK_MS = 35 * DAY_MS;
const BLOCK_MS = 31 * DAY_MS;

/**
 * Stores points: a source starting with `csv:` (a history file) only fills periods without
 * a value, any other (a platform fetch) replaces values that changed. Returns the rows written.
 */
export function mergeExogenous(store: ExogenousStore, points: readonly ExogenousPoint[], provenance: ExogenousProvenance): { written: number } {
  return store.write(points, provenance, provenance.source.startsWith('csv:') ? 'fill' : 'replace-changed');
}

/**
 * Holes in [fromMs, toMs) the backfill fills: those of the load series, and of every other
 * series the market has around then (a point in the range or in the five weeks before it),
 * so tomorrow's wind and solar forecast, published after the load forecast, is fetched
 * again until it is there, while a zone without offshore wind is not asked for it forever.
 */
export function exogenousGapsIn(store: ExogenousStore, marketArea: string, fromMs: number, toMs: number): PriceGap[] {
  if (toMs <= fromMs) return [];
  const all: PriceGap[] = [];
  // Decided per block of a month, so a series that began later (offshore wind in 2023)
  // does not make the years before it holes for the repair.
  for (let from = fromMs; from < toMs; from += BLOCK_MS) {
    const to = Math.min(toMs, from + BLOCK_MS);
    for (const series of EXOGENOUS_SERIES_NAMES) {
      if (series !== REQUIRED_SERIES && !store.hasPointIn(marketArea, series, from - LOOK_BACK_MS, to)) continue;
      all.push(...store.seriesGapsIn(marketArea, series, from, to));
    }
  }
  // The union, as sorted disjoint ranges.
  all.sort((a, b) => a.fromMs - b.fromMs);
  const out: PriceGap[] = [];
  for (const g of all) {
    const last = out[out.length - 1];
    if (last && g.fromMs <= last.toMs) out[out.length - 1] = { fromMs: last.fromMs, toMs: Math.max(last.toMs, g.toMs) };
    else out.push({ ...g });
  }
  return out;
}

/** The exogenous store as the backfill fills it: its holes and first start by the required series (load). */
export function exogenousBackfillStore(store: ExogenousStore): BackfillStore<ExogenousPoint> {
  return {
    gapsIn: (marketArea, fromMs, toMs) => exogenousGapsIn(store, marketArea, fromMs, toMs),
    merge: (points, provenance) => mergeExogenous(store, points, provenance),
    transaction: (fn) => store.transaction(fn),
    firstStartMs: (marketArea) => store.firstStartMs(marketArea, REQUIRED_SERIES),
  };
}
