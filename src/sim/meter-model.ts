// The physics of a simulated meter: plausible, slowly varying load; an import counter that
// integrates exactly the power it reports, so energy and power are always consistent.
import type { Clock } from '../clock.js';
import { mulberry32 } from './prng.js';

export interface MeterReadingValues {
  readonly [metric: string]: number;
}

export interface MeterModelOptions {
  readonly seed: number;
  readonly clock: Clock;
  /** Typical load in W (the load wanders around it). */
  readonly baseLoadW?: number;
  readonly phases?: 1 | 3;
  readonly initialImportWh?: number;
  /** A load set from outside (W) instead of the wandering one; null: wander as usual. Tests that set the site's load use it. */
  readonly fixedLoadW?: () => number | null;
}

export class MeterModel {
  private readonly rnd: () => number;
  private readonly baseLoadW: number;
  private readonly phases: 1 | 3;
  private lastMs: number;
  private powerW: number;
  private importWh: number;
  private exportWh = 0;

  constructor(private readonly opts: MeterModelOptions) {
    this.rnd = mulberry32(opts.seed); // each unit id behaves differently but reproducibly
    this.baseLoadW = opts.baseLoadW ?? 2000 + 1500 * this.rnd();
    this.phases = opts.phases ?? 3;
    this.lastMs = opts.clock.now();
    this.powerW = this.baseLoadW;
    this.importWh = opts.initialImportWh ?? Math.round(100_000 + 5_000_000 * this.rnd());
  }

  /** Advances the model to now: integrates the energy at the power held since the last step. */
  private advance(): void {
    const now = this.opts.clock.now();
    const dtMs = Math.max(0, now - this.lastMs);
    if (dtMs === 0) return;
    this.importWh += (this.powerW * dtMs) / 3_600_000;
    this.lastMs = now;
    const fixedW = this.opts.fixedLoadW?.() ?? null;
    if (fixedW !== null) {
      this.powerW = fixedW;
      return;
    }
    // New power: slow daily-ish swing plus a bounded random walk; occasionally a big appliance.
    const swing = 0.3 * this.baseLoadW * Math.sin((2 * Math.PI * now) / 600_000);
    const walk = (this.rnd() - 0.5) * 0.1 * this.baseLoadW * Math.min(1, dtMs / 1000);
    const target = this.baseLoadW + swing + (this.rnd() < 0.02 ? 3000 * this.rnd() : 0);
    this.powerW = Math.max(50, Math.min(3 * this.baseLoadW + 3000, this.powerW + walk + 0.2 * (target - this.powerW)));
  }

  /** Current values by metric name, in the units of the contract (W, Wh, V, A, Hz). */
  values(): MeterReadingValues {
    this.advance();
    // A set load is taken at once (not only from the next step on).
    const fixedW = this.opts.fixedLoadW?.() ?? null;
    if (fixedW !== null) this.powerW = fixedW;
    const v = (i: number) => 230 + 2 * Math.sin(this.lastMs / 7000 + i) + (this.rnd() - 0.5);
    const pf = 0.95 + 0.03 * Math.sin(this.lastMs / 13_000);
    const voltages = [v(0), v(1), v(2)];
    const perPhase = this.powerW / this.phases;
    const out: Record<string, number> = {
      total_active_power: this.powerW,
      active_energy_import: this.importWh,
      active_energy_export: this.exportWh,
      frequency: 50 + 0.02 * Math.sin(this.lastMs / 5000),
      power_factor: pf,
    };
    for (let i = 0; i < this.phases; i++) {
      out[`voltage_l${i + 1}`] = voltages[i];
      out[`current_l${i + 1}`] = perPhase / (voltages[i] * pf);
      out[`active_power_l${i + 1}`] = perPhase;
    }
    return out;
  }
}
