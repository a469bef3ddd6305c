// The stores the charging side shares (targets, profiles and their answers, the cars'
// draws, follow state, prices and forecasts for planning, what chargers declare) and what a
// connector delivered (the store's register values with the charger's register rule
// applied): built once by the composition root (daemon.ts, through charging-services.ts)
// and handed to the planner, the central system, the followers, the replanner and the plan
// route, so each statement is prepared once.
import { ConnectorDelivery } from '../ocpp/connector-delivery.js';
import { FollowStateStore } from '../store/charging-follow-state.js';
import { ChargingProfileStore } from '../store/charging-profiles.js';
import { ChargingStrategyStore } from '../store/charging-strategies.js';
import { ChargingTargetStore } from '../store/charging-targets.js';
import { DrawValueStore } from '../store/draw-values.js';
import { EvChargingStore } from '../store/ev-charging.js';
import { ConnectorDraws } from './connector-draws.js';
import { ConnectorRegisterStore } from '../store/connector-registers.js';
import type { Db } from '../store/db.js';
import { ForecastStore } from '../store/forecasts.js';
import { OcppConfigurationStore } from '../store/ocpp-configuration.js';
import { PriceStore } from '../store/prices.js';
import type { DeliveryReader } from './progress.js';

export interface ChargingStores {
  readonly targets: ChargingTargetStore;
  readonly profiles: ChargingProfileStore;
  /** What a connector's open transaction delivered. */
  readonly progress: DeliveryReader;
  readonly draws: ConnectorDraws;
  readonly follow: FollowStateStore;
  readonly prices: PriceStore;
  readonly forecasts: ForecastStore;
  readonly configuration: OcppConfigurationStore;
  /** What chargers refused and the charging strategy in force per connector. */
  readonly strategies: ChargingStrategyStore;
  /** What 2.0.1 cars said through ISO 15118: their needs and their schedules. */
  readonly ev: EvChargingStore;
}

export function openChargingStores(db: Db): ChargingStores {
  return {
    targets: new ChargingTargetStore(db),
    profiles: new ChargingProfileStore(db),
    progress: new ConnectorDelivery(new ConnectorRegisterStore(db)),
    draws: new ConnectorDraws(new DrawValueStore(db)),
    follow: new FollowStateStore(db),
    prices: new PriceStore(db),
    forecasts: new ForecastStore(db),
    configuration: new OcppConfigurationStore(db),
    strategies: new ChargingStrategyStore(db),
    ev: new EvChargingStore(db),
  };
}
