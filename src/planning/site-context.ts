// What planning needs of the site beyond a target: the configured limit per phase and
// connectors (the ceilings no target can raise, ceilings.ts), and the site meter followed
// on the event bus (site/site-meter.ts, read through the probes). The one place that turns
// config site.* and chargers[].connectors into planning inputs; every TargetPlanner gets it.
import type { AppContext } from '../context.js';
import { configuredCeilings, type Ceilings } from './ceilings.js';
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
}

export function siteContext(ctx: Pick<AppContext, 'config' | 'probes'>): SiteContext {
  const site = ctx.config.site;
  const meter = site.meter;
  const ceilings = configuredCeilings(ctx.config);
  return {
    limitA: ceilings.siteLimitA,
    ceilings,
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
