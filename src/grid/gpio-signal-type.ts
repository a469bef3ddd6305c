import type { ControlSignalRegistry } from './control-signal.js';

/** A Linux GPIO character device's lines (gpio-signal.ts). */
export function registerGpioSignal(registry: ControlSignalRegistry): void {
  registry.register({ type: 'gpio', load: async () => (await import('./gpio-signal.js')).createGpioSignal });
}
