// The meter simulator used by `metergate sim`, `demo` and the tests: several simulated
// meters (unit ids, each with a profile) behind one or more transports.
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { MeterProfile } from '../config/types.js';
import type { Logger } from '../log.js';
import { builtInProfiles } from '../modbus/profiles/index.js';
import { lineMatches, masterLineOf, type LineSettings } from './line-settings.js';
import { MeterModel } from './meter-model.js';
import { SerialRtuServer, TcpServer, type WireTiming } from './servers.js';
import { SimulatedMeter } from './simulated-meter.js';

export interface SimUnit {
  readonly unitId: number;
  readonly profile: string;
}

export interface SimulatorOptions {
  readonly units: readonly SimUnit[];
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly profiles?: Readonly<Record<string, MeterProfile>>;
  readonly serialPath?: string;
  readonly tcpPort?: number;
  readonly rtuOverTcpPort?: number;
  readonly host?: string;
  readonly timing?: Partial<WireTiming>;
  /** false: meters do not answer their model-code register (older firmware; tests scan's fallback). */
  readonly modelCodes?: boolean;
  /** Every meter's load in W, set from outside (null: the usual wandering load). */
  readonly fixedLoadW?: () => number | null;
  /** Answer only while the master's end of the pty (`tty`) is set to `line` (scan sweep tests). */
  readonly lineOf?: { readonly tty: string; readonly line: LineSettings };
}

export interface SimulatorEndpoints {
  readonly serial?: string;
  readonly tcpPort?: number;
  readonly rtuOverTcpPort?: number;
}

/** Parses `1,2,3` or `1:sdm630,2:em24` (a unit without a profile gets `defaultProfile`). */
export function parseUnits(spec: string, defaultProfile = 'sdm630'): SimUnit[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const [id, profile] = part.split(':');
      const unitId = Number(id);
      if (!Number.isInteger(unitId) || unitId < 1 || unitId > 247) throw new Error(`unit id ${id} is not 1..247`);
      return { unitId, profile: profile ?? defaultProfile };
    });
}

export class Simulator {
  readonly meters = new Map<number, SimulatedMeter>();
  private serial: SerialRtuServer | null = null;
  private readonly tcp: TcpServer[] = [];

  constructor(private readonly opts: SimulatorOptions) {
    const clock = opts.clock ?? systemClock;
    for (const unit of opts.units) {
      const profile = opts.profiles?.[unit.profile] ?? builtInProfiles[unit.profile];
      if (!profile) throw new Error(`unknown profile ${unit.profile} (built in: ${Object.keys(builtInProfiles).join(', ')})`);
      const phases = profile.registers.some((r) => r.metric === 'voltage_l2') ? 3 : 1;
      const model = new MeterModel({ seed: unit.unitId * 7919, clock, phases, baseLoadW: phases === 1 ? 800 + 40 * unit.unitId : undefined, fixedLoadW: opts.fixedLoadW });
      this.meters.set(unit.unitId, new SimulatedMeter(unit.unitId, unit.profile, profile, model, opts.modelCodes ?? true));
    }
  }

  private timing(): WireTiming {
    const t = this.opts.timing ?? {};
    return { baudRate: t.baudRate ?? 9600, bitsPerChar: t.bitsPerChar ?? 11, turnaroundMs: t.turnaroundMs ?? 0, emulate: t.emulate ?? false };
  }

  async start(): Promise<SimulatorEndpoints> {
    const lookup = (id: number) => this.meters.get(id);
    const out: { serial?: string; tcpPort?: number; rtuOverTcpPort?: number } = {};
    if (this.opts.serialPath) {
      const lineOf = this.opts.lineOf;
      const lineOk = lineOf
        ? () => {
            const master = masterLineOf(lineOf.tty);
            return master === null || lineMatches(master, lineOf.line);
          }
        : undefined;
      this.serial = new SerialRtuServer(this.opts.serialPath, lookup, this.timing(), this.opts.logger, lineOk);
      await this.serial.start();
      out.serial = this.opts.serialPath;
    }
    if (this.opts.tcpPort !== undefined) {
      const server = new TcpServer('tcp', lookup, this.timing());
      this.tcp.push(server);
      out.tcpPort = await server.start(this.opts.tcpPort, this.opts.host);
    }
    if (this.opts.rtuOverTcpPort !== undefined) {
      const server = new TcpServer('rtu-over-tcp', lookup, this.timing());
      this.tcp.push(server);
      out.rtuOverTcpPort = await server.start(this.opts.rtuOverTcpPort, this.opts.host);
    }
    return out;
  }

  async stop(): Promise<void> {
    await this.serial?.stop();
    await Promise.all(this.tcp.map((s) => s.stop()));
  }
}
