// DSMR P1 smart meters as a meter source: `type: p1` (serial port) or `type: p1-tcp` (a TCP
// serial bridge such as ser2net). One meter per bus; unit_id and profile may be left out.
import type { BusConfig, MeterConfig } from '../config/types.js';
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

function meterProblems(meter: Partial<MeterConfig>, i: number, config: { meters?: unknown; buses?: unknown }): string[] {
  const problems: string[] = [];
  const others = Array.isArray(config.meters) ? (config.meters as Array<Partial<MeterConfig>>).filter((m) => m !== meter && m?.bus === meter.bus) : [];
  if (others.length > 0) problems.push(`meters[${i}].bus: a P1 port has one meter; "${meter.bus}" has ${others.length + 1}`);
  if (meter.profile !== undefined && meter.profile !== 'dsmr') problems.push(`meters[${i}].profile: a meter on a P1 bus has profile dsmr (or none)`);
  const bus = Array.isArray(config.buses) ? (config.buses as Array<Partial<BusConfig>>).find((b) => b?.name === meter.bus) : undefined;
  if (bus?.mode === 'C' && bus.type !== 'p1') problems.push(`meters[${i}].bus: "${meter.bus}" has mode C, which needs type p1 (a serial port): a TCP bridge cannot switch the baud rate the meter proposes`);
  if (bus?.mode === 'C' && bus.line !== undefined) problems.push(`meters[${i}].bus: "${meter.bus}" has mode C and line ${bus.line}: leave line out (mode C starts at 300 baud 7E1 and switches to the rate the meter proposes)`);
  if (meter.extra_metrics !== undefined && meter.extra_metrics.length > 0) problems.push(`meters[${i}].extra_metrics: a P1 meter publishes every quantity its telegram has; leave extra_metrics out`);
  // Each channel is a resource of its own: its id is no other meter's or channel's.
  const taken = new Set<string>();
  for (const m of Array.isArray(config.meters) ? (config.meters as Array<Partial<MeterConfig>>) : []) {
    if (m !== meter && typeof m?.resource_id === 'string') taken.add(m.resource_id.toLowerCase());
    if (m !== meter) for (const id of Object.values(m?.channels ?? {})) taken.add(String(id).toLowerCase());
  }
  if (typeof meter.resource_id === 'string') taken.add(meter.resource_id.toLowerCase());
  for (const [n, id] of Object.entries(meter.channels ?? {})) {
    if (taken.has(String(id).toLowerCase())) problems.push(`meters[${i}].channels.${n}: ${id} is the resource id of another meter or channel; give each M-Bus channel its own`);
    taken.add(String(id).toLowerCase());
  }
  return problems;
}
