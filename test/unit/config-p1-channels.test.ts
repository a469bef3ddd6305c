// A P1 meter's M-Bus channels in the config: each becomes a meters entry of its own (its resource),
// on the meter's bus, with the channel number as unit_id; ids are checked like meters' ids.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { CONFIG_BASE, configProblems } from '../helpers/config-problems.js';

const METER = '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f';
const GAS = '1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b';
const WATER = '2c3d4e5f-6071-4829-9bac-1d2e3f4a5b6c';
const buses = [
  { name: 'p1', type: 'p1', port: '/dev/ttyUSB1' },
  { name: 'rs485', type: 'rtu', port: '/dev/ttyUSB0' },
];

describe('P1 meter channels in the config', () => {
  it('each channel is a meter entry of its own on the meter bus, marked as channel n of the meter', () => {
    const config = validateConfig({ ...CONFIG_BASE, buses, meters: [{ resource_id: METER, bus: 'p1', channels: { 1: GAS, 2: WATER } }] }, 'test', {});
    expect(config.meters).toEqual([
      expect.objectContaining({ resource_id: METER, bus: 'p1', unit_id: 1, profile: 'dsmr', channels: { 1: GAS, 2: WATER } }),
      { resource_id: GAS, bus: 'p1', unit_id: 1, profile: 'dsmr-mbus', extra_metrics: [], channel: { of: METER, number: 1 } },
      { resource_id: WATER, bus: 'p1', unit_id: 2, profile: 'dsmr-mbus', extra_metrics: [], channel: { of: METER, number: 2 } },
    ]);
  });

  it('a channel id that is another meter or channel, a channel number outside 1-4, channels on a Modbus meter: each named', () => {
    const problems = configProblems({
      buses,
      meters: [
        { resource_id: METER, bus: 'p1', channels: { 1: GAS, 2: GAS, 5: WATER } },
        { resource_id: WATER.replace('2c', '3c'), bus: 'rs485', unit_id: 1, profile: 'sdm630', channels: { 1: METER.replace('7c', '8c') } },
      ],
    });
    expect(problems.join('\n')).toContain('meters[0].channels.2: 1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b is the resource id of another meter or channel');
    expect(problems.join('\n')).toMatch(/meters\[0\]\.channels.*5/);
    expect(problems).toContain("meters[1].channels: M-Bus channels are read from a P1 meter's telegrams; a Modbus meter has none");
    expect(configProblems({ buses, meters: [{ resource_id: METER, bus: 'p1', channels: { 1: METER } }] }).join('\n')).toContain('meters[0].channels.1');
  });
});
