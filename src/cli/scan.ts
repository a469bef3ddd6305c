import type { Command } from 'commander';
import type { Parity } from '../config/types.js';
import { createLogger } from '../log.js';
import { configSnippet, parseUnitIds, scan, type ScanSettings } from '../modbus/scan.js';

interface ScanCliOptions {
  port?: string;
  tcp?: string;
  rtuOverTcp?: string;
  baud: string;
  parity: string;
  stopBits: string;
  ids: string;
  timeout: string;
  json?: boolean;
}

const PARITIES = new Set(['none', 'even', 'odd']);

export function registerScanCommand(program: Command): void {
  program
    .command('scan')
    .description('Find Modbus meters on a serial line: sweep unit ids (and optionally baud rates and parities), identify each profile, print a config snippet')
    .option('-p, --port <device>', 'serial device, e.g. /dev/ttyUSB0')
    .option('--tcp <host:port>', 'scan behind a Modbus TCP gateway instead of a serial device')
    .option('--rtu-over-tcp <host:port>', 'scan behind a transparent RTU-over-TCP gateway instead of a serial device')
    .option('-b, --baud <rates>', 'baud rate(s) to try, comma-separated (e.g. 9600,19200,38400)', '9600')
    .option('--parity <list>', 'parity or parities to try: even, none, odd (Eastron ships with even)', 'even')
    .option('--stop-bits <n>', 'stop bits: 1 or 2', '1')
    .option('--ids <ranges>', 'unit ids to sweep, e.g. 1-247 or 1-10,100', '1-247')
    .option('--timeout <ms>', 'how long to wait for each unit id; 247 x this bounds the sweep time', '150')
    .option('--json', 'print the result as JSON instead of a config snippet')
    .action(async (opts: ScanCliOptions) => {
      const targets = [opts.port, opts.tcp, opts.rtuOverTcp].filter(Boolean);
      if (targets.length !== 1) {
        process.stderr.write('metergate scan: give exactly one of --port DEVICE, --tcp HOST:PORT, --rtu-over-tcp HOST:PORT\n');
        process.exit(64);
      }
      const hostPort = opts.tcp ?? opts.rtuOverTcp;
      const [host, tcpPortText] = hostPort ? [hostPort.slice(0, hostPort.lastIndexOf(':')), hostPort.slice(hostPort.lastIndexOf(':') + 1)] : [undefined, undefined];
      const where = opts.port ?? hostPort!;
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
      const settings: ScanSettings[] = bauds.flatMap((baudRate) =>
        parities.map((parity) => ({ baudRate, parity: parity as Parity, stopBits: Number(opts.stopBits) === 2 ? 2 : 1, dataBits: 8 }) as ScanSettings),
      );
      const timeoutMs = Number(opts.timeout);
      const err = process.stderr;
      err.write(`scanning ${where}: unit ids ${unitIds[0]}..${unitIds[unitIds.length - 1]} (${unitIds.length}), ${settings.length} setting(s), up to ~${Math.ceil((unitIds.length * (timeoutMs + 5)) / 1000)} s each\n`);
      const results = await scan({
        type: opts.tcp ? 'tcp' : opts.rtuOverTcp ? 'rtu-over-tcp' : 'rtu',
        port: opts.port,
        host,
        tcpPort: tcpPortText ? Number(tcpPortText) : undefined,
        settings,
        unitIds,
        timeoutMs,
        logger: createLogger(process.env.METERGATE_LOG_LEVEL ?? 'silent'),
        onFound: (d, s) =>
          err.write(
            `  found unit ${d.unitId} at ${s.baudRate} ${s.parity}: ${d.profile ?? (d.candidates?.length ? `one of ${d.candidates.join(', ')}` : 'unknown model')}${d.identifiedBy === 'model-code' ? ` (model code ${d.modelCode})` : d.voltageL1 !== undefined ? ` (L1 ${d.voltageL1} V)` : ''}\n`,
          ),
      });
      for (const r of results) err.write(`${r.settings.baudRate} ${r.settings.parity}: ${r.devices.length} device(s) in ${(r.elapsedMs / 1000).toFixed(1)} s\n`);
      if (opts.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
      else process.stdout.write(configSnippet(results, opts.port ? { type: 'rtu', port: opts.port } : { type: opts.tcp ? 'tcp' : 'rtu-over-tcp', host: host!, tcpPort: Number(tcpPortText) }));
      process.exitCode = results.some((r) => r.devices.length > 0) ? 0 : 2;
    });
}
