// Serial lines for tests: a socat pty pair stands for an RS-485 adapter with a meter on the
// other end. stop() makes both device links vanish, as an unplugged USB adapter does.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';

export interface PtyPair {
  /** The end the gateway opens (the "adapter"). */
  readonly a: string;
  /** The end the simulator opens (the "meter side"). */
  readonly b: string;
  readonly dir: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts `socat pty,raw,echo=0,link=DIR/a pty,raw,echo=0,link=DIR/b` and waits for both links. */
export async function startPtyPair(dir = mkdtempSync(join(tmpdir(), 'mg-pty-')), names: [string, string] = ['a', 'b']): Promise<PtyPair> {
  const a = join(dir, names[0]);
  const b = join(dir, names[1]);
  // Links left by a pair that had to be killed would point at /dev/pts numbers another
  // test may own by now; nobody must open those.
  rmSync(a, { force: true });
  rmSync(b, { force: true });
  const proc = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  proc.once('exit', () => (exited = true));
  try {
    await waitFor(() => exited || (existsSync(a) && existsSync(b)), 'socat pty links');
  } catch (err) {
    proc.kill('SIGKILL');
    throw err;
  }
  if (exited) throw new Error(`socat exited: ${stderr}`);
  return {
    a,
    b,
    dir,
    process: proc,
    async stop() {
      if (!exited) {
        const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
        proc.kill('SIGTERM');
        await Promise.race([gone, new Promise((r) => setTimeout(r, 2000))]);
        if (!exited) proc.kill('SIGKILL');
      }
      await waitFor(() => !existsSync(a) && !existsSync(b), 'pty links to vanish', 2000).catch(() => undefined);
      // A killed socat leaves its links (dangling, or worse, to a reused pty): remove them.
      rmSync(a, { force: true });
      rmSync(b, { force: true });
    },
  };
}

/** Removes a pty pair's directory (after stop). */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A line with a tap: gateway <-> pair1 <-> (this process) <-> pair2 <-> simulator. The test
 * relays the bytes and can inject garbage in either direction, like noise on RS-485.
 */
export interface TappedLine {
  /** Device the gateway opens. */
  readonly gatewaySide: string;
  /** Device the simulator opens. */
  readonly meterSide: string;
  /** Writes bytes towards the gateway (true) or towards the meter (false). */
  inject(bytes: Buffer, towardsGateway: boolean): Promise<void>;
  /** Rewrites relayed chunks (noise during real traffic); null restores a clean line. */
  mangle(fn: ((chunk: Buffer, towardsGateway: boolean) => Buffer) | null): void;
  stop(): Promise<void>;
}

export async function startTappedLine(): Promise<TappedLine> {
  const p1 = await startPtyPair(undefined, ['gw', 'tap1']);
  const p2 = await startPtyPair(undefined, ['tap2', 'meter']);
  const open = (path: string) =>
    new Promise<SerialPort>((resolve, reject) => {
      const port = new SerialPort({ path, baudRate: 9600, autoOpen: false });
      port.open((err) => (err ? reject(err) : resolve(port)));
    });
  const t1 = await open(p1.b);
  const t2 = await open(p2.a);
  let mangler: ((chunk: Buffer, towardsGateway: boolean) => Buffer) | null = null;
  t1.on('data', (d: Buffer) => t2.write(mangler ? mangler(d, false) : d));
  t2.on('data', (d: Buffer) => t1.write(mangler ? mangler(d, true) : d));
  t1.on('error', () => undefined);
  t2.on('error', () => undefined);
  const write = (port: SerialPort, bytes: Buffer) => new Promise<void>((resolve) => port.write(bytes, () => port.drain(() => resolve())));
  return {
    gatewaySide: p1.a,
    meterSide: p2.b,
    inject: (bytes, towardsGateway) => write(towardsGateway ? t1 : t2, bytes),
    mangle: (fn) => (mangler = fn),
    async stop() {
      await Promise.all([t1, t2].map((p) => new Promise<void>((resolve) => (p.isOpen ? p.close(() => resolve()) : resolve()))));
      await p1.stop();
      await p2.stop();
      removeDir(p1.dir);
      removeDir(p2.dir);
    },
  };
}
