// A real Debian system booted with systemd as PID 1 (systemd-nspawn -b) for the package's
// boot tests: a fresh root from scripts/debian-root (debootstrap, cached), booted, commands
// run inside with nsenter, rebooted, powered off. The container shares this machine's
// network, so a broker or simulated meter on 127.0.0.1 here is 127.0.0.1 there.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isRoot, peer } from '../helpers/peers.js';

export type DebianSuite = 'bookworm' | 'trixie';
export const DEBIAN_RELEASE: Record<DebianSuite, string> = { bookworm: '12', trixie: '13' };

const INSTALL = 'bash scripts/install-package-deps';
const runs = (cmd: string, args: string[]) => spawnSync(cmd, args).status === 0;

/** Whether this machine can debootstrap and boot a container (with CI set: throws, naming what is missing). */
export function canBoot(): boolean {
  return [
    isRoot,
    peer('debootstrap', runs('debootstrap', ['--version']), INSTALL),
    peer('systemd-nspawn (systemd-container)', runs('systemd-nspawn', ['--version']), INSTALL),
    peer('nsenter (util-linux)', runs('nsenter', ['--version']), INSTALL),
  ].every(Boolean);
}

export interface BootOptions {
  /** systemd-nspawn --machine (the container's hostname, and its directory under /run/systemd/nspawn). Default mg-SUITE. */
  readonly machine?: string;
  /** Device nodes of this machine bound into the container (systemd-nspawn --bind). */
  readonly devices?: readonly string[];
  /**
   * Whether systemd inside enforces DevicePolicy=/DeviceAllow=. It does that with BPF
   * device programs on cgroup v2 only; on a host with the hybrid hierarchy (cgroup v1
   * controllers, as this CI machine's container has) the container would get the v1
   * devices controller read-only and systemd would silently not enforce. So the container
   * gets the unified hierarchy (SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1, as a Debian 12/13 boot
   * has it) and may call bpf() (--system-call-filter=bpf; nspawn's seccomp filter refuses it).
   */
  readonly enforceDevicePolicy?: boolean;
}

export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  /** stdout and stderr, for assertion messages. */
  readonly output: string;
}

/** Runs a program on this machine without blocking the event loop (the test's MQTT subscriber keeps receiving). */
export function run(cmd: string, args: readonly string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<RunResult> {
  return new Promise((done) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env, cwd: opts.cwd });
    let stdout = '';
    let output = '';
    p.stdout.on('data', (d: Buffer) => ((stdout += d.toString()), (output += d.toString())));
    p.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      output += `\n[killed after ${opts.timeoutMs} ms]`;
      p.kill('SIGKILL');
    }, opts.timeoutMs ?? 600_000);
    p.once('error', (err) => (output += String(err)));
    p.once('close', (status) => {
      clearTimeout(timer);
      done({ status, stdout, output });
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// eslint-disable-next-line no-control-regex
const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');

/** The pid (on this machine) of the container's init: the child of systemd-nspawn that is PID 1 in its namespace. */
function initPidOf(nspawnPid: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const ppid = /^PPid:\s+(\d+)$/m.exec(status)?.[1];
      const nspid = /^NSpid:\s+([\d\s]+)$/m.exec(status)?.[1].trim().split(/\s+/);
      if (Number(ppid) === nspawnPid && nspid !== undefined && nspid.length > 1 && nspid[nspid.length - 1] === '1') return Number(entry);
    } catch {
      /* gone meanwhile */
    }
  }
  return undefined;
}

export class BootedDebian {
  private nspawn: ChildProcess | null = null;
  private exited: Promise<number | null> = Promise.resolve(null);
  private consoleText = '';
  private pid = 0;

  private constructor(
    readonly suite: DebianSuite,
    /** The container's root directory on this machine. */
    readonly root: string,
    private readonly options: BootOptions,
  ) {}

  /** A fresh root of `suite` (scripts/debian-root), not booted yet. */
  static async create(suite: DebianSuite, options: BootOptions = {}): Promise<BootedDebian> {
    const base = resolve('.tmp/boot');
    mkdirSync(base, { recursive: true });
    const root = mkdtempSync(join(base, `${suite}-`));
    const r = await run('bash', ['scripts/debian-root', suite, root], { timeoutMs: 900_000 });
    if (r.status !== 0) throw new Error(`scripts/debian-root ${suite} failed:\n${r.output}`);
    return new BootedDebian(suite, root, options);
  }

