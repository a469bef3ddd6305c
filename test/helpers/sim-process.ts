// Runs `metergate sim` as a separate process (so a test can kill it like a dead meter) and
// waits for its ready line.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface SimProcess {
  readonly process: ChildProcess;
  readonly ready: { pid: number; units: number[]; serial?: string; tcpPort?: number; rtuOverTcpPort?: number };
  /** SIGKILL: the meter dies without a word. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSim(args: string[]): Promise<SimProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'sim', '--exit-with-parent', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, METERGATE_LOG_LEVEL: process.env.METERGATE_LOG_LEVEL ?? 'warn' },
  });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const ready = await new Promise<SimProcess['ready']>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sim did not start: ${stderr}`)), 20_000);
    const lines = createInterface({ input: proc.stdout! });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { event?: string } & SimProcess['ready'];
        if (msg.event === 'ready') {
          clearTimeout(timer);
          resolve(msg);
        }
      } catch {
        /* not ours */
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sim exited with ${code}: ${stderr}`));
    });
  });
  const end = async (signal: NodeJS.Signals) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill(signal);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  };
  return { process: proc, ready, kill: () => end('SIGKILL'), stop: () => end('SIGTERM') };
}
