// The process's last line of defence (docs/architecture.md "Faults that end the process").
// Every socket, upgrade handler and async path started from outside handles its own
// errors where they happen; what still escapes lands here.
//
// - A promise rejection nobody handled: logged with its stack, counted
//   (metergate_unhandled_rejections_total) and the daemon keeps running. Whoever started
//   the promise has already moved on; what it touched is as the throw left it, and a
//   gateway that exits takes metering, the uplink, the API and every charger down with it
//   (Node's default since v15 is to exit).
// - An exception thrown synchronously to the top of the event loop: logged with its stack,
//   counted, and the daemon stops cleanly and exits 70 (EX_SOFTWARE) for systemd to
//   restart it. Such a throw unwound through code that did not expect to be left half-way
//   (an emitter's later listeners never ran, a parser's state is mid-frame); Node's own
//   documentation says resuming after it is not safe, and a restart is the recovery known
//   to be correct.
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../log.js';

/** Exit code after an uncaught exception (sysexits EX_SOFTWARE); systemd restarts on it. */
export const UNCAUGHT_EXIT_CODE = 70;
/** At most this many rejections a minute are logged with their stack; the rest are counted and summed up. */
const LOGGED_PER_MINUTE = 10;

export interface ProcessFaultDeps {
  readonly logger: Logger;
  readonly metrics: Registry;
  /** Stops the daemon cleanly (store queue flushed, database closed); bounded by `stopTimeoutMs`. */
  readonly stop: () => Promise<void>;
  readonly stopTimeoutMs?: number;
  /** Defaults to process.exit (tests replace it). */
  readonly exit?: (code: number) => void;
}

export interface ProcessFaultHandlers {
  /** Removes the handlers again (tests, or a daemon built twice in one process). */
  uninstall(): void;
}

export function installProcessFaultHandlers(deps: ProcessFaultDeps): ProcessFaultHandlers {
  const { logger, metrics } = deps;
  const exit = deps.exit ?? ((code: number) => process.exit(code));
  const rejections =
    (metrics.getSingleMetric('metergate_unhandled_rejections_total') as Counter | undefined) ??
    new Counter({ name: 'metergate_unhandled_rejections_total', help: 'Promise rejections no code handled: logged with their stack; the daemon kept running', registers: [metrics] });
  const uncaught =
    (metrics.getSingleMetric('metergate_uncaught_exceptions_total') as Counter | undefined) ??
    new Counter({ name: 'metergate_uncaught_exceptions_total', help: 'Exceptions thrown to the top of the event loop (the daemon stops and exits 70 for systemd to restart it)', registers: [metrics] });
  rejections.inc(0);
  uncaught.inc(0);

  let windowStartMs = Date.now();
  let loggedInWindow = 0;
  let suppressedInWindow = 0;
  const onRejection = (reason: unknown) => {
    rejections.inc();
    const nowMs = Date.now();
    if (nowMs - windowStartMs >= 60_000) {
      if (suppressedInWindow > 0) logger.error({ suppressed: suppressedInWindow }, 'more unhandled promise rejections in the last minute, counted but not logged one by one');
      windowStartMs = nowMs;
      loggedInWindow = 0;
      suppressedInWindow = 0;
    }
    if (loggedInWindow >= LOGGED_PER_MINUTE) {
      suppressedInWindow += 1;
      return;
    }
    loggedInWindow += 1;
    logger.error({ err: asError(reason) }, 'unhandled promise rejection (a bug: the code that started it should handle it); the daemon keeps running');
  };

  let exiting = false;
  const onException = (err: Error) => {
    uncaught.inc();
    logger.fatal({ err }, `uncaught exception: stopping and exiting ${UNCAUGHT_EXIT_CODE} for systemd to restart the daemon`);
    if (exiting) return;
    exiting = true;
    const timer = setTimeout(() => exit(UNCAUGHT_EXIT_CODE), deps.stopTimeoutMs ?? 10_000);
    timer.unref();
    deps.stop().then(
      () => exit(UNCAUGHT_EXIT_CODE),
      () => exit(UNCAUGHT_EXIT_CODE),
    );
  };

  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return {
    uninstall() {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
    },
  };
}

/** pino serialises an Error with its stack; anything else thrown is wrapped so it is shown. */
function asError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  let text: string;
  try {
    text = typeof reason === 'string' ? reason : (JSON.stringify(reason) ?? String(reason));
  } catch {
    text = Object.prototype.toString.call(reason);
  }
  return new Error(`non-Error rejection: ${text.slice(0, 500)}`);
}
