// The module that tells systemd the daemon is ready, alive and stopping.
import type { Module } from '../../lifecycle.js';
import type { Logger } from '../../log.js';
import type { Liveness } from './liveness.js';
import { SystemdNotifier } from './systemd-notify.js';

export interface WatchdogDeps {
  readonly logger: Logger;
  readonly liveness: Liveness;
  /** Injected in tests; defaults to one built from process.env. */
  readonly notifier?: SystemdNotifier;
}

/**
 * Talks to systemd for the daemon: READY=1 once every module has started (so this module
 * must be the last in buildModules), WATCHDOG=1 every WatchdogSec/2 but only while every
 * registered loop (meter polling, MQTT publishing) has ticked recently, STOPPING=1 first
 * thing on shutdown. A stalled loop therefore ends in a watchdog restart by systemd,
 * while a merely slow broker or a dead meter does not (the loops keep cycling then).
 */
export class SystemdWatchdog implements Module {
  readonly name = 'systemd';
  private timer: NodeJS.Timeout | undefined;
  private wasAlive = true;
  private readonly notifier: SystemdNotifier;

  constructor(private readonly deps: WatchdogDeps) {
    this.notifier = deps.notifier ?? new SystemdNotifier({ logger: deps.logger });
  }

  async start(): Promise<void> {
    if (!this.notifier.enabled) return;
    await this.notifier.ready('running');
    const intervalMs = this.notifier.watchdogIntervalMs();
    if (intervalMs !== null) {
      this.deps.logger.info({ watchdogMs: intervalMs }, 'systemd watchdog enabled');
      this.timer = setInterval(() => void this.ping(), Math.max(100, intervalMs / 2));
      this.timer.unref();
      void this.ping();
    }
  }

  /** One watchdog round: ping only if every loop is alive. Returns whether it pinged. */
  async ping(): Promise<boolean> {
    const report = this.deps.liveness.check();
    if (!report.alive) {
      if (this.wasAlive) {
        this.deps.logger.error({ stale: report.stale }, 'loop stalled: withholding systemd watchdog ping');
        void this.notifier.status(`stalled: ${report.stale.map((s) => s.loop).join(', ')}`);
      }
      this.wasAlive = false;
      return false;
    }
    if (!this.wasAlive) {
      this.deps.logger.warn('all loops alive again: resuming watchdog pings');
      void this.notifier.status('running');
    }
    this.wasAlive = true;
    return this.notifier.watchdog();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.notifier.enabled) await this.notifier.stopping();
  }
}
