// The control box's relay contacts wired to a Modbus I/O module's digital inputs (discrete
// inputs, function 2) or read back from its coils (function 1), polled every poll_ms over the
// project's Modbus client (modbus/bus.ts: one queue, timeouts, retries, reopening) on a
// configured bus (docs/grid-limits.md). A failed read is a lost signal until one succeeds.
import type { ModbusInputConfig } from '../config/types.js';
import { ModbusBus } from '../modbus/bus.js';
import type { ControlSignalDeps, ControlSignalSource, SignalReading } from './control-signal.js';

export function createModbusSignal(deps: ControlSignalDeps): ControlSignalSource {
  const input = deps.input as ModbusInputConfig;
  const bus = deps.config.buses.find((b) => b.name === input.bus);
  // The config check (config/load.ts) refuses an unknown bus; this only guards a direct call.
  if (!bus) throw new Error(`grid_control.input.bus ${input.bus} is not a configured bus`);
  return new ModbusSignal(deps, input, new ModbusBus({ bus, logger: deps.logger, now: deps.now }));
}

class ModbusSignal implements ControlSignalSource {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly deps: ControlSignalDeps,
    private readonly input: ModbusInputConfig,
    private readonly bus: ModbusBus,
  ) {}

  describe(): string {
    const { bus, unit_id: unit, table, addresses } = this.input;
    return `modbus ${bus} unit ${unit} ${table === 'coil' ? 'coil' : 'discrete input'}(s) ${addresses.join(',')} (active ${this.input.active ?? 'high'})`;
  }

  async start(listener: (r: SignalReading) => void): Promise<void> {
    await this.bus.open().catch(() => undefined);
    // The next read is scheduled whatever the listener does: the contacts are never left unread;
    // a listener that throws from a timer's read is logged, not left an unhandled rejection.
    const poll = async () => {
      if (this.stopped) return;
      try {
        listener(await this.read());
      } finally {
        if (!this.stopped) this.timer = setTimeout(() => void poll().catch((err: unknown) => this.deps.logger.error({ err }, 'grid control: the contacts reading was not applied')), this.input.poll_ms ?? 250);
      }
    };
    await poll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.bus.close();
  }

  /** Every configured address, read in as few requests as they span (addresses are usually next to each other). */
  private async read(): Promise<SignalReading> {
    const { addresses, unit_id: unitId } = this.input;
    const from = Math.min(...addresses);
    const count = Math.max(...addresses) - from + 1;
    try {
      const { words } = await this.bus.read({ unitId, functionCode: this.input.table === 'coil' ? 1 : 2, address: from, count, retries: 0 });
      const contacts = addresses.map((a) => (words[a - from] === 1) === ((this.input.active ?? 'high') === 'high'));
      return { kind: 'contacts', contacts, atMs: this.deps.now() };
    } catch (err) {
      return { kind: 'lost', reason: `${this.describe()}: ${(err as Error).message}`, atMs: this.deps.now() };
    }
  }
}
