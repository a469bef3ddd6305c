import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import type { Command } from 'commander';
import type { Parity } from '../config/types.js';
import { createLogger } from '../log.js';
import type { P1Line } from '../p1/line-settings.js';
import { askModeCMeter, listenForTelegram, type ListenResult } from '../p1/listen.js';
import { p1ConfigSnippet, p1LineReport, p1Summary, type P1Target } from '../p1/snippet.js';
import { bestResult, configSnippet, parseUnitIds, scan, ScanPortError, type ScanSettings } from '../modbus/scan.js';

interface ScanCliOptions {
  port?: string;
  tcp?: string;
  rtuOverTcp?: string;
  baud: string;
  parity: string;
  stopBits: string;
  ids: string;
  timeout: string;
  busName?: string;
  json?: boolean;
  p1?: boolean;
}

const PARITIES = new Set(['none', 'even', 'odd']);

/** Serial adapters present now, for "which port?" hints. */
function serialCandidates(): string[] {
  const list = (dir: string, keep: (n: string) => boolean) => {
    try {
      return readdirSync(dir).filter(keep).map((n) => `${dir}/${n}`);
    } catch {
      return [];
    }
  };
  return [...list('/dev/serial/by-id', () => true), ...list('/dev', (n) => /^tty(USB|ACM|AMA)\d+$/.test(n)), ...list('/dev', (n) => n.startsWith('metergate-rs485-'))];
}

/** What to do when the port cannot be used, by the error the serial library gave. */
export function portFix(endpoint: string, reason: string, isSerial: boolean): string {
  if (!isSerial) return `check the gateway's address and port, power and network (\`nc -vz ${endpoint.replace(/:(\d+)$/, ' $1')}\`)`;
  if (/lock|busy|temporarily unavailable/i.test(reason)) {
    return 'another program holds the port, usually the running daemon: `sudo systemctl stop metergate`, scan, then `sudo systemctl start metergate`';
  }
  if (/permission|EACCES/i.test(reason)) return 'run with sudo, or add yourself to the port\'s group: `sudo usermod -aG dialout $USER` and log in again';
  if (/no such file|ENOENT|cannot open/i.test(reason) || !existsSync(endpoint)) {
    const found = serialCandidates();
    return `plug in the RS-485 adapter and give its device with --port; ${found.length ? `present now: ${found.join(', ')}` : 'no serial adapter is present now (`dmesg | tail` shows what the kernel saw when you plugged it in)'}`;
  }
  return 'check the adapter (`dmesg | tail`) and the device name';
}

