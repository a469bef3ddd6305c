import type { BusConfig, MeterConfig } from '../../config/types.js';
import { createLogger } from '../../log.js';
import { BusUnavailableError, ModbusBus, ModbusExceptionError, ModbusTimeoutError } from '../../modbus/bus.js';
import { decodeValue } from '../../modbus/decode.js';
import { isPlausibleVoltage } from '../../modbus/identify.js';
import { planReads, selectRegisters } from '../../modbus/planner.js';
import { resolveProfile } from '../../modbus/profiles/index.js';
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

async function checkMeter(bus: ModbusBus, busConfig: BusConfig, busIndex: number, meter: MeterConfig, env: DoctorEnv): Promise<CheckResult> {
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
      const busy = /lock|busy|EBUSY/i.test(err.message);
      return busy
        ? warn(name, `${where}: ${bus.endpoint} is held by another process (the running daemon?)`, 'see the daemon\'s view at /status.json or `journalctl -u metergate`, or `sudo systemctl stop metergate` and run doctor again')
        : fail(name, `${where}: ${err.message}`, 'fix the serial line first (see the serial line above)');
    }
    if (err instanceof ModbusExceptionError) {
      return fail(name, `${where}: the meter refused the read (${err.message})`, `the profile does not match the meter: \`metergate scan --port ${busConfig.port ?? bus.endpoint}\` identifies it; set meters[].profile`);
    }
    const timeout = err instanceof ModbusTimeoutError;
    return fail(
      name,
      `${where}: ${timeout ? `no answer within ${busConfig.timeout_ms} ms` : errorMessage(err)}`,
      `check wiring (A/B swapped? 120 Ω termination at both ends), unit id and line settings (buses[${busIndex}]: ${busConfig.baud_rate} baud, parity ${busConfig.parity}; Eastron ships 9600 8E1); \`metergate scan --port ${busConfig.port ?? bus.endpoint}\` finds meters`,
    );
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
    // One bus at a time, meters on a bus in order: the line is half duplex anyway.
    for (const [busIndex, busConfig] of config.buses.entries()) {
      const meters = config.meters.filter((m) => m.bus === busConfig.name);
      if (meters.length === 0) continue;
      const bus = new ModbusBus({ bus: busConfig, logger, reopenInitialMs: 0 });
      try {
        await bus.open();
        for (const meter of meters) results.push(await checkMeter(bus, busConfig, busIndex, meter, env));
      } finally {
        await bus.close();
      }
    }
    return results;
  },
};