  /** A path inside the container, as seen from this machine. */
  at(path: string): string {
    return join(this.root, path);
  }

  /** The console since the last boot (systemd's status lines), for failure messages. */
  console(): string {
    return stripAnsi(this.consoleText);
  }

  /** Boots the container and waits until systemd says the boot is done ("running" or "degraded"). */
  async boot(timeoutMs = 300_000): Promise<string> {
    // systemd-nspawn keeps its per-container propagation directory here; on this machine's
    // /run it cannot create it.
    mkdirSync('/run/systemd/nspawn', { recursive: true });
    if (spawnSync('mountpoint', ['-q', '/run/systemd/nspawn']).status !== 0) {
      const m = spawnSync('mount', ['-t', 'tmpfs', 'tmpfs', '/run/systemd/nspawn'], { encoding: 'utf8' });
      if (m.status !== 0) throw new Error(`mount -t tmpfs tmpfs /run/systemd/nspawn: ${m.stderr}`);
    }
    this.consoleText = '';
    const { machine = `mg-${this.suite}`, devices = [], enforceDevicePolicy = false } = this.options;
    const args = ['--keep-unit', '--register=no', '--quiet', `--machine=${machine}`, '-D', this.root, ...devices.map((d) => `--bind=${d}`)];
    if (enforceDevicePolicy) args.push('--system-call-filter=bpf');
    const env = enforceDevicePolicy ? { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' } : process.env;
    const p = spawn('systemd-nspawn', [...args, '-b'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    this.nspawn = p;
    p.stdout!.on('data', (d: Buffer) => (this.consoleText += d.toString()));
    p.stderr!.on('data', (d: Buffer) => (this.consoleText += d.toString()));
    this.exited = new Promise((r) => p.once('exit', (code) => r(code)));
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (p.exitCode !== null) throw new Error(`systemd-nspawn exited ${p.exitCode} while booting ${this.suite}:\n${this.console()}`);
      const pid = initPidOf(p.pid!);
      if (pid !== undefined) {
        this.pid = pid;
        break;
      }
      if (Date.now() > until) throw new Error(`no init process under systemd-nspawn:\n${this.console()}`);
      await sleep(100);
    }
    for (;;) {
      const state = await this.sh('systemctl is-system-running --wait', Math.max(1000, until - Date.now()));
      const said = state.stdout.trim();
      if (said === 'running' || said === 'degraded') return said;
      if (Date.now() > until) throw new Error(`${this.suite} did not finish booting (${state.output.trim()}):\n${this.console()}`);
      await sleep(500);
    }
  }

  /** Runs a shell script as root inside the container (all its namespaces, its root, a clean environment). */
  sh(script: string, timeoutMs = 600_000): Promise<RunResult> {
    if (!this.pid) throw new Error('the container is not booted');
    return run(
      'nsenter',
      ['-t', String(this.pid), '-a', '--', '/usr/bin/env', '-i', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'LANG=C.UTF-8', 'HOME=/root', '/bin/sh', '-c', script],
      { timeoutMs },
    );
  }

  /** `systemctl reboot` inside; systemd-nspawn ends with 133 and the container is booted again. */
  async reboot(): Promise<string> {
    await this.sh('systemctl reboot');
    const code = await this.exited;
    if (code !== 133) throw new Error(`systemd-nspawn ended with ${code} on reboot, not 133:\n${this.console()}`);
    this.pid = 0;
    return this.boot();
  }

  /** Powers the container off (poweroff inside; SIGKILL to systemd-nspawn if it hangs). */
  async poweroff(): Promise<void> {
    const p = this.nspawn;
    if (!p || p.exitCode !== null) return;
    if (this.pid) await this.sh('systemctl poweroff', 30_000);
    const timer = setTimeout(() => p.kill('SIGKILL'), 120_000);
    await this.exited;
    clearTimeout(timer);
    this.pid = 0;
  }

  /** Powers off and deletes the root. */
  async destroy(): Promise<void> {
    await this.poweroff();
    rmSync(this.root, { recursive: true, force: true });
  }
}
