import type { MeterProfile } from '../../config/types.js';

/**
 * Eastron SDM72D-M (V2).
 * Checked against: Eastron "SDM72D-M User Manual V1.1", Part 3 Modbus Protocol, Input
 * Registers: function code 04, float32 high word first, same addresses as the SDM630 for
 * these quantities. "Each request for data must be restricted to 30 parameters or less"
 * (= 60 registers), otherwise the meter answers with an exception.
 */
export const sdm72d: MeterProfile = {
  vendor: 'Eastron',
  model: 'SDM72D-M',
  function_code: 4,
  max_registers_per_request: 60,
  max_gap_registers: 10,
  max_power_w: 100_000,
  registers: [
    { metric: 'voltage_l1', address: 0x0000, type: 'float32', word_order: 'big', scale: 1, unit: 'V', default: false },
    { metric: 'voltage_l2', address: 0x0002, type: 'float32', word_order: 'big', scale: 1, unit: 'V', default: false },
    { metric: 'voltage_l3', address: 0x0004, type: 'float32', word_order: 'big', scale: 1, unit: 'V', default: false },
    { metric: 'current_l1', address: 0x0006, type: 'float32', word_order: 'big', scale: 1, unit: 'A', default: false },
    { metric: 'current_l2', address: 0x0008, type: 'float32', word_order: 'big', scale: 1, unit: 'A', default: false },
    { metric: 'current_l3', address: 0x000a, type: 'float32', word_order: 'big', scale: 1, unit: 'A', default: false },
    { metric: 'total_active_power', address: 0x0034, type: 'float32', word_order: 'big', scale: 1, unit: 'W', default: true },
    { metric: 'power_factor', address: 0x003e, type: 'float32', word_order: 'big', scale: 1, unit: '1', default: false },
    { metric: 'frequency', address: 0x0046, type: 'float32', word_order: 'big', scale: 1, unit: 'Hz', default: false },
    { metric: 'active_energy_import', address: 0x0048, type: 'float32', word_order: 'big', scale: 1000, unit: 'Wh', default: true },
    { metric: 'active_energy_export', address: 0x004a, type: 'float32', word_order: 'big', scale: 1000, unit: 'Wh', default: false },
  ],
};
