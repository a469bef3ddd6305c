// Finds meters on a serial line: asks every unit id once (any answer, data or Modbus
// exception, means a device is there), then identifies each device's profile by its model
// code register or, failing that, by which register map gives a plausible line voltage.
import { randomUUID } from 'node:crypto';
import type { BusConfig, Parity } from '../config/types.js';
import type { Logger } from '../log.js';
import { BusUnavailableError, ModbusBus, ModbusExceptionError } from './bus.js';
import { decodeValue } from './decode.js';
import { codeOf, isPlausibleVoltage, modelCodeProbes } from './identify.js';
import { builtInProfiles } from './profiles/index.js';

export interface ScanSettings {
  readonly baudRate: number;
  readonly parity: Parity;
  readonly stopBits: 1 | 2;
  readonly dataBits: 7 | 8;
}

export interface FoundDevice {
  readonly unitId: number;
  readonly profile: string | null;
  /** How the profile was recognised ('ambiguous': several maps fit, see candidates). */
  readonly identifiedBy: 'model-code' | 'voltage' | 'ambiguous' | 'none';
  readonly modelCode?: number;
  readonly voltageL1?: number;
  /** Profiles whose map gave a plausible L1 voltage, when no model code was recognised. */
  readonly candidates?: string[];
}

export interface ScanResult {
  readonly settings: ScanSettings;
  readonly devices: FoundDevice[];
  readonly elapsedMs: number;
}

export interface ScanOptions {
  readonly type?: BusConfig['type'];
  readonly port?: string;
  readonly host?: string;
  readonly tcpPort?: number;
  readonly settings: readonly ScanSettings[];
  readonly unitIds: readonly number[];
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly onFound?: (device: FoundDevice, settings: ScanSettings) => void;
  readonly onProgress?: (unitId: number, settings: ScanSettings) => void;
}

/** Parses `1-247`, `1,2,5-9`. */
export function parseUnitIds(spec: string): number[] {
  const ids = new Set<number>();
  for (const part of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [a, b] = part.split('-').map(Number);
    const end = b ?? a;
    if (!Number.isInteger(a) || !Number.isInteger(end) || a < 1 || end > 247 || a > end) throw new Error(`bad unit id range "${part}" (1..247)`);
    for (let i = a; i <= end; i++) ids.add(i);
  }
  return [...ids].sort((x, y) => x - y);
}

/** The port could not be opened, or went away during the sweep: no answer means nothing then. */
export class ScanPortError extends Error {
  override readonly name = 'ScanPortError';
  constructor(
    readonly endpoint: string,
    readonly reason: string,
  ) {
    super(`${endpoint}: ${reason}`);
  }
}

async function answers(bus: ModbusBus, unitId: number, fc: 3 | 4, address: number, count: number): Promise<number[] | 'exception' | null> {
  try {
    return (await bus.read({ unitId, functionCode: fc, address, count, retries: 0 })).words;
  } catch (err) {
    if (err instanceof BusUnavailableError) throw new ScanPortError(bus.endpoint, bus.lastOpenError ?? err.message);
    return err instanceof ModbusExceptionError ? 'exception' : null;
  }
}

export async function identify(bus: ModbusBus, unitId: number): Promise<FoundDevice> {
  for (const probe of modelCodeProbes) {
    const words = await answers(bus, unitId, probe.functionCode, probe.address, probe.count);
    if (!Array.isArray(words)) continue;
    const code = codeOf(probe, words);
    if (probe.codes[code]) return { unitId, profile: probe.codes[code], identifiedBy: 'model-code', modelCode: code };
  }
  // No known model code: which built-in maps give a plausible L1 voltage? One map that fits,
  // or several that agree on where power and import are, identify the meter; otherwise the
  // installer has to choose (Carlo Gavazzi maps share their voltage registers).
  const candidates: string[] = [];
  let voltage: number | undefined;
  for (const [name, profile] of Object.entries(builtInProfiles)) {
    const spec = profile.registers.find((r) => r.metric === 'voltage_l1');
    if (!spec) continue;
    const count = spec.type.endsWith('64') ? 4 : spec.type.endsWith('16') ? 1 : 2;
    const words = await answers(bus, unitId, spec.function_code ?? profile.function_code, spec.address, count);
    if (!Array.isArray(words)) continue;
    const v = decodeValue(words, 0, spec);
    if (isPlausibleVoltage(v)) {
      candidates.push(name);
      voltage ??= Math.round(v! * 10) / 10;
    }
  }
  if (candidates.length === 0) return { unitId, profile: null, identifiedBy: 'none' };
  const key = (name: string) =>
    JSON.stringify(
      builtInProfiles[name].registers
        .filter((r) => r.default)
        .map((r) => [r.metric, r.address, r.type, r.word_order, r.scale, r.function_code ?? builtInProfiles[name].function_code])
        .sort(),
    );
  const same = candidates.every((c) => key(c) === key(candidates[0]));
  return same
    ? { unitId, profile: candidates[0], identifiedBy: 'voltage', voltageL1: voltage, candidates }
    : { unitId, profile: null, identifiedBy: 'ambiguous', voltageL1: voltage, candidates };
}

