// What planning needs of the site beyond a target: the configured limit per phase, and the
// site meter followed on the event bus (site/site-meter.ts, read through the probes). The
// one place that turns config site.* into planning inputs; every TargetPlanner gets it.
import type { AppContext } from '../context.js';
import type { SiteLoadSettings, SiteMeterReading } from './site-load.js';

export interface SiteMeterSource {
  readonly resourceId: string;
  readonly settings: SiteLoadSettings;
  /** The site meter's latest reading, or null before one (or when its module is not running). */
  reading(): SiteMeterReading | null;
}

export interface SiteContext {
  /** The connection's limit per phase from the config, for targets that give none. */
  readonly limitA: number | null;
  readonly meter: SiteMeterSource | null;
}

export function siteContext(ctx: Pick<AppContext, 'config' | 'probes'>): SiteContext {
  const site = ctx.config.site;
  const meter = site.meter;
  return {
    limitA: site.limit_a ?? null,
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

/** No site settings: plans use only what each target says. */
export const NO_SITE: SiteContext = { limitA: null, meter: null };
