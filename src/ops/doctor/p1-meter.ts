// doctor for a DSMR P1 meter (or a mode D / SML meter on a p1 bus): listens on its port or
// bridge for one whole telegram (a mode C meter: asks it once) (a DSMR 4 meter sends every 10 s) and judges its values like a
// Modbus meter's (an SML meter without power: a warning naming the PIN); while the daemon holds
// the port, asks the daemon instead.
import type { BusConfig, MeterConfig } from '../../config/types.js';
import { createLogger } from '../../log.js';
import { diagnoseP1, powerAbsent } from '../../p1/diagnosis.js';
import { askModeCMeter, listenForTelegram } from '../../p1/listen.js';
import { isModeC, isSmlLine, p1Line } from '../../p1/line-settings.js';
import { P1_MAX_POWER_W } from '../../p1/p1-source.js';
import { p1LineReport, p1Summary } from '../../p1/snippet.js';
import { fail, pass, warn, type CheckResult } from './types.js';

/** Longer than a DSMR 4 meter's 10 s between telegrams. */
const LISTEN_MS = 11_500;

export interface DaemonMeterView {
  readonly resource_id: string;
  readonly state: string;
  readonly consecutive_misses: number;
  /** Why the daemon's P1 source gets nothing usable, with the fix (status.json). */
  readonly problem?: string | null;
  readonly metrics?: ReadonlyArray<{ readonly name: string; readonly value: number }>;
}

export async function checkP1Meter(
  bus: BusConfig,
  busIndex: number,
  meter: MeterConfig,
  judge: { name: string; implausibility: (values: Readonly<Record<string, number>>, maxPowerW: number) => string | null; format: (values: Readonly<Record<string, number>>) => string },
  daemonMeters: () => Promise<readonly DaemonMeterView[] | null>,
): Promise<CheckResult> {
  const { name } = judge;
  const endpoint = bus.type === 'p1' ? (bus.port ?? '') : `${bus.host}:${bus.tcp_port}`;
  const where = `${meter.bus} P1 meter (${endpoint})`;
  const maxPowerW = meter.max_power_w ?? P1_MAX_POWER_W;
  // A mode C meter sends nothing until asked: doctor asks it once, as the daemon does each poll.
  const modeC = isModeC(bus);
  const heard = modeC
    ? await askModeCMeter({ port: bus.port ?? '', logger: createLogger('silent') })
    : await listenForTelegram({
        type: bus.type === 'p1' ? 'p1' : 'p1-tcp',
        port: bus.port,
        host: bus.host,
        tcpPort: bus.tcp_port,
        line: p1Line(bus),
        timeoutMs: LISTEN_MS,
        logger: createLogger('silent'),
      });
  if (heard.unavailable) {
    if (!/lock|busy|EBUSY|temporarily unavailable/i.test(heard.unavailable)) return fail(name, `${where}: ${heard.unavailable}`, bus.type === 'p1' ? 'fix the serial line first (see the serial line above)' : `check buses[${busIndex}].host and tcp_port (${bus.host}:${bus.tcp_port}) and that the P1 serial bridge is powered and reachable (see the p1-tcp line above)`);
    const seen = (await daemonMeters())?.find((m) => m.resource_id === meter.resource_id);
    if (!seen) return warn(name, `${where}: ${endpoint} is held by another process`, 'if that is the metergate service, see `journalctl -u metergate` or the status page; or `sudo systemctl stop metergate` and run doctor again');
    if (seen.state === 'offline') return fail(name, `${where}: the running daemon gets no whole telegram (${seen.consecutive_misses} slot(s) missed)`, seen.problem ?? 'see metergate_p1_telegrams_total on /metrics for why telegrams are dropped; check the P1 cable');
    if (seen.problem) return warn(name, `${where} sends to the running daemon, but: ${seen.problem}`, 'see docs/p1.md');
    if (seen.state !== 'online') return warn(name, `${where}: the running daemon has not heard it yet`, 'run doctor again in a few seconds');
    const values = Object.fromEntries((seen.metrics ?? []).map((m) => [m.name, m.value]));
    const problem = judge.implausibility(values, maxPowerW);
    return problem ? fail(name, `${where} sends to the running daemon, but ${problem}`, 'check which meter this P1 port belongs to') : pass(name, `${where} sends to the running daemon: ${judge.format(values)}`);
  }
  if (!heard.telegram && modeC) {
    const why = diagnoseP1(heard, `buses[${busIndex}]`);
    return fail(name, `${where}: no whole mode C readout after the sign-on request (${p1LineReport(heard)})`, why?.text ?? 'see docs/p1.md, mode C meters');
  }
  if (!heard.telegram) {
    const why = diagnoseP1(heard, `buses[${busIndex}]`);
    return fail(
      name,
      `${where}: no whole telegram in ${LISTEN_MS / 1000} s at ${heard.line} (${p1LineReport(heard)})`,
      heard.bytes === 0 && !isSmlLine(heard.line)
        ? 'check the P1 cable and that the port is enabled; P1 is inverted TTL (plain USB-serial adapters need an inverting cable)'
        : (why?.text ??
            `check buses[${busIndex}].line (DSMR 2.2/3.0, mode D: 9600 7E1 or 2400 7E1; 4+: 115200 8N1; SML: 9600 8N1; \`metergate scan --p1 --port ${endpoint}\` tries each); dropped telegrams mean bit errors on the cable`),
    );
  }
  const values = Object.fromEntries(heard.telegram.reading.metrics.map((m) => [m.name, m.value]));
  const problem = judge.implausibility(values, maxPowerW);
  if (problem) return fail(name, `${where} sends, but ${problem}`, 'check which meter this P1 port belongs to');
  const absent = powerAbsent(heard.telegram.identity, heard.telegram.reading);
  if (absent) return warn(name, `${where}: ${p1Summary(heard)}: ${judge.format(values)}; but ${absent}`, 'enter the meter\'s PIN (docs/p1.md, SML meters)');
  return pass(name, `${where}: ${p1Summary(heard)}: ${judge.format(values)}`);
}
