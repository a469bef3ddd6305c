// The exogenous provider types the gateway knows: one line per provider (registry.ts).
import { registerEntsoeExogenous } from './entsoe.js';
import { ExogenousRegistry } from './registry.js';

export function exogenousProviderTypes(): ExogenousRegistry {
  const registry = new ExogenousRegistry();
  registerEntsoeExogenous(registry);
  return registry;
}
