// A noisy RS-485 line for tests and the fault campaign: two socat pty pairs with this process
// relaying bytes between them, each byte corrupted (XOR with a random non-zero byte) with a
// given probability, in both directions, independently.
//
//   npx tsx scripts/faults/noisy-line.ts [--byte-error-rate 0.02] [--seed 1] [--dir DIR]
//
//   gateway opens gatewaySide ── pty pair ── relay ── pty pair ── meterSide (simulator)
//
// Prints one JSON line {"event":"ready","gatewaySide":…,"meterSide":…} once both pairs are up.
// Reads commands on stdin, one a line: `rate 0.05` sets the error rate (0 = clean line),
// `stats` prints {"event":"stats","bytes":…,"corrupted":…}. SIGTERM/SIGINT or the end of
// stdin stop socat and remove the links. Runs in its own process so the relay's timing does
// not depend on the gateway's event loop, as on a real line.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { SerialPort } from 'serialport';
import { mulberry32 } from '../../src/sim/prng.js';
import { removeDir, startPtyPair } from '../../test/helpers/socat.js';

const { values } = parseArgs({
  options: {
    'byte-error-rate': { type: 'string', default: '0' },
    seed: { type: 'string', default: '1' },
    dir: { type: 'string' },
  },
});

function parseRate(text: string): number {
  const rate = Number(text);
  if (!Number.isFinite(rate) || rate < 0 || rate > 1) throw new Error(`byte error rate must be between 0 and 1, got ${text}`);
  return rate;
}

let rate = parseRate(values['byte-error-rate']);
const random = mulberry32(Number(values.seed)); // seeded, so a run's corruption pattern can be repeated
const counts = { bytes: 0, corrupted: 0 };

function corrupt(chunk: Buffer): Buffer {
  counts.bytes += chunk.length;
  if (rate === 0) return chunk;
  const out = Buffer.from(chunk);
  for (let i = 0; i < out.length; i++) {
    if (random() < rate) {
      out[i] ^= 1 + Math.floor(random() * 255);
      counts.corrupted++;
    }
  }
  return out;
}

const open = (path: string) =>
  new Promise<SerialPort>((resolve, reject) => {
    const port = new SerialPort({ path, baudRate: 9600, autoOpen: false });
    port.open((err) => (err ? reject(err) : resolve(port)));
  });

const print = (msg: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(msg)}\n`);

async function main(): Promise<void> {
  const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'mg-noisy-'));
  const gatewayPair = await startPtyPair(dir, ['gateway', 'relay-a']);
  const meterPair = await startPtyPair(dir, ['relay-b', 'meter']);
  const towardsMeter = await open(gatewayPair.b);
  const towardsGateway = await open(meterPair.a);
  towardsMeter.on('data', (d: Buffer) => towardsGateway.write(corrupt(d)));
  towardsGateway.on('data', (d: Buffer) => towardsMeter.write(corrupt(d)));
  towardsMeter.on('error', () => undefined);
  towardsGateway.on('error', () => undefined);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await Promise.all([towardsMeter, towardsGateway].map((p) => new Promise<void>((resolve) => (p.isOpen ? p.close(() => resolve()) : resolve()))));
    await gatewayPair.stop();
    await meterPair.stop();
    if (!values.dir) removeDir(dir);
    print({ event: 'stats', ...counts, rate });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  const commands = createInterface({ input: process.stdin });
  commands.on('line', (line) => {
    const [cmd, arg] = line.trim().split(/\s+/);
    try {
      if (cmd === 'rate') {
        rate = parseRate(arg ?? '');
        print({ event: 'rate', rate });
      } else if (cmd === 'stats') print({ event: 'stats', ...counts, rate });
      else if (cmd) print({ event: 'error', message: `unknown command ${cmd}; use "rate P" or "stats"` });
    } catch (err) {
      print({ event: 'error', message: (err as Error).message });
    }
  });
  commands.on('close', () => void stop());
  print({ event: 'ready', pid: process.pid, gatewaySide: gatewayPair.a, meterSide: meterPair.b, rate });
}

main().catch((err: unknown) => {
  process.stderr.write(`noisy-line: ${(err as Error).message}\n`);
  process.exit(1);
});
