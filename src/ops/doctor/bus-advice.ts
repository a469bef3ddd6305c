// What doctor tells an installer about a Modbus bus, by the bus's type: a serial line has
// wiring, termination and line settings; a Modbus TCP gateway has an address, a port and
// unit ids, and its own serial side set up in the gateway. Pure: no I/O.
import type { BusConfig } from '../../config/types.js';

/** The scan command that finds meters on this bus (what `metergate scan` takes for its type). */
export function scanCommand(bus: BusConfig): string {
  if (bus.type === 'tcp') return `metergate scan --tcp ${bus.host}:${bus.tcp_port}`;
  if (bus.type === 'rtu-over-tcp') return `metergate scan --rtu-over-tcp ${bus.host}:${bus.tcp_port}`;
  return `metergate scan --port ${bus.port ?? '/dev/ttyUSB0'}`;
}

const isSerial = (bus: BusConfig) => bus.type === 'rtu' || bus.type === 'p1';

/** The fix for a unit that does not answer (a timeout, or the daemon's missed polls). */
export function silentUnitFix(bus: BusConfig, busIndex: number, unitId: number, opts: { daemonHoldsPort?: boolean } = {}): string {
  const scan = `\`${scanCommand(bus)}\` finds meters`;
  if (bus.type === 'tcp') {
    return `check the unit id (meters[].unit_id ${unitId}: a Modbus TCP gateway passes it to the meter behind it) and that ${bus.host}:${bus.tcp_port} is the gateway the meter is behind; if the gateway bridges to RS-485, its own serial settings and wiring (in the gateway's set-up page) must match the meter; ${scan}`;
  }
  if (bus.type === 'rtu-over-tcp') {
    return `check the unit id (meters[].unit_id ${unitId}), that ${bus.host}:${bus.tcp_port} is the bridge the meter is behind, and the bridge's serial side (baud and parity in its set-up page, A/B wiring and termination behind it); ${scan}`;
  }
  const stop = opts.daemonHoldsPort ? '`sudo systemctl stop metergate`, then ' : '';
  return `check wiring (A/B swapped? 120 Ω termination at both ends), unit id and line settings (buses[${busIndex}]: ${bus.baud_rate} baud, parity ${bus.parity}; Eastron ships 9600 8E1); ${stop}${scan}`;
}

/** The fix when the bus itself cannot be used (the port does not open, the gateway refuses). */
export function busUnavailableFix(bus: BusConfig, busIndex: number): string {
  if (isSerial(bus)) return 'fix the serial line first (see the serial line above)';
  return `check buses[${busIndex}].host and tcp_port (${bus.host}:${bus.tcp_port}; Modbus TCP is usually port 502), and that the gateway is powered and reachable (see the modbus-tcp line above; \`nc -vz ${bus.host} ${bus.tcp_port}\`)`;
}

/** The fix when the meter refuses the read (Modbus exception): the profile is not the meter's. */
export function refusedReadFix(bus: BusConfig): string {
  return `the profile does not match the meter: \`${scanCommand(bus)}\` identifies it; set meters[].profile`;
}
