import type { MeterProfile } from '../../config/types.js';

/**
 * Eastron SDM630-Modbus (V2, also MID V2).
 * Checked against: Eastron "SDM630 Modbus Protocol" input-register table (SDM630MCT Modbus
 * Protocol V1.7 / SDM630-Modbus MID V2 manual, section 1.2 Input Registers, 3X addresses
 * 30001 ff.): function code 04, IEEE 754 float32, high word first. Energy registers are
 * kWh (scaled to Wh here). 0x0156 is total kWh = import + export, so import is 0x0048.
 * "Do not read more than 40 parameters (80 registers) in a single request" (Eastron note).
 */
export const sdm630: MeterProfile = {
  vendor: 'Eastron',
  model: 'SDM630',
  function_code: 4,
  max_registers_per_request: 80,
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
