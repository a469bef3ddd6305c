// A connector's share under the limits that hold on the site at once: the site's headroom
// under its fuse (limit − other load) and, while the grid operator dims (§14a EnWG,
// dimmed-limit.ts), the current left to the controlled chargers together. Each is shared by
// the same rule (site-share.ts shareWithCounted: the others counted as the fuse controller
// says), and the connector gets the lower of its two shares. The dimmed total is not reduced
// by the other load: §14a limits what the controllable devices draw, not the connection.
// Pure. The planner (target-plan.ts siteOf) and the fuse controller's cycle on plain values
// (fuse-cycle.ts, which the simulation drives) both share through it, so the simulation
// checks the combination the daemon applies.
import { shareSiteCurrent, shareWithCounted, type CountedConnector } from './site-share.js';

/** What there is to share (A per phase): the site's headroom, the dimmed total, or both. */
export type ShareLimits =
  | {
      /** What the site's fuse leaves the connectors: its limit less the other load (siteHeadroomA), less what cars with no target may draw. */
      readonly siteHeadroomA: number;
      /** While dimmed: the current left to the controlled chargers together (dimmedChargerCurrentA), less what cars with no target may draw; null while not dimmed. */
      readonly dimmedA: number | null;
    }
  | { readonly siteHeadroomA: null; readonly dimmedA: number };

export interface LimitedShare {
  /** The connector's share of the site's headroom (not rounded); null without a site limit. */
  readonly siteShareA: number | null;
  /** Its share of the dimmed total, rounded down to a hundredth; null while not dimmed. */
  readonly dimmedShareA: number | null;
  /** The lower of the two, rounded down to a hundredth (a share given to a charger must not grow by rounding). */
  readonly shareA: number;
}

const floor2 = (v: number) => Math.floor(v * 100 + 1e-9) / 100;

/** The site's headroom under its fuse: the limit less the other load (a negative load, a feed-in, gives nothing more), never below 0. */
export function siteHeadroomA(limitA: number, otherLoadA: number | null): number {
  return Math.max(0, limitA - Math.max(0, otherLoadA ?? 0));
}

/** `of`'s share under every limit in `limits`, the others counted as `connectors` say. */
export function limitedShare(limits: ShareLimits, connectors: readonly CountedConnector[], of: string): LimitedShare {
  const siteShareA = limits.siteHeadroomA === null ? null : shareWithCounted(limits.siteHeadroomA, connectors, of);
  return lowerOf(siteShareA, limits.dimmedA === null ? null : shareWithCounted(limits.dimmedA, connectors, of));
}

/**
 * Every connector's limitedShare at once, by key (the fuse controller's cycle over a whole
 * site, fuse-cycle.ts): the same figures, but each sharing computed once for all the
 * connectors that see the same others counted (every connector shared as usual sees the same
 * set), rather than once per connector.
 */
export function limitedShares(limits: ShareLimits, connectors: readonly CountedConnector[]): Map<string, LimitedShare> {
  const usual = connectors.filter((c) => c.countedA === null);
  // Summed in the order shareWithCounted sums them, so the figures are the same to the last bit.
  let countedA = 0;
  for (const c of connectors) if (c.countedA !== null) countedA += Math.max(0, c.countedA);
  const usualShares = (headroomA: number | null) => (headroomA === null ? null : shareSiteCurrent(headroomA - countedA, usual));
  const site = usualShares(limits.siteHeadroomA);
  const dimmed = usualShares(limits.dimmedA);
  // A connector counted at a fixed current still gets its own share (what it should be asked for): a sharing of its own.
  const shareOf = (headroomA: number | null, shares: Map<string, number> | null, c: CountedConnector): number | null =>
    headroomA === null ? null : c.countedA === null ? shares!.get(c.key)! : shareWithCounted(headroomA, connectors, c.key);
  return new Map(connectors.map((c) => [c.key, lowerOf(shareOf(limits.siteHeadroomA, site, c), shareOf(limits.dimmedA, dimmed, c))]));
}

/** The lower of the two shares (the dimmed one rounded down first, as the plan reports it), rounded down. */
function lowerOf(siteShareA: number | null, dimmedRawA: number | null): LimitedShare {
  const dimmedShareA = dimmedRawA === null ? null : floor2(dimmedRawA);
  const lowerA = siteShareA === null ? dimmedShareA! : dimmedShareA === null ? siteShareA : Math.min(siteShareA, dimmedShareA);
  return { siteShareA, dimmedShareA, shareA: floor2(lowerA) };
}
