// The stores the charging side shares (targets, profiles and their answers, progress, the
// cars' draws, follow state, prices and forecasts for planning, what chargers declare):
// built once by the composition root (daemon.ts) and handed to the planner, the central
// system, the followers, the replanner and the plan route, so each statement is prepared once.
import { FollowStateStore } from './charging-follow-state.js';
import { ChargingProfileStore } from './charging-profiles.js';
import { ChargingProgressStore } from './charging-progress.js';
import { ChargingStrategyStore } from './charging-strategies.js';
import { ChargingTargetStore } from './charging-targets.js';
import { ConnectorDrawStore } from './connector-draw.js';
import type { Db } from './db.js';
import { ForecastStore } from './forecasts.js';
import { OcppConfigurationStore } from './ocpp-configuration.js';
import { PriceStore } from './prices.js';

export interface ChargingStores {
  readonly targets: ChargingTargetStore;
  readonly profiles: ChargingProfileStore;
  readonly progress: ChargingProgressStore;
  readonly draws: ConnectorDrawStore;
  readonly follow: FollowStateStore;
  readonly prices: PriceStore;
  readonly forecasts: ForecastStore;
  readonly configuration: OcppConfigurationStore;
  /** What chargers refused and the charging strategy in force per connector. */
  readonly strategies: ChargingStrategyStore;
}

export function openChargingStores(db: Db): ChargingStores {
  return {
    targets: new ChargingTargetStore(db),
    profiles: new ChargingProfileStore(db),
    progress: new ChargingProgressStore(db),
    draws: new ConnectorDrawStore(db),
    follow: new FollowStateStore(db),
    prices: new PriceStore(db),
    forecasts: new ForecastStore(db),
    configuration: new OcppConfigurationStore(db),
    strategies: new ChargingStrategyStore(db),
  };
}
