import type { MeterProfile } from '../../config/types.js';

/**
 * Eastron SDM120-Modbus (single phase).
 * Checked against: Eastron "SDM120-Modbus Smart Meter Modbus Protocol Implementation V2.x",
 * Input Registers: function code 04, float32 high word first; voltage 30001 (0x0000),
 * current 30007 (0x0006), active power 30013 (0x000C), power factor 30031 (0x001E),
 * frequency 30071 (0x0046), import 30073 (0x0048), export 30075 (0x004A), energy in kWh.
 * Eastron's 40-parameter (80 register) request limit is assumed as for the SDM630.
 */
export const sdm120: MeterProfile = {
  vendor: 'Eastron',
  model: 'SDM120',
  function_code: 4,
  max_registers_per_request: 80,
  max_gap_registers: 10,
  max_power_w: 12_000,
  registers: [
    { metric: 'voltage_l1', address: 0x0000, type: 'float32', word_order: 'big', scale: 1, unit: 'V', default: false },
    { metric: 'current_l1', address: 0x0006, type: 'float32', word_order: 'big', scale: 1, unit: 'A', default: false },
    { metric: 'total_active_power', address: 0x000c, type: 'float32', word_order: 'big', scale: 1, unit: 'W', default: true },
    { metric: 'power_factor', address: 0x001e, type: 'float32', word_order: 'big', scale: 1, unit: '1', default: false },
    { metric: 'frequency', address: 0x0046, type: 'float32', word_order: 'big', scale: 1, unit: 'Hz', default: false },
    { metric: 'active_energy_import', address: 0x0048, type: 'float32', word_order: 'big', scale: 1000, unit: 'Wh', default: true },
    { metric: 'active_energy_export', address: 0x004a, type: 'float32', word_order: 'big', scale: 1000, unit: 'Wh', default: false },
  ],
};