export function registerScanCommand(program: Command): void {
  program
    .command('scan')
    .description('Find Modbus meters on a serial line: sweep unit ids (and optionally baud rates and parities), identify each profile, print a config snippet; or recognise a DSMR P1 smart meter (--p1, or a port that talks by itself)')
    .option('-p, --port <device>', 'serial device, e.g. /dev/ttyUSB0')
    .option('--tcp <host:port>', 'scan behind a Modbus TCP gateway instead of a serial device')
    .option('--rtu-over-tcp <host:port>', 'scan behind a transparent RTU-over-TCP gateway instead of a serial device')
    .option('-b, --baud <rates>', 'baud rate(s) to try, comma-separated (e.g. 9600,19200,38400)', '9600')
    .option('--parity <list>', 'parity or parities to try, comma-separated: even, none, odd (Eastron ships with even)', 'even')
    .option('--stop-bits <n>', 'stop bits: 1 or 2', '1')
    .option('--ids <ranges>', 'unit ids to sweep, e.g. 1-247 or 1-10,100', '1-247')
    .option('--timeout <ms>', 'how long to wait for each unit id; 247 x this bounds the sweep time', '150')
    .option('--bus-name <name>', 'bus name in the snippet (rs485-1 / gateway-1); give each adapter its own')
    .option('--json', 'print the result as JSON instead of a config snippet')
    .option('--p1', 'look only for a DSMR P1 smart meter or an IEC 62056-21 mode D meter (EasyMeter, eBZ): listen up to 12 s at 115200 8N1, then at 9600 7E1, then 2400 7E1 (with --port, or --tcp HOST:PORT for a serial bridge); without it a serial port that talks by itself is checked for telegrams before any Modbus sweep')
    .action(async (opts: ScanCliOptions) => {
      const targets = [opts.port, opts.tcp, opts.rtuOverTcp].filter(Boolean);
      if (targets.length !== 1) {
        process.stderr.write('metergate scan: give exactly one of --port DEVICE, --tcp HOST:PORT, --rtu-over-tcp HOST:PORT\n');
        process.exit(64);
      }
      const hostPort = opts.tcp ?? opts.rtuOverTcp;
      const [host, tcpPortText] = hostPort ? [hostPort.slice(0, hostPort.lastIndexOf(':')), hostPort.slice(hostPort.lastIndexOf(':') + 1)] : [undefined, undefined];
      const where = opts.port ?? hostPort!;
      // A P1 smart meter talks by itself; a Modbus line stays silent until asked.
      if (opts.p1 || opts.port) {
        if (opts.p1 && opts.rtuOverTcp) {
          process.stderr.write('metergate scan: --p1 takes --port DEVICE or --tcp HOST:PORT\n');
          process.exit(64);
        }
        const done = await scanP1(opts, where, host, tcpPortText ? Number(tcpPortText) : undefined);
        if (done) return;
      }
      const bauds = opts.baud.split(',').map((b) => Number(b.trim()));
      const parities = opts.parity.split(',').map((p) => p.trim());
      if (bauds.some((b) => !Number.isInteger(b) || b <= 0) || parities.some((p) => !PARITIES.has(p))) {
        process.stderr.write('metergate scan: --baud takes numbers, --parity takes even, none or odd\n');
        process.exit(64);
      }
      let unitIds: number[];
      try {
        unitIds = parseUnitIds(opts.ids);
      } catch (err) {
        process.stderr.write(`metergate scan: ${(err as Error).message}\n`);
        process.exit(64);
      }
      // Behind a TCP gateway the line settings are the gateway's (set in its own set-up page):
      // one sweep, and nothing said about a baud rate or parity the scan did not choose.
      const serial = Boolean(opts.port);
      if (!serial && (opts.baud !== '9600' || opts.parity !== 'even')) {
        process.stderr.write(`metergate scan: --baud and --parity set a serial line; behind ${hostPort} the gateway's own serial settings apply (set them in the gateway), so they are ignored\n`);
      }
      const settings: ScanSettings[] = (serial ? bauds : [bauds[0]]).flatMap((baudRate) =>
        (serial ? parities : [parities[0]]).map((parity) => ({ baudRate, parity: parity as Parity, stopBits: Number(opts.stopBits) === 2 ? 2 : 1, dataBits: 8 }) as ScanSettings),
      );
      const settingLabel = (s: ScanSettings) => (serial ? `${s.baudRate} ${s.parity}` : where);
      const timeoutMs = Number(opts.timeout);
      const err = process.stderr;
      // A progress counter only where a person watches; logs and pipes get the found lines.
      const progress = err.isTTY ? (text: string) => err.write(`\r\x1b[K${text}`) : () => undefined;
      err.write(`scanning ${where}: unit ids ${unitIds[0]}..${unitIds[unitIds.length - 1]} (${unitIds.length})${serial ? `, ${settings.length} setting(s)` : opts.tcp ? ' (Modbus TCP)' : ' (RTU over TCP)'}, up to ~${Math.ceil((unitIds.length * (timeoutMs + 5)) / 1000)} s${serial ? ' each' : ''}\n`);
      let results;
      try {
        results = await scan({
          type: opts.tcp ? 'tcp' : opts.rtuOverTcp ? 'rtu-over-tcp' : 'rtu',
          port: opts.port,
          host,
          tcpPort: tcpPortText ? Number(tcpPortText) : undefined,
          settings,
          unitIds,
          timeoutMs,
          logger: createLogger(process.env.METERGATE_LOG_LEVEL ?? 'silent'),
          onProgress: (unitId, s) => progress(`  ${settingLabel(s)}: unit ${unitId} of ${unitIds[unitIds.length - 1]}`),
          onFound: (d, s) => {
            progress('');
            err.write(
              `  found unit ${d.unitId}${serial ? ` at ${s.baudRate} ${s.parity}` : ''}: ${d.profile ?? (d.candidates?.length ? `one of ${d.candidates.join(', ')}` : 'unknown model')}${d.identifiedBy === 'model-code' ? ` (model code ${d.modelCode})` : d.voltageL1 !== undefined ? ` (L1 ${d.voltageL1} V)` : ''}\n`,
            );
          },
        });
      } catch (e) {
        progress('');
        if (!(e instanceof ScanPortError)) throw e;
        err.write(`metergate scan: cannot use ${e.endpoint}: ${e.reason}\n  fix: ${portFix(e.endpoint, e.reason, Boolean(opts.port))}\n`);
        process.exitCode = 1;
        return;
      }
      progress('');
      for (const r of results) err.write(`${settingLabel(r.settings)}: ${r.devices.length} device(s) in ${(r.elapsedMs / 1000).toFixed(1)} s\n`);
      const target = opts.port ? ({ type: 'rtu', port: opts.port } as const) : ({ type: opts.tcp ? 'tcp' : 'rtu-over-tcp', host: host!, tcpPort: Number(tcpPortText) } as const);
      if (opts.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
      else process.stdout.write(configSnippet(results, target, opts.busName));
      const best = bestResult(results);
      if (!best && !serial) {
        err.write(
          [
            `No meter answered behind ${where}. Check, in this order:`,
            '  - the unit ids: the gateway passes each to the meter behind it (this run asked ' + opts.ids + ')',
            `  - that ${where} is the gateway the meters are behind (its set-up page lists its serial side)`,
            '  - the gateway\'s serial side: its baud rate and parity (set in the gateway) must match the meters\', and the A/B wiring and termination behind it',
            `  - ${opts.tcp ? 'a transparent RTU-over-TCP bridge (it forwards RTU frames with CRC): `metergate scan --rtu-over-tcp ' + where + '`' : 'a Modbus TCP gateway (it speaks MBAP, not RTU frames): `metergate scan --tcp ' + where + '`'}`,
          ].join('\n') + '\n',
        );
      } else if (!best) {
        err.write(
          [
            'No meter answered. Check, in this order:',
            '  - wiring: A to A (D+), B to B (D-); swapped wires give silence, not errors; GND if the adapter has it',
            '  - termination: 120 ohm across A/B at both ends of a long line (not in the middle)',
            '  - the meter\'s own settings on its display: unit id (address) and baud/parity',
            `  - other line settings: --baud 2400,4800,9600,19200,38400 --parity even,none,odd (this run: ${opts.baud} ${opts.parity})`,
            '  - a DSMR P1 smart meter (a DSMR 4 meter talks only every 10 s): `metergate scan --p1 --port ...` listens longer',
          ].join('\n') + '\n',
        );
      } else if (!opts.json) {
        err.write(`${best.devices.length} meter(s) ${serial ? `at ${best.settings.baudRate} ${best.settings.parity}` : `behind ${where}`}: paste the snippet above into /etc/metergate/config.yaml, then \`metergate config check\` and \`metergate doctor\`\n`);
      }
      process.exitCode = best ? 0 : 2;
    });
}

/**
 * The next line setting to listen at, or null when done: none after a whole telegram; 9600 8N1
 * (SML) as soon as SML's escape sequence was heard; else 9600 7E1, then 2400 7E1 (only where
 * bytes came at all: a line silent at two speeds is silent at the third), then 9600 8N1.
 */
function nextP1Line(results: readonly ListenResult[]): P1Line | null {
  if (results.some((r) => r.telegram)) return null;
  const tried = new Set(results.map((r) => r.line));
  if (results.some((r) => r.smlSeen)) return tried.has('9600 8N1') ? null : '9600 8N1';
  if (!tried.has('9600 7E1')) return '9600 7E1';
  if (results.every((r) => r.bytes === 0)) return null;
  if (!tried.has('2400 7E1')) return '2400 7E1';
  return tried.has('9600 8N1') ? null : '9600 8N1';
}

/**
 * Looks for a P1 smart meter: with --p1 always (both line settings, 12 s each), else only when
 * the serial port talks within 1.5 s unasked. True when it handled the scan (found or --p1).
 */
async function scanP1(opts: ScanCliOptions, where: string, host: string | undefined, tcpPort: number | undefined): Promise<boolean> {
  const err = process.stderr;
  const target: P1Target = opts.port ? { type: 'p1', port: opts.port } : { type: 'p1-tcp', host, tcpPort };
  const logger = createLogger(process.env.METERGATE_LOG_LEVEL ?? 'silent');
  const base = { type: target.type, port: target.port, host: target.host, tcpPort: target.tcpPort, timeoutMs: 12_000, logger };
  if (opts.p1) err.write(`listening on ${where} for P1 telegrams: 115200 8N1 (DSMR 4+), then 9600 7E1 (DSMR 2.2/3.0, IEC 62056-21 mode D), then 2400 7E1 (mode D), then 9600 8N1 (SML; at once where SML's escape sequence was heard), up to 12 s each${opts.port ? '; a port silent throughout is asked for an IEC 62056-21 mode C readout (/?! at 300 7E1)' : ''}\n`);
  const first = await listenForTelegram({ ...base, line: '115200 8N1', quietMs: opts.p1 ? undefined : 1_500 });
  if (!opts.p1 && (first.bytes === 0 || first.unavailable)) return false; // silent: a Modbus line (or the sweep reports the port)
  if (!opts.p1) err.write(`${where} talks by itself: a P1 smart meter? listening for telegrams\n`);
  if (first.unavailable) {
    err.write(`metergate scan: cannot use ${where}: ${first.unavailable}\n  fix: ${portFix(where, first.unavailable, Boolean(opts.port))}\n`);
    process.exitCode = 1;
    return true;
  }
  const results = [first];
  for (let line = nextP1Line(results); line !== null; line = nextP1Line(results)) results.push(await listenForTelegram({ ...base, line }));
  // Nothing talks by itself on the serial port: a mode C meter answers only when asked.
  if (opts.port && results.every((r) => r.bytes === 0 && !r.unavailable)) results.push(await askModeCMeter({ port: opts.port, logger }));
  for (const r of results) {
    const what = r.modeC ? 'mode C (asked)' : r.line;
    err.write(`  ${what}: ${r.telegram ? (r.modeC ? 'whole readout' : 'whole telegram') : `no whole ${r.modeC ? 'readout' : 'telegram'} (${p1LineReport(r, 'the bus')})`}\n`);
  }
  const found = results.find((r) => r.telegram);
  if (opts.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  if (!found) {
    err.write(
      [
        `No whole P1 telegram on ${where}. Check, in this order:`,
        '  - the P1 cable: the meter\'s RJ12 port, and that the port is enabled (some operators switch it on on request)',
        '  - the adapter inverts the signal (P1 is inverted TTL; plain USB-serial adapters need an inverting cable)',
        '  - dropped telegrams above mean bit errors: a shorter cable or another adapter',
      ].join('\n') + '\n',
    );
    process.exitCode = 2;
    return true;
  }
  err.write(`found: ${p1Summary(found)}\n`);
  if (!opts.json) {
    process.stdout.write(p1ConfigSnippet(found, target, randomUUID, opts.busName));
    err.write('paste the snippet above into /etc/metergate/config.yaml, then `metergate config check` and `metergate doctor`\n');
  }
  process.exitCode = 0;
  return true;
}
