// The grid_control settings (docs/grid-limits.md): defaults, and what the loader refuses because a car could not be dimmed.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { CONFIG_BASE as BASE, configProblems as problemsOf } from '../helpers/config-problems.js';

const DEFAULT_TARGET = { departure_local_time: '07:00', energy_wh: 20000 };
const charger = (connectors?: unknown[], extra: Record<string, unknown> = {}) => ({ id: 'CP-1', password: 'charger-secret-0123456789', auth: 'accept_all', ...(connectors ? { connectors } : {}), ...extra });
const GPIO = { type: 'gpio', chip: 'gpiochip0', lines: [17] };

describe('grid_control settings', () => {
  it('defaults: one contact, active = P_min,14a; dim when the signal is lost; a 60 s deadline; no other devices', () => {
    const g = validateConfig({ ...BASE, chargers: [charger([{ connector_id: 1, default_target: DEFAULT_TARGET }])], grid_control: { input: GPIO } }, 'test', {}).grid_control;
    expect(g).toEqual({
      input: GPIO,
      patterns: [
        { contacts: [true], limit: 'minimum' },
        { contacts: [false], limit: 'none' },
      ],
      other_devices: [],
      on_signal_lost: 'dim',
      reaction_deadline_s: 60,
    });
  });

  it('refuses a car it could not dim: a charger without connectors, a connector without a default target; an OCPP 2.0.1 station is dimmed as a 1.6 charger', () => {
    expect(problemsOf({ chargers: [charger()], grid_control: { input: GPIO } }).join('\n')).toMatch(/chargers\[0\]\.connectors: charger CP-1 lists no connectors: with grid_control every charger must be dimmable/);
    expect(problemsOf({ chargers: [charger([{ connector_id: 1 }])], grid_control: { input: GPIO } })).toEqual([expect.stringMatching(/^chargers\[0\]\.connectors\[0\]\.default_target: with grid_control every car must get a plan/)]);
    expect(problemsOf({ chargers: [charger([{ connector_id: 1, default_target: DEFAULT_TARGET }], { ocpp_version: '2.0.1' })], grid_control: { input: GPIO } })).toEqual([]);
  });

  it('refuses patterns that do not fit the inputs, an unknown bus, and a serial bus that also carries meters', () => {
    const chargers = [charger([{ connector_id: 1, default_target: DEFAULT_TARGET }])];
    expect(problemsOf({ chargers, grid_control: { input: GPIO, patterns: [{ contacts: [true, false], limit: 'minimum' }] } })).toEqual(['grid_control.patterns[0].contacts: has 2 contact(s), the input reads 1']);
    expect(problemsOf({ chargers, grid_control: { input: { type: 'modbus', bus: 'io', unit_id: 1, addresses: [0] } } }).join('\n')).toMatch(/grid_control\.input\.bus: no bus named "io"/);
    const serial = { buses: [{ name: 'rs485', type: 'rtu', port: '/dev/ttyUSB0' }], meters: [{ resource_id: '0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b', bus: 'rs485', unit_id: 1, profile: 'sdm630' }] };
    expect(problemsOf({ ...serial, chargers, grid_control: { input: { type: 'modbus', bus: 'rs485', unit_id: 7, addresses: [0] } } }).join('\n')).toMatch(/the serial bus "rs485" also carries meters/);
  });
});
