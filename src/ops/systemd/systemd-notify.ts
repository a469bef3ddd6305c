// sd_notify (READY, WATCHDOG, STOPPING, STATUS) through systemd-notify(1).
import { execFile } from 'node:child_process';
import type { Logger } from '../../log.js';

/**
 * The sd_notify protocol (READY=1, WATCHDOG=1, STOPPING=1, STATUS=...) from Node.
 *
 * Node has no unix datagram sockets, and the npm bindings need a native build (a
 * liability on arm64 gateways), so we spawn systemd-notify(1). Two consequences:
 * - the sender is a child of the main process, so the unit needs NotifyAccess=all
 *   (https://github.com/systemd/systemd/issues/24516);
 * - a short-lived sender can exit before systemd reads its message, and systemd then
 *   cannot attribute it to the unit (https://github.com/systemd/systemd/issues/2737).
 *   systemd-notify >= 246 closes that race itself: it follows each message with
 *   BARRIER=1 and waits until the manager has processed it. So we do not pass
 *   --no-block, and we give it a little longer than its own 5 s barrier timeout.
 */
export interface NotifierDeps {
  readonly logger: Logger;
  /** Defaults to process.env; NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID come from here. */
  readonly env?: NodeJS.ProcessEnv;
  /** Defaults to `systemd-notify` on PATH. */
  readonly command?: string;
  readonly timeoutMs?: number;
  readonly pid?: number;
}

export class SystemdNotifier {
  private queue: Promise<unknown> = Promise.resolve();
  private pendingPing = false;
  private readonly env: NodeJS.ProcessEnv;

  constructor(private readonly deps: NotifierDeps) {
    this.env = deps.env ?? process.env;
  }

  /** True when started by systemd with a notification socket (Type=notify). */
  get enabled(): boolean {
    return Boolean(this.env.NOTIFY_SOCKET);
  }

  /**
   * The watchdog interval systemd expects (WatchdogSec=), or null when the watchdog is
   * off or meant for another process (sd_watchdog_enabled semantics).
   */
  watchdogIntervalMs(): number | null {
    const usec = Number(this.env.WATCHDOG_USEC);
    if (!this.enabled || !Number.isFinite(usec) || usec <= 0) return null;
    const pid = this.env.WATCHDOG_PID;
    if (pid !== undefined && pid !== '' && Number(pid) !== (this.deps.pid ?? process.pid)) return null;
    return usec / 1000;
  }

  ready(status?: string): Promise<boolean> {
    return this.notify(status ? { READY: '1', STATUS: status } : { READY: '1' });
  }

  stopping(status = 'stopping'): Promise<boolean> {
    return this.notify({ STOPPING: '1', STATUS: status });
  }

  status(text: string): Promise<boolean> {
    return this.notify({ STATUS: text });
  }

  /** One watchdog ping; skipped (false) if the previous ping is still being delivered. */
  async watchdog(): Promise<boolean> {
    if (this.pendingPing) return false;
    this.pendingPing = true;
    try {
      return await this.notify({ WATCHDOG: '1' });
    } finally {
      this.pendingPing = false;
    }
  }

  /** Sends one message; resolves false (never rejects) when not under systemd or on failure. */
  notify(fields: Readonly<Record<string, string>>): Promise<boolean> {
    if (!this.enabled) return Promise.resolve(false);
    const args = Object.entries(fields).map(([k, v]) => `${k}=${v.replace(/\n/g, ' ')}`);
    // One systemd-notify at a time, so READY=1 cannot overtake STATUS= or STOPPING=1.
    const run = this.queue.then(() => this.spawn(args));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private spawn(args: string[]): Promise<boolean> {
    return new Promise((resolve) => {
      execFile(
        this.deps.command ?? 'systemd-notify',
        args,
        { env: this.env, timeout: this.deps.timeoutMs ?? 7000, windowsHide: true },
        (err, _stdout, stderr) => {
          if (err) {
            this.deps.logger.warn({ err: { message: err.message, code: (err as NodeJS.ErrnoException).code }, stderr: String(stderr).trim(), args }, 'systemd-notify failed');
            resolve(false);
          } else resolve(true);
        },
      );
    });
  }
}
