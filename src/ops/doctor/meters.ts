// doctor: every configured meter answers with plausible values.
import type { BusConfig, Config, MeterConfig } from '../../config/types.js';
import { createLogger } from '../../log.js';
import { BusUnavailableError, ModbusBus, ModbusExceptionError, ModbusTimeoutError } from '../../modbus/bus.js';
import { decodeValue } from '../../modbus/decode.js';
import { isPlausibleVoltage } from '../../modbus/identify.js';
import { planReads, selectRegisters } from '../../modbus/planner.js';
import { resolveProfile } from '../../modbus/profiles/index.js';
import { busUnavailableFix, refusedReadFix, silentUnitFix } from './bus-advice.js';
import { checkP1Meter } from './p1-meter.js';
import { errorMessage, fail, pass, warn, type CheckResult, type DoctorCheck, type DoctorEnv } from './types.js';

/** Metrics read on top of the configured ones, when the profile has them: they make a plausibility check. */
const DIAGNOSTIC_METRICS = ['voltage_l1', 'frequency'];

export function meterCheckName(meter: MeterConfig): string {
  return `meter ${meter.resource_id.slice(0, 8)}`;
}

/** Judges one meter's values; returns a problem description or null. */
export function implausibility(values: Readonly<Record<string, number>>, maxPowerW: number): string | null {
  const v = values.voltage_l1;
  if (v !== undefined && !isPlausibleVoltage(v)) return `voltage_l1 ${v} V is not a mains voltage`;
  const f = values.frequency;
  if (f !== undefined && !(f >= 45 && f <= 65)) return `frequency ${f} Hz is not a grid frequency`;
  const p = values.total_active_power;
  if (p !== undefined && !(Math.abs(p) <= maxPowerW)) return `total_active_power ${p} W beyond ±${maxPowerW} W`;
  const e = values.active_energy_import;
  if (e !== undefined && !(e >= 0 && Number.isFinite(e))) return `active_energy_import ${e} Wh is not a counter value`;
  if (p === undefined && e === undefined) return 'neither total_active_power nor active_energy_import could be read';
  return null;
}

function format(values: Readonly<Record<string, number>>): string {
  const parts: string[] = [];
  if (values.voltage_l1 !== undefined) parts.push(`${values.voltage_l1.toFixed(1)} V`);
  if (values.frequency !== undefined) parts.push(`${values.frequency.toFixed(2)} Hz`);
  if (values.total_active_power !== undefined) parts.push(`${values.total_active_power.toFixed(0)} W`);
  if (values.active_energy_import !== undefined) parts.push(`${(values.active_energy_import / 1000).toFixed(1)} kWh imported`);
  return parts.join(', ');
}

/** A meter as the running daemon reports it on /status.json. */
interface DaemonMeter {
  readonly resource_id: string;
  readonly state: string;
  readonly consecutive_misses: number;
  readonly last_answered_at: string | null;
  readonly metrics?: ReadonlyArray<{ readonly name: string; readonly value: number }>;
  /** Why a P1 meter gives no sample, with the fix. */
  readonly problem?: string | null;
}

/**
 * The running daemon's view of its meters, from its own /status.json: while it holds the
 * serial port, that is the only way to see whether a meter answers. Null when there is no
 * daemon listening where the config says.
 */
export async function fetchDaemonMeters(config: Config, timeoutMs: number): Promise<DaemonMeter[] | null> {
  const body = (await fetchDaemonStatus(config, timeoutMs)) as { meters?: DaemonMeter[] } | null;
  return Array.isArray(body?.meters) ? body.meters : null;
}

/** The running daemon's /status.json on this machine, or null when none answers where the config says. */
export async function fetchDaemonStatus(config: Config, timeoutMs: number): Promise<unknown> {
  if (!config.http.enabled) return null;
  const wildcard = config.http.host === '0.0.0.0' || config.http.host === '::' || config.http.host === '';
  const host = wildcard ? '127.0.0.1' : config.http.host;
  try {
    return await getJson(`${config.http.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${config.http.port}/status.json`, timeoutMs);
  } catch {
    return null;
  }
}

/**
 * GET a JSON document from the daemon on this machine; null unless 200. Over TLS the
 * certificate is not verified: its name is the gateway's, not 127.0.0.1, nothing secret
 * is sent, and the connection never leaves this machine.
 */
