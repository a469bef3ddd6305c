// Source types by bus type. One registry is made by the composition root (or by a command
// that needs one) and filled by the registration lines in index.ts; there is no global one.
import type { BusConfig, Config, MeterConfig } from '../config/types.js';
import type { MeterSourceType } from './source.js';

export class SourceRegistry {
  private readonly byBusType = new Map<string, MeterSourceType>();
  private readonly types: MeterSourceType[] = [];

  register(type: MeterSourceType): void {
    for (const busType of type.busTypes) {
      if (this.byBusType.has(busType)) throw new Error(`bus type ${busType} is registered twice (${this.byBusType.get(busType)!.kind}, ${type.kind})`);
      this.byBusType.set(busType, type);
    }
    this.types.push(type);
  }

  forBusType(busType: string): MeterSourceType | undefined {
    return this.byBusType.get(busType);
  }

  busTypes(): string[] {
    return [...this.byBusType.keys()];
  }

  /** Each registered source type with the buses and meters of the config it reads (types without a bus left out). */
  partition(config: Config): Array<{ type: MeterSourceType; buses: BusConfig[]; meters: MeterConfig[] }> {
    return this.types
      .map((type) => {
        const buses = config.buses.filter((b) => type.busTypes.includes(b.type));
        const names = new Set(buses.map((b) => b.name));
        return { type, buses, meters: config.meters.filter((m) => names.has(m.bus)) };
      })
      .filter((p) => p.buses.length > 0);
  }
}
