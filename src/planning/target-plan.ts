// The plan of a stored charging target, from the prices and the forecast stored now: the
// one place that reads the stores for planning (the HTTP route and the replanning service
// share it). The planning itself stays pure (plan.ts, periods.ts).
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

  constructor(
    db: Db,
    private readonly forecastEnabled: boolean,
  ) {
    this.prices = new PriceStore(db);
    this.forecasts = new ForecastStore(db);
  }

  plan(target: ChargingTarget, nowMs: number): Plan {
    const fromMs = nowMs - LOOKBACK_MS;
    const forecast = this.forecastEnabled ? this.forecasts.periods(target.marketArea, fromMs, target.departureMs) : [];
    return planCharging({
      nowMs,
      departureMs: target.departureMs,
      energyWh: target.energyWh,
      charger: { maxCurrentA: target.maxCurrentA, minCurrentA: target.minCurrentA, phases: target.phases, voltageV: target.voltageV },
      site: target.siteLimitA === null ? undefined : { limitA: target.siteLimitA, otherLoadA: target.siteOtherLoadA ?? undefined },
      periods: planPeriods(this.prices.native(target.marketArea, fromMs, target.departureMs), forecast),
    });
  }
}
