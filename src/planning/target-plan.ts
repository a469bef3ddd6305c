// The plan of a stored charging target, from the prices and the forecast stored now: the
// one place that reads the stores for planning (the HTTP route, the replanning service and
// the OCPP central system share it). The planning itself stays pure (plan.ts, periods.ts).
// The energy needed counts from when the target was set (or its transaction started, if
// later): what the connector's open transaction delivered since then is already in the car,
// so the plan is for the rest.
import type { ChargingProgressStore } from '../store/charging-progress.js';
import type { FollowStateStore } from '../store/charging-follow-state.js';
import type { ChargingStores } from '../store/charging-stores.js';
import type { ConnectorDrawStore } from '../store/connector-draw.js';
import type { ChargingTargetStore, ChargingTarget } from '../store/charging-targets.js';
import type { ForecastStore } from '../store/forecasts.js';
import type { PriceStore } from '../store/prices.js';
import { planPeriods } from './periods.js';
import { planCharging, type Plan } from './plan.js';
import { NO_SITE, type SiteContext } from './site-context.js';
import { siteOtherLoad, type ConnectorDraw, type SiteLoad } from './site-load.js';
import { shareSiteCurrent } from './site-share.js';

/** From an hour back: the period under way started before now. */
const LOOKBACK_MS = 3_600_000;

/** A target's plan with the site limit it was made under: the target's, else the configured one, less the other load. */
export interface TargetPlan extends Plan {
  readonly site: {
    readonly limitA: number;
    /** The other load per phase the plan subtracted (A): the site meter's, else what the client said. */
    readonly otherLoadA: number | null;
    /** How the site meter's reading became the other load; null without a site meter. */
    readonly meter: SiteLoad | null;
    /** How the headroom (limit − other load) was shared with the other connectors planned on the site (site-share.ts). */
    readonly share: { readonly connectors: number; readonly headroomA: number; readonly shareA: number };
  } | null;
  /** The car's observed maximum draw in this transaction, planned with instead of the charger's limits (car-draw.ts); null before one is learnt. */
  readonly observed: { readonly maxCurrentA: number; readonly phases: number; readonly atMs: number } | null;
  /** Energy the connector's open transaction delivered towards the target, taken off what it needs (0 without one). */
  readonly deliveredWh: number;
}

/** A share less the margin, but not below the minimum current when the share reaches it. */
const withMargin = (shareA: number, minCurrentA: number, marginA: number) => (shareA >= minCurrentA ? Math.max(minCurrentA, shareA - marginA) : shareA);

const keyOf = (t: { chargePointId: string; connectorId: number }) => `${t.chargePointId}\u0000${t.connectorId}`;

export class TargetPlanner {
  private readonly prices: PriceStore;
  private readonly forecasts: ForecastStore;
  private readonly progress: ChargingProgressStore;
  private readonly draws: ConnectorDrawStore;
  private readonly targets: ChargingTargetStore;
  private readonly follow: FollowStateStore;

  constructor(
    /** The shared charging stores (store/charging-stores.ts), built once by daemon.ts. */
    stores: Pick<ChargingStores, 'prices' | 'forecasts' | 'progress' | 'draws' | 'targets' | 'follow'>,
    private readonly forecastEnabled: boolean,
    /** The configured site limit and site meter (planning/site-context.ts). */
    private readonly site: SiteContext = NO_SITE,
  ) {
    this.prices = stores.prices;
    this.forecasts = stores.forecasts;
    this.progress = stores.progress;
    this.draws = stores.draws;
    this.targets = stores.targets;
    this.follow = stores.follow;
  }

  /** Energy the connector's open transaction delivered towards the target (0 without one). */
  private deliveredWh(target: ChargingTarget): number {
    return this.progress.delivery(target.chargePointId, target.connectorId, target.updatedAtMs)?.deliveredWh ?? 0;
  }

  /**
   * The target's plan now. `siteMarginA` keeps the connector that much under its share of
   * the site (not below its minimum current): the site follower plans with it so that a load
   * that wobbles by less does not lower the current again on the next reading.
   */
  plan(target: ChargingTarget, nowMs: number, opts: { readonly siteMarginA?: number } = {}): TargetPlan {
    const fromMs = nowMs - LOOKBACK_MS;
    const forecast = this.forecastEnabled ? this.forecasts.periods(target.marketArea, fromMs, target.departureMs) : [];
    const observed = this.observedDraw(target);
    const limits = this.effectiveLimits(target, observed);
    const site = this.siteOf(target, nowMs);
    const deliveredWh = this.deliveredWh(target);
    const plan = planCharging({
      nowMs,
      departureMs: target.departureMs,
      energyWh: Math.max(0, target.energyWh - deliveredWh),
      // The site's share caps the connector's current; the share already is within the headroom.
      charger: { ...limits, maxCurrentA: site === null ? limits.maxCurrentA : Math.min(limits.maxCurrentA, withMargin(site.share.shareA, limits.minCurrentA, opts.siteMarginA ?? 0)) },
      site: site === null ? undefined : { limitA: site.limitA, otherLoadA: site.otherLoadA ?? undefined },
      periods: planPeriods(this.prices.native(target.marketArea, fromMs, target.departureMs), forecast),
    });
    return { ...plan, site, observed, deliveredWh };
  }

