import type { MeterProfile } from '../../config/types.js';

/**
 * Carlo Gavazzi EM24-DIN with RS-485 (AV2/AV5/AV6/AV9, PFA/PFB/X models; model codes 70–73).
 * Checked against: Carlo Gavazzi "EM24-DIN PFA, PFB & X models Communication Protocol"
 * (version 3/4), table of instantaneous variables and meters, functions 03 and 04 alike:
 * INT32 least significant word first; V L1-N 0x0000 (V*10), A L1 0x000C (A*1000),
 * W sys 0x0028 (W*10), Hz 0x0037 (Hz*10), kWh(+) TOT 0x003E (kWh*10), kWh(-) TOT 0x005C
 * (kWh*10); cross-checked with the EM24 RTU module for Victron dbus-modbus-client (power
 * 0x0028, phase sequence 0x0036, Hz 0x0037, forward 0x003E, reverse 0x005C, per-phase kWh
 * 0x0046/48/4A). PF sys 0x0035 follows from that layout (PF L1..L3 at 0x0032..0x0034).
 * Note: design.md listed 0x0042 for import; in this map 0x0042 is the partial kWh(+) PAR
 * counter (resettable), so the total 0x003E is used. The EM24 Ethernet variant has another
 * map (em24-e1.ts). The per-request register limit is not stated in the sources we had; 50
 * is conservative.
 */
export const em24: MeterProfile = {
  vendor: 'Carlo Gavazzi',
  model: 'EM24-DIN',
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
    { metric: 'power_factor', address: 0x0035, type: 'int16', word_order: 'big', scale: 0.001, unit: '1', default: false },
    { metric: 'frequency', address: 0x0037, type: 'int16', word_order: 'big', scale: 0.1, unit: 'Hz', default: false },
    { metric: 'active_energy_import', address: 0x003e, type: 'int32', word_order: 'little', scale: 100, unit: 'Wh', default: true },
    { metric: 'active_energy_export', address: 0x005c, type: 'int32', word_order: 'little', scale: 100, unit: 'Wh', default: false },
  ],
};
