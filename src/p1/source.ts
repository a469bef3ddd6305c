// DSMR P1 smart meters as a meter source: `type: p1` (serial port) or `type: p1-tcp` (a TCP
// serial bridge such as ser2net). One meter per bus; unit_id and profile may be left out.
import type { MeterConfig } from '../config/types.js';
import type { SourceRegistry } from '../sources/registry.js';

export function registerP1Source(registry: SourceRegistry): void {
  registry.register({
    kind: 'p1',
    busTypes: ['p1', 'p1-tcp'],
    meterDefaults: { unit_id: 1, profile: 'dsmr' },
    identifiesMeters: true,
    meterProblems,
    load: async () => {
      const { P1Source } = await import('./p1-source.js');
      return (deps) => new P1Source(deps);
    },
  });
}

function meterProblems(meter: Partial<MeterConfig>, i: number, config: { meters?: unknown }): string[] {
  const problems: string[] = [];
  const others = Array.isArray(config.meters) ? (config.meters as Array<Partial<MeterConfig>>).filter((m) => m !== meter && m?.bus === meter.bus) : [];
  if (others.length > 0) problems.push(`meters[${i}].bus: a P1 port has one meter; "${meter.bus}" has ${others.length + 1}`);
  if (meter.profile !== undefined && meter.profile !== 'dsmr') problems.push(`meters[${i}].profile: a meter on a P1 bus has profile dsmr (or none)`);
  if (meter.extra_metrics !== undefined && meter.extra_metrics.length > 0) problems.push(`meters[${i}].extra_metrics: a P1 meter publishes every quantity its telegram has; leave extra_metrics out`);
  return problems;
}
