// The meter source types the gateway knows. Adding one: a folder with a file that exports
// `registerXSource(registry)` (see blueprint.ts), and one line below.
import { registerModbusSource } from '../modbus/source.js';
import { registerP1Source } from '../p1/source.js';
import { SourceRegistry } from './registry.js';

export function meterSourceTypes(registry = new SourceRegistry()): SourceRegistry {
  registerModbusSource(registry);
  registerP1Source(registry);
  return registry;
}
