// The plan of a stored charging target, from the prices and the forecast stored now: the
// one place that reads the stores for planning (the HTTP route, the replanning service and
// the OCPP central system share it). The planning itself stays pure (plan.ts, periods.ts).
// The energy needed counts from when the target was set (or its transaction started, if
// later): what the connector's open transaction delivered since then is already in the car,
// so the plan is for the rest.
import { ChargingProgressStore } from '../store/charging-progress.js';
import type { ChargingTarget } from '../store/charging-targets.js';
import type { Db } from '../store/db.js';
import { ForecastStore } from '../store/forecasts.js';
import { PriceStore } from '../store/prices.js';
import { planPeriods } from './periods.js';
import { planCharging, type Plan } from './plan.js';

/** From an hour back: the period under way started before now. */
const LOOKBACK_MS = 3_600_000;

export class TargetPlanner {
  private readonly prices: PriceStore;
  private readonly forecasts: ForecastStore;
  private readonly progress: ChargingProgressStore;

  constructor(
    db: Db,
    private readonly forecastEnabled: boolean,
  ) {
    this.prices = new PriceStore(db);
    this.forecasts = new ForecastStore(db);
    this.progress = new ChargingProgressStore(db);
  }

  /** Energy the connector's open transaction delivered towards the target (0 without one). */
  deliveredWh(target: ChargingTarget): number {
    return this.progress.delivery(target.chargePointId, target.connectorId, target.updatedAtMs)?.deliveredWh ?? 0;
  }

  plan(target: ChargingTarget, nowMs: number): Plan {
    const fromMs = nowMs - LOOKBACK_MS;
    const forecast = this.forecastEnabled ? this.forecasts.periods(target.marketArea, fromMs, target.departureMs) : [];
    return planCharging({
      nowMs,
      departureMs: target.departureMs,
      energyWh: Math.max(0, target.energyWh - this.deliveredWh(target)),
      charger: { maxCurrentA: target.maxCurrentA, minCurrentA: target.minCurrentA, phases: target.phases, voltageV: target.voltageV },
      site: target.siteLimitA === null ? undefined : { limitA: target.siteLimitA, otherLoadA: target.siteOtherLoadA ?? undefined },
      periods: planPeriods(this.prices.native(target.marketArea, fromMs, target.departureMs), forecast),
    });
  }
}
