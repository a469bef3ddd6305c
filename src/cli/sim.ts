import type { Clock } from '../clock.js';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Parity } from '../config/types.js';
import { createLogger } from '../log.js';
import { SimulatedP1Meter } from '../sim/p1-meter.js';
import { isP1Line } from '../p1/line-settings.js';
import { parseUnits, Simulator } from '../sim/simulator.js';

interface SimOptions {
  serial?: string;
  tcp?: string;
  rtuOverTcp?: string;
  host: string;
  unit: string;
  profile: string;
  baud: string;
  emulateWireTime?: boolean;
  turnaroundMs: string;
  modelCode: boolean;
  exitWithParent?: boolean;
  parity: string;
  lineOf?: string;
  p1?: string;
  p1Line: string;
  p1PeriodMs: string;
  p1ClockOffsetS: string;
  loadFile?: string;
  clockScale?: string;
}

export function registerSimCommand(program: Command): void {
  program
    .command('sim')
    .description('Run a simulated meter bus (Modbus slave): SDM630 and other profiles over a serial device, TCP or RTU-over-TCP; or, with --p1, a DSMR P1 smart meter')
    .option('--serial <path>', 'serial device to answer on as RTU slave (e.g. one end of a socat pty pair)')
    .option('--tcp <port>', 'Modbus TCP port to listen on (0 = any free port)')
    .option('--rtu-over-tcp <port>', 'RTU-over-TCP port to listen on (0 = any free port)')
    .option('--host <host>', 'address for the TCP listeners', '127.0.0.1')
    .option('--unit <ids>', 'unit ids, optionally with a profile each: 1,2,3 or 1:sdm630,2:em24', '1')
    .option('--profile <name>', 'profile for unit ids given without one', 'sdm630')
    .option('--baud <rate>', 'baud rate (serial setting, and for --emulate-wire-time)', '9600')
    .option('--emulate-wire-time', 'delay each answer by the time request and answer take on a real line at --baud, 11 bits/char')
    .option('--turnaround-ms <ms>', 'extra delay before each answer', '0')
    .option('--parity <parity>', 'the meters\' parity (none, even, odd); only heeded with --line-of', 'even')
    .option('--line-of <tty>', 'the master\'s end of the pty: answer only while it is set to --baud and --parity, like a real meter (pty: odd vs not odd)')
    .option('--p1 <telegram-file>', 'be a DSMR P1 smart meter instead: replay this captured telegram (counters advancing, clock current, CRC valid) on --serial or to clients of --tcp; with --p1-line "9600 8N1" an SML recording as hex text (test/data/sml), its files sent as recorded')
    .option('--p1-line <settings>', 'P1 line settings: "115200 8N1" (DSMR 4+), "9600 7E1" (DSMR 2.2/3.0, mode D), "2400 7E1" (mode D) or "9600 8N1" (SML)', '115200 8N1')
    .option('--p1-period-ms <ms>', 'P1 telegram period (DSMR 5: 1000, DSMR 4: 10000)', '1000')
    .option('--p1-clock-offset-s <s>', "how far the P1 meter's own clock (0-0:1.0.0) is off", '0')
    .option('--exit-with-parent', 'exit when the process that started the simulator is gone (tests, demo)')
    .option('--load-file <path>', 'the meters\' load in W, read from this file on every answer (a test changes the site\'s load by writing it); a missing or unreadable file: the usual wandering load')
    .option('--clock-scale <real-ms,sim-ms,rate>', "run the simulator's clock at RATE times real time, at SIM-MS when the real clock showed REAL-MS (a test compresses quarter-hours; the gateway under test runs the same clock)")
    .option('--no-model-code', 'do not answer the vendor model-code register (like meters with older firmware)')
    .action(async (opts: SimOptions) => {
      if (!opts.serial && opts.tcp === undefined && opts.rtuOverTcp === undefined) {
        process.stderr.write('metergate sim: give --serial PATH, --tcp PORT or --rtu-over-tcp PORT\n');
        process.exit(64);
      }
      const logger = createLogger(process.env.METERGATE_LOG_LEVEL ?? 'warn', process.stderr as never);
      if (opts.p1) {
        if (!isP1Line(opts.p1Line)) {
          process.stderr.write('metergate sim: --p1-line is "115200 8N1", "9600 7E1", "2400 7E1" or "9600 8N1"\n');
          process.exit(64);
        }
        const meter = new SimulatedP1Meter({
          template: readFileSync(opts.p1, 'latin1'),
          line: opts.p1Line,
          periodMs: Number(opts.p1PeriodMs),
          logger,
          serialPath: opts.serial,
          tcpPort: opts.tcp === undefined ? undefined : Number(opts.tcp),
          host: opts.host,
          lineOf: opts.lineOf,
          clockOffsetMs: Number(opts.p1ClockOffsetS) * 1000,
          loadW: opts.loadFile === undefined ? undefined : loadFrom(opts.loadFile),
          clock: opts.clockScale === undefined ? undefined : scaledClock(opts.clockScale),
        });
        const endpoints = await meter.start();
        process.stdout.write(`${JSON.stringify({ event: 'ready', pid: process.pid, units: [1], ...endpoints })}\n`);
        const stopP1 = () => void meter.stop().then(() => process.exit(0));
        process.once('SIGINT', stopP1);
        process.once('SIGTERM', stopP1);
        if (opts.exitWithParent) exitWithParent(stopP1);
        return;
      }
      const sim = new Simulator({
        units: parseUnits(opts.unit, opts.profile),
        logger,
        serialPath: opts.serial,
        tcpPort: opts.tcp === undefined ? undefined : Number(opts.tcp),
        rtuOverTcpPort: opts.rtuOverTcp === undefined ? undefined : Number(opts.rtuOverTcp),
        host: opts.host,
        modelCodes: opts.modelCode,
        fixedLoadW: opts.loadFile === undefined ? undefined : loadFrom(opts.loadFile),
        lineOf: opts.lineOf ? { tty: opts.lineOf, line: { baudRate: Number(opts.baud), parity: opts.parity as Parity } } : undefined,
        timing: { baudRate: Number(opts.baud), emulate: Boolean(opts.emulateWireTime), turnaroundMs: Number(opts.turnaroundMs) },
      });
      const endpoints = await sim.start();
      // One JSON line on stdout tells a parent process (tests, demo) where to connect.
      process.stdout.write(`${JSON.stringify({ event: 'ready', pid: process.pid, units: [...sim.meters.keys()], ...endpoints })}\n`);
      const stop = () => void sim.stop().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      if (opts.exitWithParent) exitWithParent(stop);
    });
}

/** The load in W a file says now; null when it is missing or not a number. */
function loadFrom(path: string): () => number | null {
  return () => {
    try {
      const text = readFileSync(path, 'utf8').trim();
      // Empty: caught while being written (Number('') would be 0 W).
      const w = text === '' ? NaN : Number(text);
      return Number.isFinite(w) && w >= 0 ? w : null;
    } catch {
      return null;
    }
  };
}

/** `real-ms,sim-ms,rate`: a clock that showed sim-ms at real-ms and runs rate times as fast. */
function scaledClock(spec: string): Clock {
  const [realMs, simMs, rate] = spec.split(',').map(Number);
  if (![realMs, simMs, rate].every((v) => Number.isFinite(v)) || !(rate! > 0)) {
    process.stderr.write('metergate sim: --clock-scale is REAL-MS,SIM-MS,RATE\n');
    process.exit(64);
  }
  return { now: () => simMs! + (Date.now() - realMs!) * rate! };
}

/** A crashed test runner must not leave simulators behind. */
function exitWithParent(stop: () => void): void {
  const parent = process.ppid;
  setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      stop();
    }
  }, 1000).unref();
}
