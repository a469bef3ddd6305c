// Modbus meters (RTU, TCP, RTU over TCP) as a meter source: the poller reads register maps
// (profiles/) on every Modbus bus of the config.
import type { MeterConfig } from '../config/types.js';
import type { SourceRegistry } from '../sources/registry.js';
import { likelyMeant } from '../config/nearest.js';
import { builtInProfiles } from './profiles/index.js';

export function registerModbusSource(registry: SourceRegistry): void {
  registry.register({
    kind: 'modbus',
    busTypes: ['rtu', 'tcp', 'rtu-over-tcp'],
    meterProblems,
    load: async () => {
      const { MeterPoller } = await import('./poller.js');
      return (deps) => new MeterPoller(deps);
    },
  });
}

function meterProblems(meter: Partial<MeterConfig>, i: number, config: { profiles?: unknown }): string[] {
  const problems: string[] = [];
  if (meter.channels !== undefined) problems.push(`meters[${i}].channels: M-Bus channels are read from a P1 meter's telegrams; a Modbus meter has none`);
  if (meter.unit_id === undefined) problems.push(`meters[${i}].unit_id: is required`);
  if (meter.profile === undefined) problems.push(`meters[${i}].profile: is required`);
  if (typeof meter.profile !== 'string') return problems;
  const userProfiles = isMapping(config.profiles) ? (config.profiles as Record<string, { registers?: unknown }>) : {};
  const profile = userProfiles[meter.profile] ?? builtInProfiles[meter.profile];
  if (!profile) {
    const names = [...Object.keys(userProfiles), ...Object.keys(builtInProfiles)];
    const meant = likelyMeant(meter.profile, names);
    problems.push(`meters[${i}].profile: unknown profile "${meter.profile}"${meant ? `; did you mean ${meant}?` : ` (built in: ${Object.keys(builtInProfiles).join(', ')}; or define it under profiles)`}`);
  } else if (Array.isArray(profile.registers) && Array.isArray(meter.extra_metrics)) {
    const known = new Set((profile.registers as Array<{ metric: string }>).map((r) => r.metric));
    meter.extra_metrics.forEach((metric, j) => {
      if (known.has(metric)) return;
      // A typo gets the one name it is likely of; anything else the profile's whole list.
      const meant = likelyMeant(metric, known);
      problems.push(`meters[${i}].extra_metrics[${j}]: profile "${meter.profile}" has no metric "${metric}"${meant ? `; did you mean ${meant}?` : ` (has: ${[...known].join(', ')})`}`);
    });
  }
  return problems;
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