export async function scan(opts: ScanOptions): Promise<ScanResult[]> {
  const results: ScanResult[] = [];
  for (const settings of opts.settings) {
    const started = performance.now();
    const bus = new ModbusBus({
      bus: {
        name: 'scan',
        type: opts.type ?? 'rtu',
        port: opts.port,
        host: opts.host,
        tcp_port: opts.tcpPort ?? 502,
        baud_rate: settings.baudRate,
        parity: settings.parity,
        data_bits: settings.dataBits,
        stop_bits: settings.stopBits,
        timeout_ms: opts.timeoutMs,
        retries: 0,
      },
      logger: opts.logger,
      reopenInitialMs: 200,
    });
    await bus.open();
    if (!bus.isOpen) {
      await bus.close();
      throw new ScanPortError(bus.endpoint, bus.lastOpenError ?? 'cannot be opened');
    }
    const devices: FoundDevice[] = [];
    try {
      for (const unitId of opts.unitIds) {
        opts.onProgress?.(unitId, settings);
        // Holding register 0: data or an exception, either way somebody is home.
        const present = await answers(bus, unitId, 3, 0, 1);
        if (present === null) continue;
        const device = await identify(bus, unitId);
        devices.push(device);
        opts.onFound?.(device, settings);
      }
    } finally {
      await bus.close();
    }
    results.push({ settings, devices, elapsedMs: performance.now() - started });
  }
  return results;
}

export type ScanTarget = { readonly type: 'rtu'; readonly port: string } | { readonly type: 'tcp' | 'rtu-over-tcp'; readonly host: string; readonly tcpPort: number };

/**
 * The line setting to configure: the one under which the most devices answered (the first
 * of those on a tie, in the order swept). All meters on one RS-485 line must share one
 * setting, and one port can only be one bus.
 */
export function bestResult(results: readonly ScanResult[]): ScanResult | null {
  let best: ScanResult | null = null;
  for (const r of results) if (r.devices.length > 0 && (!best || r.devices.length > best.devices.length)) best = r;
  return best;
}

const settingText = (s: ScanSettings) => `${s.baudRate} baud, parity ${s.parity}, ${s.stopBits} stop bit${s.stopBits === 2 ? 's' : ''}`;

/** A config fragment an installer pastes into config.yaml: one bus, the meters found on it. */
export function configSnippet(results: readonly ScanResult[], target: ScanTarget | string, name?: string): string {
  const t: ScanTarget = typeof target === 'string' ? { type: 'rtu', port: target } : target;
  const best = bestResult(results);
  if (!best) return '# no meters found\n';
  const busName = name ?? (t.type === 'rtu' ? 'rs485-1' : 'gateway-1');
  const lines: string[] = [
    '# Replace the buses: and meters: sections of /etc/metergate/config.yaml with these, set each',
    "# resource_id to the id the operator issued for that meter, then run `metergate config check`.",
    'buses:',
    `  - name: ${busName}`,
    `    type: ${t.type}`,
  ];
  if (t.type === 'rtu') {
    lines.push(`    port: ${t.port}`, `    baud_rate: ${best.settings.baudRate}`, `    parity: ${best.settings.parity}`, `    stop_bits: ${best.settings.stopBits}`);
  } else {
    lines.push(`    host: ${t.host}`, `    tcp_port: ${t.tcpPort}`);
  }
  lines.push('meters:');
  for (const d of best.devices) {
    lines.push(`  - resource_id: ${randomUUID()}  # replace with this meter's resource id`, `    bus: ${busName}`, `    unit_id: ${d.unitId}`);
    if (d.profile) lines.push(`    profile: ${d.profile}`);
    else if (d.candidates?.length) lines.push(`    profile: CHANGE_ME  # one of: ${d.candidates.join(', ')} (same voltage registers; check the meter's label)`);
    else lines.push('    profile: CHANGE_ME  # not recognised: pick a built-in profile or define one under profiles');
  }
  // Devices that answered only under another setting cannot share this line as they are.
  const here = new Set(best.devices.map((d) => d.unitId));
  for (const r of results) {
    if (r === best) continue;
    const others = r.devices.filter((d) => !here.has(d.unitId));
    if (others.length > 0) {
      lines.push(
        `# Also answered at ${settingText(r.settings)}: unit(s) ${others.map((d) => d.unitId).join(', ')}.`,
        `# One line has one setting: change these meters to ${settingText(best.settings)} on their display, then scan again.`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
