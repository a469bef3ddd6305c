import type { MeterProfile } from '../../config/types.js';

/**
 * ABB B23 / B24 (same map; B24 is the CT-connected variant).
 * Checked against: ABB "B23/B24 User Manual" 2CMC485003M0201 Rev. A, chapter 9
 * "Communication with Modbus", mapping tables: function code 03 only, up to 125 registers
 * per request; energy accumulators 0x5000 (active import) / 0x5004 (active export) are
 * 4-register unsigned 64-bit, resolution 0.01 kWh (scale 10 to Wh); instantaneous values
 * 0x5B00 ff.: voltages uint32 0.1 V, currents uint32 0.01 A, total active power 0x5B14
 * signed int32 0.01 W, frequency 0x5B2C uint16 0.01 Hz, total power factor 0x5B3A int16
 * 0.001. Registers without data answer all-ones (unsigned) or 0x7FFF... (signed):
 * decode.ts turns those into "no value".
 * max_power_w: a B23 is 65 A direct (about 45 kW); for a B24 behind CTs set
 * meters[].max_power_w to the CT rating.
 */
export const abbB23: MeterProfile = {
  vendor: 'ABB',
  model: 'B23/B24',
  function_code: 3,
  max_registers_per_request: 125,
  max_gap_registers: 10,
  max_power_w: 100_000,
  registers: [
    { metric: 'active_energy_import', address: 0x5000, type: 'uint64', word_order: 'big', scale: 10, unit: 'Wh', default: true },
    { metric: 'active_energy_export', address: 0x5004, type: 'uint64', word_order: 'big', scale: 10, unit: 'Wh', default: false },
    { metric: 'voltage_l1', address: 0x5b00, type: 'uint32', word_order: 'big', scale: 0.1, unit: 'V', default: false },
    { metric: 'voltage_l2', address: 0x5b02, type: 'uint32', word_order: 'big', scale: 0.1, unit: 'V', default: false },
    { metric: 'voltage_l3', address: 0x5b04, type: 'uint32', word_order: 'big', scale: 0.1, unit: 'V', default: false },
    { metric: 'current_l1', address: 0x5b0c, type: 'uint32', word_order: 'big', scale: 0.01, unit: 'A', default: false },
    { metric: 'current_l2', address: 0x5b0e, type: 'uint32', word_order: 'big', scale: 0.01, unit: 'A', default: false },
    { metric: 'current_l3', address: 0x5b10, type: 'uint32', word_order: 'big', scale: 0.01, unit: 'A', default: false },
    { metric: 'total_active_power', address: 0x5b14, type: 'int32', word_order: 'big', scale: 0.01, unit: 'W', default: true },
    { metric: 'frequency', address: 0x5b2c, type: 'uint16', word_order: 'big', scale: 0.01, unit: 'Hz', default: false },
    { metric: 'power_factor', address: 0x5b3a, type: 'int16', word_order: 'big', scale: 0.001, unit: '1', default: false },
  ],
};
