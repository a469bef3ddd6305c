import { afterEach } from 'vitest';
import { removeDir, type PtyPair } from './socat.js';

export type Cleanup = () => Promise<void> | void;

/**
 * Undo steps run after each test, last added first (subscribers before brokers, simulators
 * before their ptys), so a failing test leaves no process or temp dir behind.
 */
export function cleanupsAfterEach() {
  const steps: Cleanup[] = [];
  afterEach(async () => {
    while (steps.length) await steps.pop()!();
  });
  return {
    push(step: Cleanup): void {
      steps.push(step);
    },
    /** Stops `x` after the test; returns it. */
    track<T extends { stop(): Promise<void> }>(x: T): T {
      steps.push(() => x.stop());
      return x;
    },
    /** Stops the pty pair and removes its directory after the test; returns it. */
    trackPair(pair: PtyPair): PtyPair {
      steps.push(async () => {
        await pair.stop();
        removeDir(pair.dir);
      });
      return pair;
    },
  };
}
