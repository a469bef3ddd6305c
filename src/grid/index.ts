// The control signal inputs the gateway knows. Adding one (EEBus LPC): a file that exports
// `registerXSignal(registry)`, and one line below.
import { ControlSignalRegistry } from './control-signal.js';
import { registerGpioSignal } from './gpio-signal-type.js';
import { registerModbusSignal } from './modbus-signal-type.js';

export function controlSignalTypes(registry = new ControlSignalRegistry()): ControlSignalRegistry {
  registerGpioSignal(registry);
  registerModbusSignal(registry);
  return registry;
}
