// What the recorded DSMR 5.0 telegram ../shared/data/dsmr/v5.txt (Iskra) says, in the
// contract's metric names and units: power delivered minus received, both tariffs summed,
// per-phase power (delivered minus received), voltages and currents. One place for the parser's unit test and the daemon tests
// that replay the telegram through the simulator.
export const DSMR_V5_METRICS = {
  total_active_power: [244, 'W'],
  active_power_l1: [70, 'W'],
  active_power_l2: [32, 'W'],
  active_power_l3: [142, 'W'],
  active_energy_import: [6825, 'Wh'],
  active_energy_export: [2444, 'Wh'],
  voltage_l1: [230, 'V'],
  voltage_l2: [230, 'V'],
  voltage_l3: [229, 'V'],
  current_l1: [0.48, 'A'],
  current_l2: [0.44, 'A'],
  current_l3: [0.86, 'A'],
} as const satisfies Record<string, readonly [number, string]>;
