// Transports of the simulator: RTU over a serial device (a socat pty end in tests),
// Modbus TCP and RTU-over-TCP. Each hands request PDUs to the addressed simulated meter;
// requests to unknown unit ids get no answer at all, as on a real RS-485 bus.
import { createServer, type Server, type Socket } from 'node:net';
import { SerialPort } from 'serialport';
import type { Logger } from '../log.js';
import { waitUntil } from '../modbus/timing.js';
import { withCrc } from '../modbus/crc.js';
import { RtuFrameReader } from './rtu-frames.js';
import type { SimulatedMeter } from './simulated-meter.js';

export interface WireTiming {
  /** Emulate the time the frames take on a real line (ptys and sockets have none). */
  readonly baudRate: number;
  readonly bitsPerChar: number;
  /** Extra meter think time before answering. */
  readonly turnaroundMs: number;
  readonly emulate: boolean;
}

export type MeterLookup = (unitId: number) => SimulatedMeter | undefined;

function wireDelayMs(timing: WireTiming, requestBytes: number, responseBytes: number): number {
  if (!timing.emulate) return timing.turnaroundMs;
  // The request's and the answer's characters, plus the 3.5-character silence that must end
  // the request before a slave may answer.
  return ((requestBytes + responseBytes + 3.5) * timing.bitsPerChar * 1000) / timing.baudRate + timing.turnaroundMs;
}

function answerRtu(frame: Buffer, meters: MeterLookup): Buffer | null {
  const meter = meters(frame[0]);
  if (!meter) return null;
  const pdu = meter.handle(frame.subarray(1, frame.length - 2));
  return withCrc(Buffer.concat([Buffer.from([frame[0]]), pdu]));
}

/** Sends each answer after its wire delay, one at a time and in order. */
class DelayedWriter {
  private chain: Promise<void> = Promise.resolve();
  constructor(private readonly write: (b: Buffer) => void) {}
  send(data: Buffer, delayMs: number): void {
    this.chain = this.chain.then(
      () =>
        new Promise<void>((resolve) => {
          const go = () => {
            try {
              this.write(data);
            } catch {
              /* line gone; the master will time out */
            }
            resolve();
          };
          // Never faster than the wire allows (timers alone would truncate to whole milliseconds).
          if (delayMs > 0) void waitUntil(performance.now() + delayMs).then(go);
          else go();
        }),
    );
  }
}

/** RTU slave on a serial device; reopens the device when it disappears and comes back. */
export class SerialRtuServer {
  private port: SerialPort | null = null;
  private stopped = false;
  private reopenTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly path: string,
    private readonly meters: MeterLookup,
    private readonly timing: WireTiming,
    private readonly logger: Logger,
    /** False when the master's line settings differ from the meter's (see line-settings.ts). */
    private readonly lineOk: () => boolean = () => true,
  ) {}

  start(): Promise<void> {
    return new Promise((resolve, reject) => this.open((err) => (err ? reject(err) : resolve())));
  }

  private open(done?: (err?: Error) => void): void {
    const port = new SerialPort({ path: this.path, baudRate: this.timing.baudRate, autoOpen: false });
    const reader = new RtuFrameReader();
    const writer = new DelayedWriter((b) => port.write(b));
    port.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        if (!this.lineOk()) continue; // noise to a meter set differently
        const answer = answerRtu(frame, this.meters);
        if (answer) writer.send(answer, wireDelayMs(this.timing, frame.length, answer.length));
      }
    });
    port.on('close', () => this.scheduleReopen());
    port.on('error', (err) => this.logger.debug({ err: err.message }, 'sim serial error'));
    port.open((err) => {
      if (err) {
        done?.(err);
        if (!done) this.scheduleReopen();
        return;
      }
      this.port = port;
      this.logger.debug({ path: this.path }, 'sim serial open');
      done?.();
    });
  }

  private scheduleReopen(): void {
    this.port = null;
    if (this.stopped || this.reopenTimer) return;
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = null;
      if (!this.stopped) this.open();
    }, 200);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reopenTimer) clearTimeout(this.reopenTimer);
    const port = this.port;
    this.port = null;
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }
}

/** Modbus TCP (MBAP framing) or RTU frames over TCP. */
export class TcpServer {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly mode: 'tcp' | 'rtu-over-tcp',
    private readonly meters: MeterLookup,
    private readonly timing: WireTiming,
  ) {}

  async start(port: number, host = '127.0.0.1'): Promise<number> {
    const server = createServer((socket) => this.serve(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const addr = server.address();
    return typeof addr === 'object' && addr ? addr.port : port;
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const writer = new DelayedWriter((b) => socket.write(b));
    if (this.mode === 'rtu-over-tcp') {
      const reader = new RtuFrameReader(1000);
      socket.on('data', (chunk: Buffer) => {
        for (const frame of reader.push(chunk)) {
          const answer = answerRtu(frame, this.meters);
          if (answer) writer.send(answer, wireDelayMs(this.timing, frame.length, answer.length));
        }
      });
      return;
    }
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 8) {
        const length = buf.readUInt16BE(4);
        if (buf.length < 6 + length) break;
        const adu = buf.subarray(0, 6 + length);
        buf = buf.subarray(6 + length);
        const meter = this.meters(adu[6]);
        if (!meter) continue; // a gateway would answer exception 0x0B; silence is the stricter case
        const pdu = meter.handle(adu.subarray(7));
        const out = Buffer.alloc(7 + pdu.length);
        adu.copy(out, 0, 0, 4);
        out.writeUInt16BE(pdu.length + 1, 4);
        out[6] = adu[6];
        pdu.copy(out, 7);
        writer.send(out, wireDelayMs(this.timing, adu.length, out.length));
      }
    });
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
