// A simulated P1 smart meter: sends a replayed real telegram (p1-telegrams.ts) every period on
// a serial device at the DSMR line settings, or to every client of a TCP port (like ser2net in
// front of a meter). On the SML line (9600 8N1) the template is a recorded SML stream as hex
// text (sml-recording.ts): its whole files are sent in turn, unchanged (values and CRC as
// recorded). With `lineOf`, a master whose end of the pty is set to another baud rate
// gets what a UART at the wrong speed makes of the bytes: garbage.
import { createServer, type Server, type Socket } from 'node:net';
import { SerialPort } from 'serialport';
import { systemClock, type Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { isSmlLine, P1_LINES, type P1Line } from '../p1/line-settings.js';
import { masterLineOf } from './line-settings.js';
import { replayTelegram, type ReplayState } from './p1-telegrams.js';
import { smlRecordedFiles, smlRecordingBytes } from './sml-recording.js';
import { QuarterHourDemand } from './p1-demand.js';
import { p1Demand } from '../p1/demand.js';
import { parseTelegram } from '../p1/telegram.js';

export interface P1MeterOptions {
  readonly template: string;
  readonly line: P1Line;
  /** DSMR 5 sends every second, DSMR 4 every 10 s. */
  readonly periodMs: number;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly serialPath?: string;
  readonly tcpPort?: number;
  readonly host?: string;
  /** The master's end of the pty: garbage while it is not set to this line's baud rate. */
  readonly lineOf?: string;
  /** The meter's clock this far off the real time. */
  readonly clockOffsetMs?: number;
  /** The site's load (W) set from outside (a test's load file): the telegram shows it, and a Belgian one its quarter-hour demand (p1-demand.ts); null: as recorded. */
  readonly loadW?: () => number | null;
}

export class SimulatedP1Meter {
  private port: SerialPort | null = null;
  private server: Server | null = null;
  private readonly clients = new Set<Socket>();
  private timer: NodeJS.Timeout | null = null;
  private state: ReplayState | null = null;
  /** On the SML line: the recorded files, and how many were sent. */
  private smlFiles: Buffer[] | null = null;
  private smlSent = 0;
  /** With loadW: the quarter-hour demand and month's peak the load makes. */
  private demand: QuarterHourDemand | null = null;
  private lastLoadW: number | null = null;

  constructor(private readonly opts: P1MeterOptions) {}

  async start(): Promise<{ serial?: string; tcpPort?: number }> {
    const clock = this.opts.clock ?? systemClock;
    this.state = { template: this.opts.template, startedAtMs: clock.now(), meterClockOffsetMs: this.opts.clockOffsetMs };
    if (this.opts.loadW && !isSmlLine(this.opts.line)) this.demand = demandFrom(this.opts.template, clock.now());
    if (isSmlLine(this.opts.line)) {
      this.smlFiles = smlRecordedFiles(smlRecordingBytes(this.opts.template));
      if (this.smlFiles.length === 0) throw new Error('the SML recording has no whole file');
    }
    const out: { serial?: string; tcpPort?: number } = {};
    if (this.opts.serialPath) {
      const port = new SerialPort({ path: this.opts.serialPath, ...P1_LINES[this.opts.line], autoOpen: false });
      port.on('error', (err) => this.opts.logger.debug({ err: err.message }, 'sim P1 serial error'));
      await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
      this.port = port;
      out.serial = this.opts.serialPath;
    }
    if (this.opts.tcpPort !== undefined) {
      const server = createServer((socket) => {
        this.clients.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => this.clients.delete(socket));
      });
      this.server = server;
      await new Promise<void>((resolve) => server.listen(this.opts.tcpPort, this.opts.host ?? '127.0.0.1', resolve));
      const address = server.address();
      out.tcpPort = typeof address === 'object' && address ? address.port : undefined;
    }
    this.timer = setInterval(() => this.send(clock.now()), this.opts.periodMs);
    return out;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const c of this.clients) c.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    const port = this.port;
    this.port = null;
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  private send(nowMs: number): void {
    if (!this.state) return;
    // A load that cannot be read this time (a file being written) holds the last one.
    const loadW = this.opts.loadW?.() ?? this.lastLoadW;
    this.lastLoadW = loadW;
    const site = this.demand && loadW !== null ? { powerW: loadW, demand: this.demand.advance(nowMs, loadW) } : undefined;
    let bytes = this.smlFiles ? this.smlFiles[this.smlSent++ % this.smlFiles.length]! : Buffer.from(replayTelegram(this.state, nowMs, site), 'latin1');
    if (this.opts.lineOf) {
      const master = masterLineOf(this.opts.lineOf);
      // A UART at another speed sees other bits: deterministic noise of the same length.
      if (master !== null && master.baudRate !== P1_LINES[this.opts.line].baudRate) bytes = Buffer.from(bytes.map((b, i) => (b * 31 + i) & 0x7f));
    }
    this.port?.write(bytes);
    for (const c of this.clients) c.write(bytes);
  }
}

/** The recorded telegram's own quarter-hour average and month's peak, where it has them (0 and 0 otherwise). */
function demandFrom(template: string, startMs: number): QuarterHourDemand {
  const recorded = p1Demand(parseTelegram(template.slice(0, template.indexOf('!') + 1).replace(/\r\n/g, '\n')));
  return new QuarterHourDemand({ startMs, averageKw: recorded?.quarterHourAverageKw ?? 0, monthPeakKw: recorded?.monthPeak?.kw ?? 0, monthPeakAtMs: recorded?.monthPeak?.atMs ?? null });
}
