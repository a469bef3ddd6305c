// When the site's load changes under a running plan: lower a connector's current at once,
// raise it again only after a while. Pure: the current the connector's plan in force allows
// from now on, what the site leaves it now (its share, site-share.ts) and what a plan made
// now would use, in; lower, raise or hold out.
//
// Lowering protects the main fuse, so it is never delayed: as soon as the plan in force
// allows more than the share (other load + every planned connector's allowed current above
// the limit on a phase), the rest is planned again under the share. Raising is not urgent:
// only when a plan made now would use at least `raiseHysteresisA` more than the plan in
// force, and not sooner than `raiseIntervalMs` after the site's load last changed this
// connector's plan — a load that comes and goes (a kettle, a heat pump cycling) does not
// send a SetChargingProfile on every meter reading. The plans sent for the site's sake keep
// half the hysteresis under the share (ocpp/site-follower.ts), so a load that wobbles by
// less lowers nothing again either.
//
// A charger without profiles (remote-start-stop) has no current to lower: its car is
// stopped when the share falls under the connector's configured current, and started
// again (siteResumeDecision) once the share is back to that current plus the hysteresis,
// the plan charges now, and the raise interval has passed since the stop: a share that
// hovers around the configured current does not stop and start the car on every reading.
// The share alone is not enough: it is how the headroom would be split, not what the others
// draw now (a car on a profile keeps its higher limit until its lower profile lands; a
// stopped car whose restart went out draws its current as soon as the charger starts it).
// So the car starts only where the limit less the other load and every other connector's
// current cap in force (freeA) still leaves it its current plus the hysteresis, and the site
// follower starts at most one car per check: held + restarted current stays within the limit.

export interface SiteGuardRule {
  readonly raiseHysteresisA: number;
  readonly raiseIntervalMs: number;
}

/** The least raise interval and hysteresis the site follower works with, whatever the config says. */
export const RAISE_FLOOR = { intervalS: 5, hysteresisA: 0.5 } as const;

/**
 * The rule from the config's site settings, each at least its floor (RAISE_FLOOR): with no
 * interval and no hysteresis every reading that wobbles up would raise a connector (or start
 * a car on remote-start-stop) and the next one down lower it again. A lower value is taken at
 * the floor rather than refused, so a config written before the floor existed still starts
 * the gateway after an upgrade; `raised` names the settings taken at their floor, for a warning.
 */
export function siteGuardRuleFrom(site: { readonly raise_interval_s: number; readonly raise_hysteresis_a: number }): { rule: SiteGuardRule; raised: string[] } {
  const raised: string[] = [];
  if (site.raise_interval_s < RAISE_FLOOR.intervalS) raised.push(`site.raise_interval_s ${site.raise_interval_s} -> ${RAISE_FLOOR.intervalS}`);
  if (site.raise_hysteresis_a < RAISE_FLOOR.hysteresisA) raised.push(`site.raise_hysteresis_a ${site.raise_hysteresis_a} -> ${RAISE_FLOOR.hysteresisA}`);
  return {
    rule: {
      raiseHysteresisA: Math.max(RAISE_FLOOR.hysteresisA, site.raise_hysteresis_a),
      raiseIntervalMs: Math.max(RAISE_FLOOR.intervalS, site.raise_interval_s) * 1000,
    },
    raised,
  };
}

export interface SiteGuardInput {
  /** The highest current per phase the plan in force allows from now to its end (A). */
  readonly inForceA: number;
  /** The connector's share of the site now (A). */
  readonly shareA: number;
  /** The highest current per phase a plan made now would use (A). */
  readonly freshPlanA: number;
  /** When the site's load last changed this connector's plan (null: never). */
  readonly lastSiteChangeMs: number | null;
  readonly nowMs: number;
}

export type SiteGuardVerdict = 'lower' | 'raise' | 'hold';

/** Limits go to the charger rounded down to 0.1 A: a smaller difference is rounding. */
const ROUNDING_A = 0.05;

export function siteGuardDecision(input: SiteGuardInput, rule: SiteGuardRule): SiteGuardVerdict {
  if (input.inForceA > input.shareA + ROUNDING_A) return 'lower';
  const since = input.lastSiteChangeMs === null ? Infinity : input.nowMs - input.lastSiteChangeMs;
  if (input.freshPlanA >= input.inForceA + Math.max(ROUNDING_A, rule.raiseHysteresisA) && since >= rule.raiseIntervalMs) return 'raise';
  return 'hold';
}

export interface SiteResumeInput {
  /** The connector's configured current (A): what the car draws once started. */
  readonly configuredA: number;
  /** The connector's share of the site now, counting itself among the planned connectors (A). */
  readonly shareA: number;
  /** The highest current the plan made now allows the connector (A): within every ceiling. */
  readonly allowedA: number;
  /** The plan made now charges at this instant. */
  readonly chargingNow: boolean;
  /** The site limit less the other load and what every other planned connector may draw now (its cap in force), per phase (A). */
  readonly freeA: number;
  /** When the site's load last changed this connector's plan (its stop; null: never). */
  readonly lastSiteChangeMs: number | null;
  readonly nowMs: number;
}

/** Whether a car stopped for the site (remote-start-stop) is started again now. */
export function siteResumeDecision(input: SiteResumeInput, rule: SiteGuardRule): boolean {
  const since = input.lastSiteChangeMs === null ? Infinity : input.nowMs - input.lastSiteChangeMs;
  return (
    input.chargingNow &&
    input.allowedA + ROUNDING_A >= input.configuredA &&
    input.shareA + ROUNDING_A >= input.configuredA + rule.raiseHysteresisA &&
    // No rounding allowance here: this is the ceiling itself.
    input.freeA + 1e-9 >= input.configuredA + rule.raiseHysteresisA &&
    since >= rule.raiseIntervalMs
  );
}
