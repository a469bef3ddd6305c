// The lifecycle every long-lived part of the daemon shares (Module), and LazyModule.
import type { ModuleViews } from './ops/observability/views.js';

/**
 * Every long-lived part of the daemon is a Module: its constructor only stores what it
 * is given; start() acquires resources and begins work; stop() releases them. The
 * composition root (daemon.ts) starts modules in order and stops them in reverse. A module
 * that shows something of itself on /healthz, /metrics, the status page or network_scan
 * says so in `views` (read through Probes).
 */
export interface Module {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly views?: ModuleViews;
}

/**
 * A module whose code is imported only when it starts: `load` runs in start() (dynamic
 * `import()`), so a feature that is configured off never enters the daemon's memory.
 * `instance` is the loaded module once started (null before, and when `load` gives none).
 */
export class LazyModule<M extends Module = Module> implements Module {
  private loaded: M | null = null;

  constructor(
    readonly name: string,
    private readonly load: () => Promise<M | null>,
  ) {}

  get instance(): M | null {
    return this.loaded;
  }

  /** The loaded module's views (none before it has started). */
  get views(): ModuleViews | undefined {
    return this.loaded?.views;
  }

  async start(): Promise<void> {
    this.loaded = await this.load();
    await this.loaded?.start();
  }

  async stop(): Promise<void> {
    await this.loaded?.stop();
  }
}
