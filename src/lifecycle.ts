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
