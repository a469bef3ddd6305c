// One Modbus bus (a serial line, a TCP gateway or an RTU-over-TCP gateway) with one queue
// and one worker: never two requests on the line at once. Adds the inter-frame gap, a
// per-request timeout with our own backstop timer, bounded retries, and reopening with a
// fresh client after the port fails (USB adapter unplugged and re-enumerated).
import { createRequire, Module } from 'node:module';
import type { ModbusRTU as ModbusClient } from 'modbus-serial/ModbusRTU.js';
import type { BusConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { FunctionCode } from './planner.js';
import { waitUntil } from './timing.js';

// modbus-serial is CommonJS with `module.exports = ModbusRTU`; its typings describe an ES
// default export, which NodeNext resolution cannot line up, so load it through require.
const ModbusRTU = withoutSerialportAtLoad(createRequire(import.meta.url)) as typeof ModbusClient;

/**
 * modbus-serial's index requires serialport (its native binding and its JS) at load, only to
 * export its serial port classes, each inside try/catch ("optional native dep"); the client
 * requires its port when it connects (apis/connection.js). So the index is loaded while
 * serialport throws, and a serial bus's connectRTUBuffered loads serialport when it first
 * connects: a gateway with TCP buses only never loads it (~2 MB of RSS; docs/architecture.md,
 * Memory). What the index then leaves out (RTUBufferedPort, ServerSerial) is not used here.
 * If serialport is loaded already (a P1 source started first), nothing changes.
 */
function withoutSerialportAtLoad(require: NodeJS.Require): unknown {
  const indexPath = require.resolve('modbus-serial');
  const serialportPath = createRequire(indexPath).resolve('serialport');
  if (require.cache[indexPath] || require.cache[serialportPath]) return require('modbus-serial');
  const deferred = new Module(serialportPath);
  deferred.filename = serialportPath;
  deferred.loaded = true;
  deferred.exports = new Proxy(
    {},
    {
      get() {
        throw new Error('serialport is loaded when a serial bus connects');
      },
    },
  );
  require.cache[serialportPath] = deferred;
  try {
    return require('modbus-serial');
  } finally {
    delete require.cache[serialportPath];
  }
}
type ModbusRTU = ModbusClient;

export class ModbusTimeoutError extends Error {
  override readonly name: string = 'ModbusTimeoutError';
}
/**
 * No attempt got an intact answer, but at least one got bytes back (bad CRC, wrong length):
 * a device is there and the line is noisy, unlike a silent timeout.
 */
export class ModbusGarbledError extends ModbusTimeoutError {
  override readonly name: string = 'ModbusGarbledError';
}
export class ModbusExceptionError extends Error {
  override readonly name = 'ModbusExceptionError';
  constructor(readonly code: number, message: string) {
    super(message);
  }
}
export class BusUnavailableError extends Error {
  override readonly name = 'BusUnavailableError';
}

export interface BusRequest {
  readonly unitId: number;
  /** 3/4: holding/input registers (words); 1/2: coils/discrete inputs (each bit a 0 or 1 word; grid/modbus-signal.ts). */
  readonly functionCode: FunctionCode | 1 | 2;
  readonly address: number;
  readonly count: number;
  /** Overrides the bus's retries (scan uses 0). */
  readonly retries?: number;
  readonly timeoutMs?: number;
  /** Probes wait until no poll is queued, so a dead meter cannot hold up the live ones. */
  readonly priority?: 'poll' | 'probe';
}

export interface BusResult {
  readonly words: number[];
  /** Clock time (ms since epoch) the answer arrived. */
  readonly answeredAtMs: number;
  /** Time the successful attempt had the line (send to answer), ms. */
  readonly lineTimeMs: number;
  readonly attempts: number;
}

export type RequestOutcome = 'ok' | 'timeout' | 'exception' | 'frame_error' | 'unavailable';

export interface ModbusBusDeps {
  readonly bus: BusConfig;
  readonly logger: Logger;
  readonly now?: () => number;
  /** Called once per attempt on the line; for metrics. */
  readonly onAttempt?: (outcome: RequestOutcome, lineTimeMs: number) => void;
  readonly onReopen?: () => void;
  /** Reopen backoff bounds, ms. */
  readonly reopenInitialMs?: number;
  readonly reopenMaxMs?: number;
}

interface Job {
  readonly req: BusRequest;
  readonly resolve: (r: BusResult) => void;
  readonly reject: (e: Error) => void;
}

/** Bits a character takes on the line: start + data + parity + stop. */
export function bitsPerChar(bus: Pick<BusConfig, 'data_bits' | 'parity' | 'stop_bits'>): number {
  return 1 + bus.data_bits + (bus.parity === 'none' ? 0 : 1) + bus.stop_bits;
}

/** Silence between frames: 3.5 characters (at least 1.75 ms, as the Modbus spec fixes above 19200 baud). */
export function interFrameGapMs(bus: BusConfig): number {
  if (bus.type === 'tcp') return 0;
  if (bus.inter_frame_gap_ms !== undefined) return bus.inter_frame_gap_ms;
  return Math.max(1.75, (3.5 * bitsPerChar(bus) * 1000) / bus.baud_rate);
}

const monotonic = () => performance.now();

/** modbus-serial's RTU buffered port keeps stray bytes between requests; drop them before sending. */
function clearReceiveBuffer(client: ModbusRTU): void {
  const port = (client as unknown as { _port?: { _buffer?: Buffer } })._port;
  if (port && Buffer.isBuffer(port._buffer)) port._buffer = Buffer.alloc(0);
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class ModbusBus {
  private client: ModbusRTU | null = null;
  private readonly queue: Job[] = [];
  private working = false;
  private closed = false;
  private lastFrameEnd = 0;
  private nextOpenAt = 0;
  private reopenDelayMs: number;
  private opening: Promise<void> | null = null;

  constructor(private readonly deps: ModbusBusDeps) {
    this.reopenDelayMs = deps.reopenInitialMs ?? 500;
  }

  get name(): string {
    return this.deps.bus.name;
  }

  /** Where the bus is: the serial device or host:port. */
  get endpoint(): string {
    const b = this.deps.bus;
    return b.type === 'rtu' ? (b.port ?? '') : `${b.host}:${b.tcp_port}`;
  }

  get isOpen(): boolean {
    return this.client?.isOpen === true;
  }

  /** Why the last attempt to open the port failed (null after a successful open). */
  get lastOpenError(): string | null {
    return this.openError;
  }

  private openError: string | null = null;

  /** Opens the line; a failure is logged and retried with backoff on the next request. */
  async open(): Promise<void> {
    this.closed = false;
    try {
      await this.ensureOpen();
    } catch (err) {
      this.deps.logger.warn({ bus: this.name, endpoint: this.endpoint, err: describe(err) }, 'modbus bus not available yet; will retry');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new BusUnavailableError('bus closed'));
    await this.dropClient();
  }

  /** Queues a read; resolves with the registers or rejects with one of the error classes above. */
  read(req: BusRequest): Promise<BusResult> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new BusUnavailableError('bus closed'));
      const job: Job = { req, resolve, reject };
      if ((req.priority ?? 'poll') === 'poll') {
        // polls go ahead of queued probes, in arrival order among themselves
        const firstProbe = this.queue.findIndex((j) => j.req.priority === 'probe');
        if (firstProbe < 0) this.queue.push(job);
        else this.queue.splice(firstProbe, 0, job);
      } else {
        this.queue.push(job);
      }
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.working) return;
    this.working = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const job = this.queue.shift()!;
        try {
          job.resolve(await this.execute(job.req));
        } catch (err) {
          job.reject(err as Error);
        }
      }
    } finally {
      this.working = false;
    }
  }

  private async execute(req: BusRequest): Promise<BusResult> {
    const retries = req.retries ?? this.deps.bus.retries;
    let lastError: Error = new ModbusTimeoutError('no attempt');
    let garbled = false;
    for (let attempt = 1; attempt <= retries + 1; attempt++) {
      try {
        await this.ensureOpen();
      } catch (err) {
        this.deps.onAttempt?.('unavailable', 0);
        throw new BusUnavailableError(`${this.endpoint}: ${describe(err)}`);
      }
      try {
        return { ...(await this.attempt(req)), attempts: attempt };
      } catch (err) {
        lastError = err as Error;
        if (err instanceof ModbusExceptionError || err instanceof BusUnavailableError) throw err;
        if (err instanceof ModbusGarbledError) garbled = true;
      }
    }
    if (garbled && !(lastError instanceof ModbusGarbledError)) throw new ModbusGarbledError(`${lastError.message} (an earlier attempt got a garbled answer)`);
    throw lastError;
  }

  private async attempt(req: BusRequest): Promise<Omit<BusResult, 'attempts'>> {
    const client = this.client!;
    const gap = interFrameGapMs(this.deps.bus);
    await waitUntil(this.lastFrameEnd + gap);
    if (this.closed || this.client !== client) throw new BusUnavailableError('bus closed');
    const timeoutMs = req.timeoutMs ?? this.deps.bus.timeout_ms;
    client.setID(req.unitId);
    client.setTimeout(timeoutMs);
    clearReceiveBuffer(client);
    const started = monotonic();
    const fc = req.functionCode;
    const call =
      fc === 3 ? client.readHoldingRegisters(req.address, req.count)
      : fc === 4 ? client.readInputRegisters(req.address, req.count)
      : fc === 1 ? client.readCoils(req.address, req.count)
      : client.readDiscreteInputs(req.address, req.count);
    // Backstop: modbus-serial settles on its own timeout, but a destroyed or confused port can
    // leave the promise pending forever (destroy() does not reject pending transactions).
    // https://github.com/yaacov/node-modbus-serial/issues/377
    let backstop: NodeJS.Timeout | undefined;
    const guard = new Promise<never>((_, reject) => {
      backstop = setTimeout(() => reject(Object.assign(new ModbusTimeoutError('no answer (backstop)'), { backstop: true })), timeoutMs + 250);
    });
    try {
      const res = await Promise.race([call, guard]);
      const lineTimeMs = monotonic() - started;
      this.lastFrameEnd = monotonic();
      // Bits come back padded to whole bytes (booleans): only the ones asked for, as 0/1.
      const words = fc === 1 || fc === 2 ? Array.from(res.data as ArrayLike<boolean>).slice(0, req.count).map(Number) : Array.from(res.data as ArrayLike<number>);
      if (words.length !== req.count) throw new Error(`answer has ${words.length} registers, asked ${req.count}`);
      this.deps.onAttempt?.('ok', lineTimeMs);
      return { words, answeredAtMs: (this.deps.now ?? Date.now)(), lineTimeMs };
    } catch (err) {
      const lineTimeMs = monotonic() - started;
      this.lastFrameEnd = monotonic();
      const e = err as Error & { modbusCode?: number; backstop?: boolean; name?: string };
      const msg = describe(err);
      if (typeof e.modbusCode === 'number') {
        this.deps.onAttempt?.('exception', lineTimeMs);
        throw new ModbusExceptionError(e.modbusCode, `unit ${req.unitId}: Modbus exception ${e.modbusCode} (${msg})`);
      }
      if (e.backstop) {
        this.deps.onAttempt?.('timeout', lineTimeMs);
        this.deps.logger.warn({ bus: this.name }, 'modbus client stuck; replacing it');
        await this.dropClient();
        this.nextOpenAt = 0;
        throw e;
      }
      if (/port not open/i.test(msg) || e.name === 'PortNotOpenError' || !client.isOpen) {
        this.deps.onAttempt?.('unavailable', lineTimeMs);
        await this.markBroken(msg);
        throw new BusUnavailableError(`${this.endpoint}: ${msg}`);
      }
      if (/timed out/i.test(msg) || e.name === 'TransactionTimedOutError' || err instanceof ModbusTimeoutError) {
        this.deps.onAttempt?.('timeout', lineTimeMs);
        throw new ModbusTimeoutError(`unit ${req.unitId}: no answer within ${timeoutMs} ms`);
      }
      // CRC errors, wrong lengths, stray frames: garbage on the line. Drop what was received
      // and let the bounded retry try again on a clean buffer.
      this.deps.onAttempt?.('frame_error', lineTimeMs);
      clearReceiveBuffer(client);
      this.deps.logger.debug({ bus: this.name, unit: req.unitId, err: msg }, 'bad frame on the line');
      throw new ModbusGarbledError(`unit ${req.unitId}: ${msg}`);
    } finally {
      clearTimeout(backstop);
    }
  }

  private async ensureOpen(): Promise<void> {
    if (this.client?.isOpen) return;
    if (this.opening) return this.opening;
    if (this.client) await this.dropClient();
    const now = monotonic();
    if (now < this.nextOpenAt) throw new Error(`port not open; next reopen attempt in ${Math.round(this.nextOpenAt - now)} ms`);
    this.opening = this.connect().finally(() => (this.opening = null));
    return this.opening;
  }

  private async connect(): Promise<void> {
    const b = this.deps.bus;
    // Always a fresh client: reusing one after its port failed keeps failing
    // (https://github.com/yaacov/node-modbus-serial/issues/240), and an 'error' listener is
    // needed or an unplugged adapter crashes the process
    // (https://github.com/yaacov/node-modbus-serial/issues/379).
    const client = new ModbusRTU();
    client.on('error', (err: unknown) => this.deps.logger.debug({ bus: this.name, err: describe(err) }, 'modbus port error'));
    client.on('close', () => {
      if (this.client === client && !this.closed) this.deps.logger.warn({ bus: this.name, endpoint: this.endpoint }, 'modbus port closed');
    });
    let connecting: Promise<void>;
    if (b.type === 'rtu') {
      connecting = client.connectRTUBuffered(b.port!, { baudRate: b.baud_rate, parity: b.parity, dataBits: b.data_bits, stopBits: b.stop_bits });
    } else if (b.type === 'tcp') {
      connecting = client.connectTCP(b.host!, { port: b.tcp_port });
    } else {
      // RTU frames over a raw TCP socket (transparent serial gateways). modbus-serial calls this
      // "telnet"; its connectTcpRTUBuffered, despite the name, speaks MBAP (Modbus TCP) framing.
      connecting = client.connectTelnet(b.host!, { port: b.tcp_port });
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([connecting, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('open timed out')), 3000)))]);
    } catch (err) {
      this.openError = describe(err);
      try {
        client.destroy(() => undefined);
      } catch {
        /* already gone */
      }
      this.nextOpenAt = monotonic() + this.reopenDelayMs;
      this.reopenDelayMs = Math.min(this.reopenDelayMs * 2, this.deps.reopenMaxMs ?? 2_000);
      throw err;
    } finally {
      clearTimeout(timer);
    }
    this.openError = null;
    const wasReopen = this.everOpened;
    this.everOpened = true;
    this.client = client;
    this.reopenDelayMs = this.deps.reopenInitialMs ?? 500;
    this.lastFrameEnd = monotonic();
    if (wasReopen) {
      this.deps.onReopen?.();
      this.deps.logger.info({ bus: this.name, endpoint: this.endpoint }, 'modbus port reopened');
    }
  }

  private everOpened = false;

  private async markBroken(reason: string): Promise<void> {
    this.deps.logger.warn({ bus: this.name, endpoint: this.endpoint, err: reason }, 'modbus port lost; reopening with a fresh client');
    await this.dropClient();
    this.nextOpenAt = monotonic() + this.reopenDelayMs;
  }

  private async dropClient(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 500);
      try {
        client.close(() => {
          clearTimeout(t);
          resolve();
        });
      } catch {
        clearTimeout(t);
        resolve();
      }
    });
  }
}
