/**
 * Every long-lived part of the daemon is a Module: its constructor only stores what it
 * is given; start() acquires resources and begins work; stop() releases them. The
 * composition root (daemon.ts) starts modules in order and stops them in reverse.
 */
export interface Module {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
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

  async start(): Promise<void> {
    this.loaded = await this.load();
    await this.loaded?.start();
  }

  async stop(): Promise<void> {
    await this.loaded?.stop();
  }
}
