import type { ControlSignalRegistry } from './control-signal.js';

/** A Modbus I/O module's discrete inputs or coils (modbus-signal.ts). */
export function registerModbusSignal(registry: ControlSignalRegistry): void {
  registry.register({ type: 'modbus', load: async () => (await import('./modbus-signal.js')).createModbusSignal });
}
