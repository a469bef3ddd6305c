// Follows the site meter (config site.meter: a Modbus or P1 meter the gateway polls anyway)
// through the event bus: daemon.ts hands it every sample.taken, and it keeps the latest of
// its meter in memory (nothing is written: the readings table has them already). Charging
// plans read it through the probes (planning/site-context.ts) as the site's other load.
import type { AppContext } from '../context.js';
import type { MeterSample } from '../domain.js';
import type { Module } from '../lifecycle.js';
import type { ModuleViews } from '../ops/observability/views.js';
import type { P1Demand } from '../p1/demand.js';
import type { SiteDemandReading } from '../planning/capacity-limit.js';
import { siteMeterReading, type SiteMeterReading } from '../planning/site-load.js';

export class SiteMeter implements Module {
  readonly name = 'site-meter';
  private latest: SiteMeterReading | null = null;
  private demand: SiteDemandReading | null = null;

  readonly views: ModuleViews = { siteMeter: () => this.latest, siteDemand: () => this.demand };

  constructor(private readonly ctx: Pick<AppContext, 'config' | 'logger'>) {}

  async start(): Promise<void> {
    this.ctx.logger.info({ resource_id: this.ctx.config.site.meter, includes_chargers: this.ctx.config.site.meter_includes_chargers }, 'following the site meter for charging plans');
  }

  async stop(): Promise<void> {}

  /** A sample of any meter (sample.taken): the site meter's becomes the latest reading. */
  sampleTaken(sample: MeterSample): void {
    if (sample.resourceId !== this.ctx.config.site.meter) return;
    // Newer only: a source that catches up must not put an older reading back.
    if (this.latest && sample.sampledAtMs < this.latest.sampledAtMs) return;
    this.latest = siteMeterReading(sample);
  }

  /** A P1 meter's capacity objects (meter.demand): the site meter's become the latest (site.capacity, planning/capacity-limit.ts). */
  demandRead(e: { readonly resourceId: string; readonly sampledAtMs: number; readonly demand: P1Demand }): void {
    if (e.resourceId !== this.ctx.config.site.meter) return;
    if (this.demand && e.sampledAtMs < this.demand.sampledAtMs) return;
    const d = e.demand;
    this.demand = { sampledAtMs: e.sampledAtMs, quarterHourAverageKw: d.quarterHourAverageKw, monthPeakKw: d.monthPeak?.kw ?? null, monthPeakAtMs: d.monthPeak?.atMs ?? null };
  }
}
