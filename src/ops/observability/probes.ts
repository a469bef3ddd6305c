// Live views of the running modules, for /healthz, /metrics, the status page and the
// network scan. The composition root (buildModules) plugs each module's view in once
// the module exists; readers treat a missing view as "this part is not running".
import type { MeterStatus } from '../../domain.js';
import type { BusScanView, ClockView, HealthContributor, PriceCoverageView, PriceSeriesView, UplinkView } from './views.js';

export class Probes {
  meters: (() => readonly MeterStatus[]) | null = null;
  busScan: (() => readonly BusScanView[]) | null = null;
  uplink: (() => UplinkView) | null = null;
  clock: (() => ClockView) | null = null;
  prices: (() => readonly PriceCoverageView[]) | null = null;
  /** Prices (actual, else forecast with its band) for the status chart: today and tomorrow in the market's time zone. */
  priceSeries: ((region: string, nowMs: number) => PriceSeriesView | null) | null = null;
  /**
   * Health of further components by name (e.g. `store`, `forecast`), combined with the
   * built-in ones by the one rule in health.ts: `probes.health.set('store', () => ({ status, reason }))`.
   */
  readonly health = new Map<string, HealthContributor>();
}
