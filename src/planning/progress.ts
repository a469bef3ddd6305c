// Is a charging session keeping up with its plan? Pure: the schedule the charger was sent,
// the energy delivered when the plan was made and now, in; whether the rest of the plan
// can still deliver what remains by departure, and whether to plan the rest again, out.
//
// The schedule is what the charger was allowed (its profile's limits as power), so the
// energy expected by a time is the delivered energy when the plan was made plus what the
// schedule allowed since. A car that draws less than allowed (a full or cold battery, a
// car that charges on fewer phases) or a charger that stops (unavailable, faulted, the
// car unplugged for a while) falls behind: what it missed is no longer in the rest of the
// plan, which was made to deliver exactly the energy needed. The rest is planned again
// only when the missing energy is worth it (hysteresis) and not more often than a minimum
// interval (a car that keeps drawing less would otherwise replan on every MeterValues).

/** Power the charger was allowed from startMs to endMs (0 W where the plan does not charge). */
export interface ScheduleSegment {
  readonly startMs: number;
  readonly endMs: number;
  readonly powerW: number;
}

export interface ProgressInput {
  /** When the plan being followed was made (its schedule starts here). */
  readonly plannedAtMs: number;
  readonly segments: readonly ScheduleSegment[];
  readonly departureMs: number;
  /** Energy the session needs in all, counted from the same start as the delivered energies. */
  readonly energyNeededWh: number;
  /** Energy delivered when the plan was made. */
  readonly deliveredAtPlanWh: number;
  /** Energy delivered by measuredAtMs (the newest register reading). */
  readonly deliveredWh: number;
  readonly measuredAtMs: number;
  /** Now, for the minimum interval between plans. */
  readonly nowMs: number;
  /** The minimum interval does not apply (the charger came back after being unavailable). */
  readonly ignoreInterval?: boolean;
}

export interface FollowRule {
  /** Behind by less than this is noise (the car drawing a little under its limit). */
  readonly minBehindWh: number;
  /** ... or less than this share of the energy needed, whichever is more. */
  readonly minBehindShare: number;
  /** No plan again sooner than this after the plan being followed was made. */
  readonly minReplanIntervalMs: number;
}

/** docs/planning.md "Following the plan": 500 Wh or 2 % of the need, at most one replan per 15 minutes. */
export const FOLLOW_RULE: FollowRule = { minBehindWh: 500, minBehindShare: 0.02, minReplanIntervalMs: 15 * 60_000 };

export type ProgressVerdict =
  /** On plan (or behind by less than the hysteresis). */
  | 'on-plan'
  /** Behind so that the rest of the plan cannot deliver what remains: plan the rest again. */
  | 'replan'
  /** Behind, but the plan being followed is younger than the minimum interval. */
  | 'behind-wait'
  /** Nothing to follow: the energy needed is delivered, departure has passed, or the reading predates the plan. */
  | 'done';

export interface Progress {
  readonly verdict: ProgressVerdict;
  /** What the schedule would have delivered by measuredAtMs. */
  readonly expectedWh: number;
  readonly deliveredWh: number;
  /** expectedWh − deliveredWh (negative: ahead). */
  readonly behindWh: number;
  /** Energy still needed. */
  readonly remainingWh: number;
  /** What the schedule still allows from measuredAtMs to departure. */
  readonly restPlannedWh: number;
  /** remainingWh that the rest of the plan will not deliver. */
  readonly shortfallWh: number;
  /** The hysteresis threshold applied. */
  readonly thresholdWh: number;
}

const HOUR_MS = 3_600_000;

/** Energy (Wh) the segments allow between fromMs and toMs. */
export function scheduledEnergyWh(segments: readonly ScheduleSegment[], fromMs: number, toMs: number): number {
  let wh = 0;
  for (const s of segments) {
    const startMs = Math.max(s.startMs, fromMs);
    const endMs = Math.min(s.endMs, toMs);
    if (endMs > startMs) wh += (s.powerW * (endMs - startMs)) / HOUR_MS;
  }
  return wh;
}

export function followProgress(input: ProgressInput, rule: FollowRule = FOLLOW_RULE): Progress {
  const { plannedAtMs, segments, departureMs, measuredAtMs } = input;
  const atMs = Math.min(measuredAtMs, departureMs);
  const expectedWh = input.deliveredAtPlanWh + scheduledEnergyWh(segments, plannedAtMs, atMs);
  const remainingWh = Math.max(0, input.energyNeededWh - input.deliveredWh);
  const restPlannedWh = scheduledEnergyWh(segments, atMs, departureMs);
  const shortfallWh = Math.max(0, remainingWh - restPlannedWh);
  // What the plan itself could not deliver when it was made (not enough time or current):
  // falling behind is only what comes on top of that.
  const plannedShortfallWh = Math.max(0, input.energyNeededWh - input.deliveredAtPlanWh - scheduledEnergyWh(segments, plannedAtMs, departureMs));
  const thresholdWh = Math.max(rule.minBehindWh, rule.minBehindShare * input.energyNeededWh);
  const base = { expectedWh, deliveredWh: input.deliveredWh, behindWh: expectedWh - input.deliveredWh, remainingWh, restPlannedWh, shortfallWh, thresholdWh };
  if (remainingWh <= 0 || measuredAtMs >= departureMs || measuredAtMs < plannedAtMs || input.nowMs >= departureMs) return { ...base, verdict: 'done' };
  if (shortfallWh - plannedShortfallWh <= thresholdWh) return { ...base, verdict: 'on-plan' };
  if (!input.ignoreInterval && input.nowMs - plannedAtMs < rule.minReplanIntervalMs) return { ...base, verdict: 'behind-wait' };
  return { ...base, verdict: 'replan' };
}

/** The energy a register shows at atMs, linear between the readings around it (held flat beyond them). */
export function registerAtWh(readings: ReadonlyArray<{ readonly atMs: number; readonly wh: number }>, atMs: number): number | null {
  if (readings.length === 0) return null;
  let before = readings[0]!;
  if (atMs <= before.atMs) return before.wh;
  for (const r of readings) {
    if (r.atMs >= atMs) {
      if (r.atMs === before.atMs) return r.wh;
      return before.wh + ((r.wh - before.wh) * (atMs - before.atMs)) / (r.atMs - before.atMs);
    }
    before = r;
  }
  return before.wh;
}

/** What a connector's open transaction has delivered (ocpp/delivery.ts). */
export interface Delivery {
  readonly transactionId: number;
  readonly startedAtMs: number;
  /** Energy delivered from max(start, sinceMs) to measuredAtMs. */
  readonly deliveredWh: number;
  /** The newest register reading (the transaction's start while there is none). */
  readonly measuredAtMs: number;
  /**
   * The register as Wh, oldest first: meterStart and the readings around sinceMs, around
   * each of `around`, and the newest — enough for registerAtWh at those instants.
   */
  readonly readings: ReadonlyArray<{ readonly atMs: number; readonly wh: number }>;
}

/** Reads what a connector's open transaction has delivered (ocpp/connector-delivery.ts). */
export interface DeliveryReader {
  /**
   * The connector's open transaction's delivery since sinceMs (its start when later), or
   * null without an open transaction. `around`: more instants the readings must cover.
   */
  delivery(chargePointId: string, connectorId: number, sinceMs: number, around?: readonly number[]): Delivery | null;
}
