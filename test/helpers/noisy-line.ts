// Starts scripts/faults/noisy-line.ts (a relay corrupting a share of the bytes between two socat
// pty pairs) as its own process and talks to it over stdin/stdout.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface NoisyLineStats {
  readonly bytes: number;
  readonly corrupted: number;
  readonly rate: number;
}

export interface NoisyLine {
  /** Device the gateway opens. */
  readonly gatewaySide: string;
  /** Device the simulator opens. */
  readonly meterSide: string;
  readonly process: ChildProcess;
  /** Sets the share of bytes corrupted (0 = a clean line); resolves once the relay applies it. */
  setRate(byteErrorRate: number): Promise<void>;
  stats(): Promise<NoisyLineStats>;
  stop(): Promise<void>;
}

export async function startNoisyLine(byteErrorRate: number, seed = 1): Promise<NoisyLine> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'scripts/faults/noisy-line.ts', '--byte-error-rate', String(byteErrorRate), '--seed', String(seed)], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const waiting: Array<{ event: string; resolve: (msg: Record<string, unknown>) => void }> = [];
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const i = waiting.findIndex((w) => w.event === msg.event);
    if (i >= 0) waiting.splice(i, 1)[0].resolve(msg);
  });
  const next = (event: string, timeoutMs = 20_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`noisy line: no ${event} within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
      waiting.push({
        event,
        resolve: (msg) => {
          clearTimeout(timer);
          resolve(msg);
        },
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`noisy line exited: ${stderr}`));
      });
    });
  const ready = (await next('ready')) as { gatewaySide: string; meterSide: string };
  const send = (line: string) => proc.stdin!.write(`${line}\n`);
  return {
    gatewaySide: ready.gatewaySide,
    meterSide: ready.meterSide,
    process: proc,
    async setRate(rate) {
      const applied = next('rate');
      send(`rate ${rate}`);
      await applied;
    },
    async stats() {
      const msg = next('stats');
      send('stats');
      return (await msg) as unknown as NoisyLineStats;
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    },
  };
}
