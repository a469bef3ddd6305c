// The plan of a stored charging target, from the prices and the forecast stored now: the
// one place that reads the stores for planning (the HTTP route, the replanning service and
// the OCPP central system share it). The planning itself stays pure (plan.ts, periods.ts).
// The energy needed counts from when the target was set (or its transaction started, if
// later): what the connector's open transaction delivered since then is already in the car,
// so the plan is for the rest.
import { ChargingProgressStore } from '../store/charging-progress.js';
import { ConnectorDrawStore } from '../store/connector-draw.js';
import type { ChargingTarget } from '../store/charging-targets.js';
import type { Db } from '../store/db.js';
import { ForecastStore } from '../store/forecasts.js';
import { PriceStore } from '../store/prices.js';
import { planPeriods } from './periods.js';
import { planCharging, type Plan } from './plan.js';
import { NO_SITE, type SiteContext } from './site-context.js';
import { siteOtherLoad, type SiteLoad } from './site-load.js';

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
  } | null;
}

export class TargetPlanner {
  private readonly prices: PriceStore;
  private readonly forecasts: ForecastStore;
  private readonly progress: ChargingProgressStore;
  private readonly draws: ConnectorDrawStore;

  constructor(
    db: Db,
    private readonly forecastEnabled: boolean,
    /** The configured site limit and site meter (planning/site-context.ts). */
    private readonly site: SiteContext = NO_SITE,
  ) {
    this.prices = new PriceStore(db);
    this.forecasts = new ForecastStore(db);
    this.progress = new ChargingProgressStore(db);
    this.draws = new ConnectorDrawStore(db);
  }

  /** Energy the connector's open transaction delivered towards the target (0 without one). */
  deliveredWh(target: ChargingTarget): number {
    return this.progress.delivery(target.chargePointId, target.connectorId, target.updatedAtMs)?.deliveredWh ?? 0;
  }

  plan(target: ChargingTarget, nowMs: number): TargetPlan {
    const fromMs = nowMs - LOOKBACK_MS;
    const forecast = this.forecastEnabled ? this.forecasts.periods(target.marketArea, fromMs, target.departureMs) : [];
    const site = this.siteOf(target, nowMs);
    const plan = planCharging({
      nowMs,
      departureMs: target.departureMs,
      energyWh: Math.max(0, target.energyWh - this.deliveredWh(target)),
      charger: { maxCurrentA: target.maxCurrentA, minCurrentA: target.minCurrentA, phases: target.phases, voltageV: target.voltageV },
      site: site === null ? undefined : { limitA: site.limitA, otherLoadA: site.otherLoadA ?? undefined },
      periods: planPeriods(this.prices.native(target.marketArea, fromMs, target.departureMs), forecast),
    });
    return { ...plan, site };
  }

  /** The site limit (the target's, else the configured one) and, with a site meter, the other load it measures now. */
  private siteOf(target: ChargingTarget, nowMs: number): TargetPlan['site'] {
    const limitA = target.siteLimitA ?? this.site.limitA;
    if (limitA === null) return null;
    const meter = this.site.meter;
    if (!meter) return { limitA, otherLoadA: target.siteOtherLoadA, meter: null };
    const load = siteOtherLoad({
      nowMs,
      resourceId: meter.resourceId,
      reading: meter.reading(),
      ownDraw: meter.settings.includesChargers ? this.draws.latest(target.chargePointId, target.connectorId, target.phases, target.voltageV) : null,
      limitA,
      minCurrentA: target.minCurrentA,
      clientOtherLoadA: target.siteOtherLoadA ?? 0,
      settings: meter.settings,
    });
    return { limitA, otherLoadA: load.otherLoadA, meter: load };
  }
}
