// The grid operator's control signal as an input (§14a EnWG; docs/grid-limits.md): the seam
// every kind of control box input implements (a GPIO line, a Modbus I/O module's input; EEBus
// LPC later). A source only reports what its contacts read; what a pattern means, debouncing
// and what a signal that cannot be read means are the grid control's (grid-control.ts).
import type { Config, GridControlInputConfig } from '../config/types.js';
import type { Logger } from '../log.js';

/** What a source tells: the contacts now (each configured input active or not, in config order), or that they cannot be read. */
export type SignalReading = { readonly kind: 'contacts'; readonly contacts: readonly boolean[]; readonly atMs: number } | { readonly kind: 'lost'; readonly reason: string; readonly atMs: number };

export interface ControlSignalSource {
  /** Starts reading; every reading (a change, a periodic confirmation, a loss) goes to `listener`. */
  start(listener: (reading: SignalReading) => void): Promise<void>;
  stop(): Promise<void>;
  /** What the source reads from, for logs and the status page ('gpio /dev/gpiochip0 lines 17,18'). */
  describe(): string;
}

export interface ControlSignalDeps {
  readonly config: Config;
  readonly input: GridControlInputConfig;
  readonly logger: Logger;
  readonly now: () => number;
}

/** A kind of control signal input; registers itself from its own file (as meter sources do, sources/registry.ts). */
export interface ControlSignalType {
  readonly type: GridControlInputConfig['type'];
  /** Imported only when configured. */
  load(): Promise<(deps: ControlSignalDeps) => ControlSignalSource>;
}

export class ControlSignalRegistry {
  private readonly types = new Map<string, ControlSignalType>();

  register(type: ControlSignalType): void {
    if (this.types.has(type.type)) throw new Error(`control signal type ${type.type} is registered twice`);
    this.types.set(type.type, type);
  }

  forType(type: string): ControlSignalType | undefined {
    return this.types.get(type);
  }
}
