// One cycle of the fuse controller over a whole site, on plain values (docs/planning.md "The
// fuse controller"). Pure. Each connector's share is taken with the others counted as the
// controller's rule says (site-share.ts shareWithCounted: unknown or overdue ones at their
// maximum), of the site's headroom and, while dimmed, of the dimmed total, the lower one
// (share-limits.ts, as the planner takes it), then each connector's rule decides
// (connector-control.ts decideControl). The daemon gets the same shares from the planner
// (planning/target-plan.ts, which also puts each share into the cheapest periods); this form
// is what the simulation test and the benchmark drive with a simulated fleet and clock.
import { countedA, decideControl, type ControlDecision, type ControlRule, type ConnectorControl, type LimitMeans } from './connector-control.js';
import { limitedShares, siteHeadroomA } from './share-limits.js';
import type { CountedConnector } from './site-share.js';

export interface CycleConnector {
  readonly key: string;
  readonly maxA: number;
  readonly minA: number;
  readonly departureMs: number;
  readonly state: ConnectorControl;
  readonly connected: boolean;
  readonly applicable: (means: LimitMeans) => boolean;
}

export interface CycleResult {
  readonly shareA: number;
  /** What the others counted it at (null: shared as usual). */
  readonly countedA: number | null;
  readonly decision: ControlDecision;
}

/**
 * The site as the cycle sees it: its limit and the other load (A per phase) and, while the grid
 * operator dims (§14a), the current left to the controlled chargers together
 * (dimmed-limit.ts dimmedChargerCurrentA; absent or null: not dimmed).
 */
export interface CycleSite {
  readonly limitA: number;
  readonly otherLoadA: number;
  readonly dimmedA?: number | null;
}

export function fuseCycle(site: CycleSite, connectors: readonly CycleConnector[], nowMs: number, rule: ControlRule): Map<string, CycleResult> {
  const limits = { siteHeadroomA: siteHeadroomA(site.limitA, site.otherLoadA), dimmedA: site.dimmedA ?? null };
  const counted: CountedConnector[] = connectors.map((c) => ({ key: c.key, maxCurrentA: c.maxA, minCurrentA: c.minA, departureMs: c.departureMs, countedA: countedA(c.state, c.maxA, nowMs, rule) }));
  // Each one's lower share of the site and of the dimmed total, as the planner's (rounded down to a hundredth).
  const shares = limitedShares(limits, counted);
  const out = new Map<string, CycleResult>();
  connectors.forEach((c, i) => {
    const { shareA } = shares.get(c.key)!;
    const decision = decideControl({ state: c.state, shareA, freshPlanA: shareA, maxA: c.maxA, connected: c.connected, applicable: c.applicable, nowMs }, rule);
    out.set(c.key, { shareA, countedA: counted[i]!.countedA, decision });
  });
  return out;
}
