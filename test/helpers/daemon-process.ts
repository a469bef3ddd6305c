// Runs `metergate run` as a separate process, so a test can SIGKILL it mid-work, and
// waits until it has started.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface DaemonProcess {
  readonly process: ChildProcess;
  output(): string;
  /** SIGKILL: no shutdown code runs (a crash or power cut, as far as the process knows). */
  kill9(): Promise<void>;
  /** SIGTERM and wait for the exit code (and the end of its output). */
  stop(): Promise<number | null>;
}

export interface DaemonOptions {
  /** The daemon's environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** Told every chunk the daemon writes to stdout or stderr, as it comes. */
  readonly onOutput?: (chunk: string) => void;
  readonly startTimeoutMs?: number;
}

export async function startDaemon(configPath: string, opts: DaemonOptions = {}): Promise<DaemonProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'run', '--config', configPath], { cwd: root, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const onData = (d: Buffer) => {
    output += d.toString();
    opts.onOutput?.(d.toString());
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  // 'close', not 'exit': after 'exit' the last lines (say "metergate stopped") may still be in
  // the pipes, unread; 'close' comes once stdout and stderr have ended too.
  const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
  const until = Date.now() + (opts.startTimeoutMs ?? 90_000);
  while (!output.includes('metergate started')) {
    if (proc.exitCode !== null) throw new Error(`daemon exited ${proc.exitCode}: ${output}`);
    if (Date.now() > until) {
      proc.kill('SIGKILL');
      throw new Error(`daemon did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const gone = () => proc.exitCode !== null || proc.signalCode !== null;
  return {
    process: proc,
    output: () => output,
    async kill9() {
      if (gone()) return;
      proc.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (gone()) return proc.exitCode;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
