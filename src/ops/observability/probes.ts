// The live views of the running modules, for /healthz, /metrics, the status page and the
// network scan: each read asks the modules (Module.views) at that moment. The composition
// root hands over its module list once (observe); a view no module gives is null ("this
// part is not running"), as is a lazily loaded module's before it has started.
import type { MeterStatus } from '../../domain.js';
import type { Module } from '../../lifecycle.js';
import type { SiteMeterReading } from '../../planning/site-load.js';
import type { BusScanView, ChargerView, ClockView, FuseConnectorView, GridControlView, HealthContributor, ModuleViews, PriceCoverageView, PriceSeriesView, UplinkView } from './views.js';

export class Probes {
  private modules: readonly Module[] = [];

  /** The modules whose views are read (the composition root's list, or a test's). */
  observe(modules: readonly Module[]): void {
    this.modules = modules;
  }

  /** Every module's meters (sources), in module order. */
  get meters(): (() => readonly MeterStatus[]) | null {
    const givers = this.modules.flatMap((m) => (m.views?.meters ? [m.views.meters] : []));
    return givers.length === 0 ? null : () => givers.flatMap((view) => view());
  }

  /** What answers on every bus (sources), in module order. */
  get busScan(): (() => readonly BusScanView[]) | null {
    const givers = this.modules.flatMap((m) => (m.views?.busScan ? [m.views.busScan] : []));
    return givers.length === 0 ? null : () => givers.flatMap((view) => view());
  }

  /** Every configured charge point (the OCPP central system), or null when it is not running. */
  get chargers(): (() => readonly ChargerView[]) | null {
    return this.first('chargers');
  }

  get uplink(): (() => UplinkView) | null {
    return this.first('uplink');
  }

  get clock(): (() => ClockView) | null {
    return this.first('clock');
  }

  get prices(): (() => readonly PriceCoverageView[]) | null {
    return this.first('prices');
  }

  get priceSeries(): ((region: string, nowMs: number) => PriceSeriesView | null) | null {
    return this.first('priceSeries');
  }

  /** The connectors under the fuse controller, or null when it is not running. */
  get fuse(): (() => readonly FuseConnectorView[]) | null {
    return this.first('fuse');
  }

  /** The grid operator's dimming, or null when grid_control is not configured. */
  get gridControl(): (() => GridControlView) | null {
    return this.first('gridControl');
  }

  /** The site meter's latest reading, or null when no site meter is followed. */
  get siteMeter(): (() => SiteMeterReading | null) | null {
    return this.first('siteMeter');
  }

  /** The site meter's latest quarter-hour demand and month's peak, or null when none is followed. */
  get siteDemand(): NonNullable<ModuleViews['siteDemand']> | null {
    return this.first('siteDemand');
  }

  /** Components of /healthz the modules judge themselves (e.g. `store`, `forecast`), by name. */
  get health(): ReadonlyMap<string, HealthContributor> {
    return new Map(this.modules.flatMap((m) => Object.entries(m.views?.health ?? {})));
  }

  private first<K extends keyof ModuleViews>(view: K): NonNullable<ModuleViews[K]> | null {
    for (const m of this.modules) {
      const v = m.views?.[view];
      if (v) return v as NonNullable<ModuleViews[K]>;
    }
    return null;
  }
}
