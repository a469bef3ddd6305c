// The exogenous-source seam: a provider of day-ahead series for the forecaster (today
// ENTSO-E load and wind/solar forecasts; e.g. a weather service for days 2-7 next) is one
// file that registers a provider type here. The composition root makes one registry
// (exogenousProviderTypes() in index.ts; no global registry) and asks it for the providers
// the configuration turns on; the price sync backfills and syncs each like prices.
import type { AppContext } from '../../context.js';
import type { PriceFetcher } from '../backfill.js';
import type { ExogenousPoint, ExogenousSeriesName } from './series.js';

/** A provider of exogenous series: the backfill's fetcher of ExogenousPoints. */
export interface ExogenousSource extends PriceFetcher<ExogenousPoint> {
  /** Stored as the points' source and as the backfill chunks' source: unique per provider. */
  readonly name: string;
  /** The series it gives. */
  readonly series: readonly ExogenousSeriesName[];
}

export interface ExogenousProviderType {
  readonly kind: string;
  /** The provider the configuration asks for, or null when it is off (e.g. no token). */
  create(deps: Pick<AppContext, 'config' | 'logger'>): ExogenousSource | null;
}

export class ExogenousRegistry {
  private readonly types = new Map<string, ExogenousProviderType>();

  register(type: ExogenousProviderType): void {
    if (this.types.has(type.kind)) throw new Error(`exogenous provider type ${type.kind} registered twice`);
    this.types.set(type.kind, type);
  }

  kinds(): string[] {
    return [...this.types.keys()];
  }

  /** Every provider the configuration turns on, in registration order. */
  build(deps: Pick<AppContext, 'config' | 'logger'>): ExogenousSource[] {
    return [...this.types.values()].map((t) => t.create(deps)).filter((s): s is ExogenousSource => s !== null);
  }
}
