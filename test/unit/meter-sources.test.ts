// The meter-source seam: the registry picks the source of each bus type, config checks and
// defaults come from the meter's source, and a poll slot is committed once every source is done.
import { describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../src/config/load.js';
import { registerBlueprintSource } from '../../src/sources/blueprint.js';
import { meterSourceTypes } from '../../src/sources/index.js';
import { SourceRegistry } from '../../src/sources/registry.js';
import { TickJoin } from '../../src/sources/tick-join.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const A = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const B = '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f';

function problemsOf(raw: unknown): readonly string[] {
  try {
    validateConfig(raw, 'test', {});
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('meter sources', () => {
  it('every bus type of the schema has exactly one source; a second registration of a type is refused', () => {
    const registry = meterSourceTypes();
    expect(registry.busTypes().sort()).toEqual(['p1', 'p1-tcp', 'rtu', 'rtu-over-tcp', 'tcp']);
    expect(registry.forBusType('rtu-over-tcp')?.kind).toBe('modbus');
    expect(registry.forBusType('p1-tcp')?.kind).toBe('p1');
    expect(() => registerBlueprintSource(registry)).not.toThrow();
    expect(() => meterSourceTypes(registry)).toThrow(/registered twice/);
  });

  it('splits a config into each source with its own buses and meters', () => {
    const config = validateConfig(
      {
        organization_id: ORG,
        buses: [
          { name: 'rs485', type: 'rtu', port: '/dev/ttyUSB0' },
          { name: 'meter-p1', type: 'p1', port: '/dev/ttyUSB1' },
          { name: 'bridge', type: 'p1-tcp', host: '192.0.2.7', tcp_port: 2001, line: '9600 7E1' },
        ],
        meters: [
          { resource_id: A, bus: 'rs485', unit_id: 3, profile: 'sdm630' },
          { resource_id: B, bus: 'meter-p1' },
        ],
      },
      'test',
      {},
    );
    const parts = meterSourceTypes().partition(config);
    expect(parts.map((p) => [p.type.kind, p.buses.map((b) => b.name), p.meters.map((m) => m.resource_id)])).toEqual([
      ['modbus', ['rs485'], [A]],
      ['p1', ['meter-p1', 'bridge'], [B]],
    ]);
    // A P1 meter may leave out unit_id and profile.
    expect(config.meters[1]).toMatchObject({ unit_id: 1, profile: 'dsmr' });
  });

  it("checks a meter by its source's rules", () => {
    const buses = [
      { name: 'rs485', type: 'rtu', port: '/dev/ttyUSB0' },
      { name: 'meter-p1', type: 'p1', port: '/dev/ttyUSB1' },
    ];
    expect(problemsOf({ organization_id: ORG, buses, meters: [{ resource_id: A, bus: 'rs485' }] })).toEqual(['meters[0].unit_id: is required', 'meters[0].profile: is required']);
    expect(
      problemsOf({
        organization_id: ORG,
        buses,
        meters: [
          { resource_id: A, bus: 'meter-p1', profile: 'sdm630', unit_id: 1 },
          { resource_id: B, bus: 'meter-p1', unit_id: 2, extra_metrics: ['frequency'] },
        ],
      }),
    ).toEqual([
      'meters[0].bus: a P1 port has one meter; "meter-p1" has 2',
      'meters[0].profile: a meter on a P1 bus has profile dsmr (or none)',
      'meters[1].bus: a P1 port has one meter; "meter-p1" has 2',
      'meters[1].extra_metrics: a P1 meter publishes every quantity its telegram has; leave extra_metrics out',
    ]);
    expect(problemsOf({ organization_id: ORG, buses: [{ name: 'x', type: 'p1-tcp' }, { name: 'y', type: 'p1', line: '19200 8N1', port: '/dev/x' }] })).toEqual([
      'buses[0].host: is required',
      'buses[1].line: must be one of "115200 8N1", "9600 7E1", "2400 7E1", "9600 8N1"',
    ]);
  });

  it('commits a slot once every source has finished it, whichever order and however often', () => {
    const commits: number[] = [];
    const join = new TickJoin(2, () => commits.push(commits.length));
    join.done('modbus');
    join.done('modbus'); // a slot of the P1 source was late
    expect(commits).toHaveLength(0);
    join.done('p1');
    expect(commits).toHaveLength(1);
    join.done('p1');
    join.done('modbus');
    expect(commits).toHaveLength(2);
    const alone = new TickJoin(1, () => commits.push(0));
    alone.done('modbus');
    expect(commits).toHaveLength(3);
  });
});