async function getJson(url: string, timeoutMs: number): Promise<unknown> {
  const { request } = url.startsWith('https:') ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { signal: AbortSignal.timeout(timeoutMs), rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve(res.statusCode === 200 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : null);
        } catch (err) {
          reject(err as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function judgeFromDaemon(seen: DaemonMeter, meter: MeterConfig, where: string, maxPowerW: number, busConfig: BusConfig, busIndex: number, now: number): CheckResult {
  const name = meterCheckName(meter);
  if (seen.state === 'online') {
    const values = Object.fromEntries((seen.metrics ?? []).map((m) => [m.name, m.value]));
    const age = seen.last_answered_at ? ` ${Math.max(0, Math.round((now - Date.parse(seen.last_answered_at)) / 1000))} s ago` : '';
    const problem = implausibility(values, maxPowerW);
    if (problem) return fail(name, `${where} answers the running daemon, but ${problem}`, 'check the profile (meters[].profile) and the meter\'s wiring (CT direction, phases)');
    return pass(name, `${where} answers the running daemon${age}: ${format(values)}`);
  }
  if (seen.state === 'offline') {
    return fail(name, `${where}: the running daemon gets no answer (${seen.consecutive_misses} poll(s) missed)`, silentUnitFix(busConfig, busIndex, meter.unit_id, { daemonHoldsPort: true }));
  }
  return warn(name, `${where}: the running daemon has not polled it yet`, 'run doctor again in a few seconds');
}

async function checkMeter(bus: ModbusBus, busConfig: BusConfig, busIndex: number, meter: MeterConfig, env: DoctorEnv, daemonMeters: () => Promise<DaemonMeter[] | null>): Promise<CheckResult> {
  const config = env.config!;
  const name = meterCheckName(meter);
  const where = `${meter.bus} unit ${meter.unit_id} (${meter.profile})`;
  const profile = resolveProfile(meter.profile, config.profiles)!;
  const wanted = new Set([...meter.extra_metrics, ...DIAGNOSTIC_METRICS.filter((m) => profile.registers.some((r) => r.metric === m))]);
  const values: Record<string, number> = {};
  try {
    for (const read of planReads(selectRegisters(profile, [...wanted]), profile)) {
      const res = await bus.read({ unitId: meter.unit_id, functionCode: read.functionCode, address: read.address, count: read.count });
      for (const { spec, offset } of read.values) {
        const v = decodeValue(res.words, offset, spec);
        if (v !== null) values[spec.metric] = v;
      }
    }
  } catch (err) {
    if (err instanceof BusUnavailableError) {
      const busy = /lock|busy|EBUSY|temporarily unavailable/i.test(err.message);
      if (!busy) return fail(name, `${where}: ${err.message}`, busUnavailableFix(busConfig, busIndex));
      const seen = (await daemonMeters())?.find((m) => m.resource_id === meter.resource_id);
      if (seen) return judgeFromDaemon(seen, meter, where, meter.max_power_w ?? profile.max_power_w, busConfig, busIndex, env.now());
      return warn(name, `${where}: ${bus.endpoint} is held by another process`, 'if that is the metergate service, see `journalctl -u metergate` or the status page; or `sudo systemctl stop metergate` and run doctor again');
    }
    if (err instanceof ModbusExceptionError) {
      return fail(name, `${where}: the meter refused the read (${err.message})`, refusedReadFix(busConfig));
    }
    const timeout = err instanceof ModbusTimeoutError;
    return fail(name, `${where}: ${timeout ? `no answer within ${busConfig.timeout_ms} ms` : errorMessage(err)}`, silentUnitFix(busConfig, busIndex, meter.unit_id));
  }
  const problem = implausibility(values, meter.max_power_w ?? profile.max_power_w);
  if (problem) return fail(name, `${where} answers, but ${problem}`, 'check the profile (meters[].profile) and the meter\'s wiring (CT direction, phases)');
  return pass(name, `${where} answers: ${format(values)}`);
}

export const metersCheck: DoctorCheck = {
  name: 'meters',
  needsConfig: true,
  async run(env) {
    const config = env.config!;
    if (config.meters.length === 0) return [warn('meters', 'no meters configured', 'add meters (`metergate scan --port /dev/ttyUSB0` prints entries to paste)')];
    const logger = createLogger('silent');
    const results: CheckResult[] = [];
    // Asked at most once, and only if a port turns out to be held.
    let daemon: Promise<DaemonMeter[] | null> | null = null;
    const daemonMeters = () => (daemon ??= fetchDaemonMeters(config, env.timeoutMs));
    // One bus at a time, meters on a bus in order: the line is half duplex anyway.
    for (const [busIndex, busConfig] of config.buses.entries()) {
      // An M-Bus channel is read from its P1 meter's telegrams: the meter's check covers it.
      const meters = config.meters.filter((m) => m.bus === busConfig.name && !m.channel);
      if (meters.length === 0) continue;
      if (busConfig.type === 'p1' || busConfig.type === 'p1-tcp') {
        for (const meter of meters) results.push(await checkP1Meter(busConfig, busIndex, meter, { name: meterCheckName(meter), implausibility, format }, daemonMeters));
        continue;
      }
      const bus = new ModbusBus({ bus: busConfig, logger, reopenInitialMs: 0 });
      try {
        await bus.open();
        for (const meter of meters) results.push(await checkMeter(bus, busConfig, busIndex, meter, env, daemonMeters));
      } finally {
        await bus.close();
      }
    }
    return results;
  },
};
