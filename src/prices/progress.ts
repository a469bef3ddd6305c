// Backfill progress: a redrawn bar on a terminal, log lines otherwise.
import type { Logger } from '../log.js';

export interface ProgressSink {
  start(total: number, what: string): void;
  /** One more chunk handled; `label` names it, `fetched` = it needed a request. */
  advance(label: string, detail: { periods: number; fetched: boolean }): void;
  finish(summary: string): void;
}

/** Bar on a TTY stream (stderr by default), redrawn in place. */
export class TerminalProgress implements ProgressSink {
  private total = 0;
  private done = 0;
  private what = '';
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  start(total: number, what: string): void {
    this.total = total;
    this.done = 0;
    this.what = what;
    this.draw('');
  }

  advance(label: string): void {
    this.done++;
    this.draw(label);
  }

  finish(summary: string): void {
    this.stream.write(`\r\x1b[2K${summary}\n`);
  }

  private draw(label: string): void {
    const width = 30;
    const ratio = this.total === 0 ? 1 : this.done / this.total;
    const filled = Math.round(ratio * width);
    this.stream.write(`\r\x1b[2K${this.what} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${this.done}/${this.total} ${Math.round(ratio * 100)}% ${label}`);
  }
}

/** One log line per chunk, for journald and pipes. */
export class LogProgress implements ProgressSink {
  private total = 0;
  private done = 0;
  private what = '';
  constructor(private readonly logger: Logger) {}

  start(total: number, what: string): void {
    this.total = total;
    this.done = 0;
    this.what = what;
    this.logger.info({ chunks: total }, `${what}: starting`);
  }

  advance(label: string, detail: { periods: number; fetched: boolean }): void {
    this.done++;
    this.logger.info({ chunk: label, done: this.done, total: this.total, periods: detail.periods, fetched: detail.fetched }, `${this.what}: ${this.done}/${this.total}`);
  }

  finish(summary: string): void {
    this.logger.info(summary);
  }
}

export const silentProgress: ProgressSink = { start() {}, advance() {}, finish() {} };

export function progressFor(logger: Logger, stream: NodeJS.WriteStream = process.stderr): ProgressSink {
  return stream.isTTY ? new TerminalProgress(stream) : new LogProgress(logger);
}
