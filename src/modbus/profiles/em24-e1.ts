import type { MeterProfile } from '../../config/types.js';

/**
 * Carlo Gavazzi EM24 Ethernet (EM24DINAV23XE1…, EM24DINAV53XE1…; model codes 1648–1653).
 * Its map differs from the RS-485 EM24-DIN (see em24.ts): it follows the layout of the
 * EM21/EM24 "Instantaneous variables and meters" table (Carlo Gavazzi communication
 * protocol, functions 03 and 04): INT32 least significant word first; V L1-N 0x0000 (V*10),
 * A L1 0x000C (A*1000), W sys 0x0028 (W*10), PF sys 0x0031 INT16 (PF*1000), Hz 0x0033
 * (Hz*10), kWh(+) TOT 0x0034 (kWh*10), kWh(-) TOT 0x004E (kWh*10); cross-checked with
 * Victron dbus-modbus-client carlo_gavazzi.py (EM24 Ethernet: power 0x0028, Hz 0x0033,
 * forward 0x0034, reverse 0x004E, per-phase kWh 0x0040/42/44).
 * The per-request register limit is not stated in the sources we had; 50 is conservative.
 */
export const em24E1: MeterProfile = {
  vendor: 'Carlo Gavazzi',
  model: 'EM24 Ethernet',
  function_code: 4,
  max_registers_per_request: 50,
  max_gap_registers: 10,
  max_power_w: 100_000,
  registers: [
    { metric: 'voltage_l1', address: 0x0000, type: 'int32', word_order: 'little', scale: 0.1, unit: 'V', default: false },
    { metric: 'voltage_l2', address: 0x0002, type: 'int32', word_order: 'little', scale: 0.1, unit: 'V', default: false },
    { metric: 'voltage_l3', address: 0x0004, type: 'int32', word_order: 'little', scale: 0.1, unit: 'V', default: false },
    { metric: 'current_l1', address: 0x000c, type: 'int32', word_order: 'little', scale: 0.001, unit: 'A', default: false },
    { metric: 'current_l2', address: 0x000e, type: 'int32', word_order: 'little', scale: 0.001, unit: 'A', default: false },
    { metric: 'current_l3', address: 0x0010, type: 'int32', word_order: 'little', scale: 0.001, unit: 'A', default: false },
    { metric: 'total_active_power', address: 0x0028, type: 'int32', word_order: 'little', scale: 0.1, unit: 'W', default: true },
    { metric: 'power_factor', address: 0x0031, type: 'int16', word_order: 'big', scale: 0.001, unit: '1', default: false },
    { metric: 'frequency', address: 0x0033, type: 'int16', word_order: 'big', scale: 0.1, unit: 'Hz', default: false },
    { metric: 'active_energy_import', address: 0x0034, type: 'int32', word_order: 'little', scale: 100, unit: 'Wh', default: true },
    { metric: 'active_energy_export', address: 0x004e, type: 'int32', word_order: 'little', scale: 100, unit: 'Wh', default: false },
  ],
};
