// An IEC 62056-21 mode C meter on a pty for tests: silent until asked. On the sign-on request
// `/?!` CR LF it answers with the recording's identification line, waits for the option select
// ACK 0 Z 0 CR LF, and sends the recorded data block (STX, data, ETX, BCC). A pty carries bytes
// at any speed, so the meter checks the speed instead: it reads the gateway's end of the pty
// with `stty -F` (a tty's settings are shared by everyone who opens it) when the sign-on comes
// (must be 300) and, after the option select, waits until the gateway switched to Z's rate
// before it answers, as a real meter would only be heard at that rate. Linux ptys force 8 data
// bits without parity, so 7E1 itself cannot be checked here.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { SerialPort } from 'serialport';
import { dataBlock, modeCBaudRate } from '../../src/p1/mode-c.js';

const run = promisify(execFile);

/** The baud rate a tty is set to now, as `stty -F` reports it. */
export async function ttySpeed(path: string): Promise<number> {
  const { stdout } = await run('stty', ['-F', path]);
  const m = /speed (\d+) baud/.exec(stdout);
  if (!m) throw new Error(`stty -F ${path}: no speed in ${JSON.stringify(stdout.slice(0, 80))}`);
  return Number(m[1]);
}

export interface ModeCMeterOptions {
  /** The recording: identification line, CR LF, then the data block as the meter sent it (an STX before it is dropped). */
  readonly recording: string;
  /** The gateway's end of the pty, whose speed the meter checks. */
  readonly gatewaySide: string;
  /** The meter's end of the pty. */
  readonly meterSide: string;
}

export interface ModeCMeter {
  /** The gateway's speed at each sign-on request. */
  readonly signOnSpeeds: number[];
  /** Each option select received, as sent. */
  readonly optionSelects: string[];
  /** Readouts sent whole. */
  readonly readouts: () => number;
  /** Bytes that were neither a sign-on nor an option select. */
  readonly unexpected: string[];
  /** How the next data blocks go out: `f(block)` (damage them), `null` as recorded, `'silent'` not at all. */
  answer(f: ((block: Buffer) => Buffer) | 'silent' | null): void;
  /** The next data blocks go out in `pieces` parts with `gapMs` between them (a slow line), or at once (null). */
  pace(p: { readonly pieces: number; readonly gapMs: number } | null): void;
  stop(): Promise<void>;
}

export async function startModeCMeter(opts: ModeCMeterOptions): Promise<ModeCMeter> {
  const recorded = readFileSync(opts.recording, 'latin1');
  const lineEnd = recorded.indexOf('\r\n');
  const identification = recorded.slice(0, lineEnd + 2);
  const data = recorded.slice(lineEnd + 2).replace(/^\x02/, '');
  const rate = modeCBaudRate(identification[4] ?? '');
  if (rate === null) throw new Error(`${opts.recording}: ${JSON.stringify(identification)} proposes no mode C rate`);
  const port = new SerialPort({ path: opts.meterSide, baudRate: 9600, autoOpen: false });
  port.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  const meter = { signOnSpeeds: [] as number[], optionSelects: [] as string[], unexpected: [] as string[], sent: 0 };
  let answer: ((block: Buffer) => Buffer) | 'silent' | null = null;
  let pace: { readonly pieces: number; readonly gapMs: number } | null = null;
  let buffer = '';
  let stopped = false;
  const send = (bytes: string | Buffer) => new Promise<void>((resolve) => port.write(bytes, () => port.drain(() => resolve())));

  const handle = async (message: string) => {
    if (message === '/?!\r\n') {
      meter.signOnSpeeds.push(await ttySpeed(opts.gatewaySide));
      if (answer !== 'silent') await send(Buffer.from(identification, 'latin1'));
      return;
    }
    if (/^\x06[0-9]{3}\r\n$/.test(message)) {
      meter.optionSelects.push(message);
      const wanted = modeCBaudRate(message[2]!);
      // The gateway switches once the ACK is out; answer at that rate only (20 s at most).
      for (let i = 0; i < 400 && !stopped && (await ttySpeed(opts.gatewaySide)) !== wanted; i++) await new Promise((r) => setTimeout(r, 50));
      if (stopped || answer === 'silent') return;
      const block = answer ? answer(Buffer.from(dataBlock(data), 'latin1')) : Buffer.from(dataBlock(data), 'latin1');
      if (!pace) await send(block);
      else {
        const size = Math.ceil(block.length / pace.pieces);
        for (let at = 0; at < block.length && !stopped; at += size) {
          if (at > 0) await new Promise((r) => setTimeout(r, pace!.gapMs));
          await send(block.subarray(at, at + size));
        }
      }
      meter.sent++;
      return;
    }
    meter.unexpected.push(message);
  };
  // One message at a time, in order (each ends with CR LF).
  let queue = Promise.resolve();
  port.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
      const message = buffer.slice(0, end + 2);
      buffer = buffer.slice(end + 2);
      queue = queue.then(() => handle(message)).catch(() => undefined);
    }
  });
  return {
    signOnSpeeds: meter.signOnSpeeds,
    optionSelects: meter.optionSelects,
    unexpected: meter.unexpected,
    readouts: () => meter.sent,
    answer: (f) => (answer = f),
    pace: (p) => (pace = p),
    async stop() {
      stopped = true;
      await queue;
      if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
    },
  };
}
