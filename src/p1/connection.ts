// The byte stream of one P1 bus: a serial port (the meter's P1 cable) or a TCP connection to a
// serial bridge (ser2net and the like). Reconnects after errors with a capped backoff; hands
// every chunk on as latin1 text (one char per byte, as the CRC needs).
import { connect, type Socket } from 'node:net';
import { SerialPort } from 'serialport';
import type { BusConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import { isModeC, P1_LINES, p1Line } from './line-settings.js';
import { MODE_C_START } from './mode-c.js';

export interface P1ConnectionDeps {
  readonly bus: BusConfig;
  readonly logger: Logger;
  readonly onData: (text: string) => void;
  /** Longest wait before opening again after a failure. */
  readonly reopenMaxMs: number;
  /** Told each time the line fails (scan and doctor report it instead of waiting). */
  readonly onUnavailable?: (why: string) => void;
  /** Told each time the port or bridge is open (doctor asks a mode C meter then). */
  readonly onOpen?: () => void;
}

const REOPEN_FIRST_MS = 250;

export class P1Connection {
  private port: SerialPort | null = null;
  private socket: Socket | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private delayMs = REOPEN_FIRST_MS;
  /** The last failure, logged once until the line works again. */
  private lastError: string | null = null;

  constructor(private readonly deps: P1ConnectionDeps) {}

  /** Where the bytes come from, as network_scan and the status page show it. */
  get address(): string {
    const { bus } = this.deps;
    return bus.type === 'p1' ? (bus.port ?? '') : `${bus.host}:${bus.tcp_port}`;
  }

  open(): void {
    this.running = true;
    this.connect();
  }

  async close(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const port = this.port;
    this.port = null;
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
    this.socket?.destroy();
    this.socket = null;
  }

  /** Whether bytes can be written now (a mode C request): the serial port is open. */
  get writable(): boolean {
    return this.port?.isOpen === true;
  }

  /** Writes bytes (latin1) and waits until they left the adapter (a mode C request); fails when the port is not open. */
  write(bytes: string): Promise<void> {
    const port = this.port;
    if (!port?.isOpen) return Promise.reject(new Error('the serial port is not open'));
    return new Promise((resolve, reject) => {
      port.write(Buffer.from(bytes, 'latin1'), (err) => {
        if (err) reject(err);
        else port.drain((e) => (e ? reject(e) : resolve()));
      });
    });
  }

  /** Switches the open port's baud rate (mode C: 300 for the sign-on, then the meter's rate). */
  setBaudRate(baudRate: number): Promise<void> {
    const port = this.port;
    if (!port?.isOpen) return Promise.reject(new Error('the serial port is not open'));
    return new Promise((resolve, reject) => port.update({ baudRate }, (err) => (err ? reject(err) : resolve())));
  }

  private connect(): void {
    if (!this.running) return;
    const { bus } = this.deps;
    if (bus.type === 'p1') {
      const port = new SerialPort({ path: bus.port ?? '', ...(isModeC(bus) ? MODE_C_START : P1_LINES[p1Line(bus)]), autoOpen: false });
      this.port = port;
      port.on('data', (chunk: Buffer) => this.data(chunk));
      port.on('close', () => this.lost(port, 'port closed'));
      port.on('error', (err) => this.lost(port, err.message));
      port.open((err) => {
        if (err) this.lost(port, err.message);
        else this.opened();
      });
    } else {
      const socket = connect({ host: bus.host ?? '', port: bus.tcp_port });
      this.socket = socket;
      socket.setKeepAlive(true, 10_000);
      socket.on('connect', () => this.opened());
      socket.on('data', (chunk: Buffer) => this.data(chunk));
      socket.on('error', (err) => this.lost(socket, err.message));
      socket.on('close', () => this.lost(socket, 'connection closed'));
    }
  }

  private opened(): void {
    this.delayMs = REOPEN_FIRST_MS;
    if (this.lastError !== null) this.deps.logger.info({ bus: this.deps.bus.name, address: this.address }, 'P1 line open again');
    this.lastError = null;
    this.deps.onOpen?.();
  }

  private data(chunk: Buffer): void {
    this.delayMs = REOPEN_FIRST_MS;
    this.deps.onData(chunk.toString('latin1'));
  }

  /** The port or socket failed: forget it and open again after a backoff (once per failure). */
  private lost(handle: SerialPort | Socket, why: string): void {
    if (handle !== this.port && handle !== this.socket) return;
    this.port = null;
    this.socket = null;
    if (handle instanceof SerialPort) {
      if (handle.isOpen) handle.close(() => undefined);
    } else handle.destroy();
    if (!this.running) return;
    this.deps.onUnavailable?.(why);
    if (!this.running) return;
    if (why !== this.lastError) this.deps.logger.warn({ bus: this.deps.bus.name, address: this.address, err: why, reopen_in_ms: this.delayMs }, 'P1 line unavailable');
    this.lastError = why;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, this.delayMs);
    this.delayMs = Math.min(this.delayMs * 2, this.deps.reopenMaxMs);
  }
}