  /** The car's observed maximum draw, learnt in the connector's open transaction (car-draw.ts), or null. */
  observedDraw(target: ChargingTarget): TargetPlan['observed'] {
    const state = this.follow.get(target.chargePointId, target.connectorId);
    if (state.observedMaxCurrentA === null || state.observedTransactionId === null) return null;
    if (this.draws.openTransactionId(target.chargePointId, target.connectorId) !== state.observedTransactionId) return null;
    return { maxCurrentA: state.observedMaxCurrentA, phases: state.observedPhases ?? target.phases, atMs: state.observedAtMs ?? 0 };
  }

  /** The target's limits, lowered to what the car was seen to draw (never raised by it). */
  private effectiveLimits(target: ChargingTarget, observed: TargetPlan['observed']) {
    const limits = { maxCurrentA: target.maxCurrentA, minCurrentA: target.minCurrentA, phases: target.phases, voltageV: target.voltageV };
    if (!observed) return limits;
    // Never below the minimum current: a charger cannot signal less, so a car that draws less is planned at it.
    return { ...limits, maxCurrentA: Math.max(limits.minCurrentA, Math.min(limits.maxCurrentA, observed.maxCurrentA)), phases: Math.min(limits.phases, observed.phases) };
  }

  /**
   * The site limit (the target's, else the configured one), the other load (the site
   * meter's, else the client's) and this connector's share of the rest with every other
   * connector planned on the site now (a target in force and an open transaction).
   */
  private siteOf(target: ChargingTarget, nowMs: number): TargetPlan['site'] {
    const limitA = target.siteLimitA ?? this.site.limitA;
    if (limitA === null) return null;
    const sharing = this.sharing(target, nowMs);
    const meter = this.site.meter;
    let otherLoadA = target.siteOtherLoadA;
    let load: SiteLoad | null = null;
    if (meter) {
      load = siteOtherLoad({
        nowMs,
        resourceId: meter.resourceId,
        reading: meter.reading(),
        ownDraw: meter.settings.includesChargers ? this.plannedDraw(sharing, nowMs, meter.settings.maxReadingAgeMs) : null,
        limitA,
        minCurrentA: target.minCurrentA,
        clientOtherLoadA: target.siteOtherLoadA ?? 0,
        settings: meter.settings,
      });
      otherLoadA = load.otherLoadA;
    }
    const headroomA = Math.max(0, limitA - Math.max(0, otherLoadA ?? 0));
    const shares = shareSiteCurrent(
      headroomA,
      sharing.map((t) => {
        const limits = this.effectiveLimits(t, this.observedDraw(t));
        return { key: keyOf(t), maxCurrentA: limits.maxCurrentA, minCurrentA: limits.minCurrentA, departureMs: t.departureMs };
      }),
    );
    return { limitA, otherLoadA, meter: load, share: { connectors: sharing.length, headroomA: Math.round(headroomA * 100) / 100, shareA: Math.round((shares.get(keyOf(target)) ?? 0) * 100) / 100 } };
  }

  /** The target and every other one in force whose connector has a car plugged in (an open transaction). */
  private sharing(target: ChargingTarget, nowMs: number): ChargingTarget[] {
    const others = this.targets
      .upcoming(nowMs)
      .filter((t) => keyOf(t) !== keyOf(target) && this.draws.openTransactionId(t.chargePointId, t.connectorId) !== null);
    return [target, ...others];
  }

  /**
   * What the planned connectors draw together per phase (their chargers' latest measured
   * currents, each if measured within maxAgeMs): taken off a site meter that measures the
   * chargers too. None known: null (nothing taken off, the other load counts too high).
   */
  private plannedDraw(sharing: readonly ChargingTarget[], nowMs: number, maxAgeMs: number): ConnectorDraw | null {
    let sum: [number, number, number] | null = null;
    let sampledAtMs = nowMs;
    for (const t of sharing) {
      const d = this.draws.latest(t.chargePointId, t.connectorId, t.phases, t.voltageV);
      if (!d || Math.abs(nowMs - d.sampledAtMs) > maxAgeMs) continue;
      sum = sum ? (sum.map((a, i) => a + d.currentsA[i]!) as [number, number, number]) : [...d.currentsA];
      sampledAtMs = Math.min(sampledAtMs, d.sampledAtMs);
    }
    return sum ? { sampledAtMs, currentsA: sum } : null;
  }
}
