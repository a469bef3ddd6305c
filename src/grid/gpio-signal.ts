// The control box's relay contacts on Linux GPIO lines, read through the GPIO character
// device with the gpiod command-line tools (Debian package gpiod, libgpiod 1.6): `gpioget`
// reads the lines once at start, `gpiomon` then holds them and prints every edge, which the
// kernel timestamps (docs/grid-limits.md).
//
// Why the tools and not an npm binding: Node has no ioctl, so the character device's uAPI
// needs a native addon (node-libgpiod, opengpio), built with a compiler at install time and
// tied to one libgpiod major; the tools are Debian-packaged, use the same uAPI, and a child
// process that fails takes only itself down (it is then a lost signal, and restarted). The
// commands are configurable (input.gpioget/gpiomon), which is also how the tests point it at
// a stand-in where the kernel has no gpio-sim.
//
// Polarity is applied here, not with the tools' --active-low (its edge types would then be
// the logical ones on one tool and physical on another version): 'high' means a line read as
// 1 is an active contact.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { GpioInputConfig } from '../config/types.js';
import type { ControlSignalDeps, ControlSignalSource, SignalReading } from './control-signal.js';

const RESTART_MS = 2000;

export function createGpioSignal(deps: ControlSignalDeps): ControlSignalSource {
  return new GpioSignal(deps, deps.input as GpioInputConfig);
}

/** The gpioget output "1 0 1" as raw line values, or null when it is not one 0/1 per line. */
export function parseGpioValues(text: string, lines: number): number[] | null {
  const values = text.trim().split(/\s+/).map(Number);
  return values.length === lines && values.every((v) => v === 0 || v === 1) ? values : null;
}

/** A gpiomon line printed with -F '%o %e' ("17 1": offset 17, rising edge), or null. */
export function parseGpioEvent(line: string): { readonly offset: number; readonly value: number } | null {
  const m = /^(\d+) ([01])$/.exec(line.trim());
  return m ? { offset: Number(m[1]), value: Number(m[2]) } : null;
}

class GpioSignal implements ControlSignalSource {
  private monitor: ChildProcessWithoutNullStreams | null = null;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private raw: number[] = [];
  private listener: (r: SignalReading) => void = () => {};

  constructor(
    private readonly deps: ControlSignalDeps,
    private readonly input: GpioInputConfig,
  ) {}

  describe(): string {
    return `gpio ${this.input.chip} line(s) ${this.input.lines.join(',')} (active ${this.input.active ?? 'high'})`;
  }

  async start(listener: (r: SignalReading) => void): Promise<void> {
    this.listener = listener;
    await this.open();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const m = this.monitor;
    this.monitor = null;
    if (m && m.exitCode === null) {
      const exited = new Promise<void>((resolve) => m.once('exit', () => resolve()));
      m.kill('SIGTERM');
      await exited;
    }
  }

  private contacts(): boolean[] {
    return this.raw.map((v) => ((this.input.active ?? 'high') === 'high' ? v === 1 : v === 0));
  }

  private lost(reason: string): void {
    this.listener({ kind: 'lost', reason, atMs: this.deps.now() });
    if (this.stopped || this.restartTimer) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.stopped) void this.open();
    }, RESTART_MS);
    this.restartTimer.unref();
  }

  /** Reads the lines once, then monitors their edges until gpiomon exits (then: lost, and again after RESTART_MS). */
  private async open(): Promise<void> {
    const { chip, lines } = this.input;
    const args = [chip, ...lines.map(String)];
    let values: number[] | null;
    try {
      values = parseGpioValues(await run((this.input.gpioget ?? 'gpioget'), args), lines.length);
    } catch (err) {
      this.lost(`${(this.input.gpioget ?? 'gpioget')} ${args.join(' ')}: ${(err as Error).message}`);
      return;
    }
    if (!values) {
      this.lost(`${(this.input.gpioget ?? 'gpioget')} ${args.join(' ')}: output is not one 0 or 1 per line`);
      return;
    }
    if (this.stopped) return;
    this.raw = values;
    const monitor = spawn((this.input.gpiomon ?? 'gpiomon'), ['-b', '-F', '%o %e', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.monitor = monitor;
    let stderr = '';
    monitor.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-500)));
    createInterface({ input: monitor.stdout }).on('line', (line) => {
      const e = parseGpioEvent(line);
      const at = e ? lines.indexOf(e.offset) : -1;
      if (!e || at < 0) return;
      this.raw[at] = e.value;
      this.listener({ kind: 'contacts', contacts: this.contacts(), atMs: this.deps.now() });
    });
    monitor.once('error', (err) => {
      if (this.monitor === monitor) this.monitor = null;
      this.lost(`${(this.input.gpiomon ?? 'gpiomon')}: ${err.message}`);
    });
    monitor.once('exit', (code, signal) => {
      if (this.monitor !== monitor) return;
      this.monitor = null;
      if (!this.stopped) this.lost(`${(this.input.gpiomon ?? 'gpiomon')} exited (${signal ?? code})${stderr ? `: ${stderr.trim()}` : ''}`);
    });
    this.listener({ kind: 'contacts', contacts: this.contacts(), atMs: this.deps.now() });
  }
}

/** Runs a short command; its stdout, or an error with its stderr when it fails. */
function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(err.trim() || `exit ${code}`))));
  });
}
