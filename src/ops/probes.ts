// Live views of the running modules, for /healthz, /metrics, the status page and the
// network scan. The composition root (buildModules) plugs each module's view in once
// the module exists; readers treat a missing view as "this part is not running".
import type { MeterStatus } from '../domain.js';
import type { HealthContributor } from './health.js';

export type BrokerState = 'connected' | 'connecting' | 'disconnected' | 'disabled';

export interface UplinkView {
  readonly state: BrokerState;
  /** Broker URL without credentials. */
  readonly broker: string | null;
  readonly outboxDepth: number;
  /** Age of the oldest message waiting for its PUBACK, or null when the outbox is empty. */
  readonly oldestAgeMs: number | null;
  readonly lastPublishedAtMs: number | null;
  readonly lastError: string | null;
  /** The outbox is at its bound and drops its oldest message for every new one (since the last PUBACK). */
  readonly outboxFull: boolean;
  /** Messages held out of the sending order (refused by the broker, or stamped ahead of the clock); kept, not deleted. */
  readonly heldMessages?: number;
  /** One line while the broker refuses messages or messages are held (what and since when), else null. */
  readonly refusals?: string | null;
}

export interface BusScanView {
  readonly bus: string;
  readonly port: string;
  readonly unit_ids: readonly number[];
  readonly devices: ReadonlyArray<{ readonly unit_id: number; readonly profile: string | null }>;
}

export interface ClockView {
  readonly trusted: boolean;
  /** Whether the wall clock is within the plausible range (after the build date, not far ahead). */
  readonly plausible: boolean;
  readonly reason: string;
  readonly heldSamples: number;
  /** While a step of the trusted clock beyond clock.step_tolerance_s is recent: what happened and what is flagged. */
  readonly stepWarning?: string | null;
}

/** Whether the database takes writes; what waits in memory while it does not. */
export interface StoreView {
  readonly writable: boolean;
  /** The last refusal, e.g. `SQLITE_FULL: database or disk is full`; null while writable. */
  readonly reason: string | null;
  readonly failingSinceMs: number | null;
  readonly pendingWrites: number;
  readonly maxPendingWrites: number;
  /** Dropped (oldest first) because the queue was full, since start. */
  readonly pendingDroppedTotal: number;
}

export interface PriceCoverageView {
  readonly region: string;
  /** End of the last stored period (ms), or null without prices. */
  readonly lastEndMs: number | null;
  /** Whether a price exists for the period containing now. */
  readonly coversNow: boolean;
}

export interface PricePoint {
  readonly periodStartMs: number;
  readonly durationS: number;
  readonly pricePerMwh: number | null;
  readonly forecast: number | null;
  readonly forecastLower: number | null;
  readonly forecastUpper: number | null;
}

export interface PriceSeriesView {
  readonly region: string;
  readonly currency: string;
  readonly points: readonly PricePoint[];
}

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
