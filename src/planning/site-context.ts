// What planning needs of the site beyond a target: the configured limit per phase and
// connectors (the ceilings no target can raise, ceilings.ts), and the site meter followed
// on the event bus (site/site-meter.ts, read through the probes). The one place that turns
// config site.* and chargers[].connectors into planning inputs; every TargetPlanner gets it.
import type { AppContext } from '../context.js';
import { configuredCeilings, type Ceilings } from './ceilings.js';
import type { CapacitySettings, SiteDemandReading } from './capacity-limit.js';
import type { SiteLoadSettings, SiteMeterReading } from './site-load.js';

export interface SiteMeterSource {
  readonly resourceId: string;
  readonly settings: SiteLoadSettings;
  /** The site meter's latest reading, or null before one (or when its module is not running). */
  reading(): SiteMeterReading | null;
}

export interface SiteContext {
  /** The connection's limit per phase from the config (site.limit_a): a target's own may only be lower. */
  readonly limitA: number | null;
  readonly meter: SiteMeterSource | null;
  /** The configured connectors (chargers[].connectors[]): a connector not listed is never planned. */
  readonly ceilings: Ceilings;
  /** The Belgian capacity tariff (site.capacity, planning/capacity-limit.ts); null when not configured. */
  readonly capacity?: CapacitySource | null;
}

export interface CapacitySource {
  readonly settings: CapacitySettings;
  /** The site meter's latest quarter-hour demand and month's peak, or null before one. */
  demand(): SiteDemandReading | null;
}

export function siteContext(ctx: Pick<AppContext, 'config' | 'probes'>): SiteContext {
  const site = ctx.config.site;
  const meter = site.meter;
  const ceilings = configuredCeilings(ctx.config);
  const capacity = site.capacity;
  return {
    limitA: ceilings.siteLimitA,
    ceilings,
    capacity:
      capacity === undefined || meter === undefined
        ? null
        : {
            settings: { eurPerKwMonth: capacity.eur_per_kw_month, targetKw: capacity.target_kw ?? null, marginKw: capacity.margin_kw, raisePeakForDeparture: capacity.raise_peak_for_departure, maxReadingAgeMs: site.max_reading_age_s * 1000 },
            demand: () => ctx.probes.siteDemand?.() ?? null,
          },
    meter:
      meter === undefined
        ? null
        : {
            resourceId: meter,
            settings: { maxReadingAgeMs: site.max_reading_age_s * 1000, includesChargers: site.meter_includes_chargers, voltageV: site.voltage_v },
            reading: () => ctx.probes.siteMeter?.() ?? null,
          },
  };
}
