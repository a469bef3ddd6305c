// A full garbage collection between the steps of a long computation (the forecaster's cold
// training), when the daemon runs with --expose-gc (the unit's ExecStart) and the heap plus
// external memory (typed arrays) grew by `growthBytes` since the last one. Between V8's own
// collections a training's short-lived arrays pile up and set the daemon's peak RSS
// (docs/architecture.md, Memory); a collection at every step cost +45 % CPU, one per few
// MB of growth keeps the peak as low for a fraction of that. Without the flag it does nothing.
import { getHeapStatistics } from 'node:v8';

export interface GarbageBetweenSteps {
  /** Call between two steps; collects if the memory grew enough since the last collection. */
  step(): void;
}

interface Deps {
  readonly gc: (() => void) | undefined;
  readonly liveBytes: () => number;
}

const exposedGc = (globalThis as { gc?: () => void }).gc;
const heapAndExternalBytes = (): number => {
  const s = getHeapStatistics();
  return s.used_heap_size + s.external_memory;
};

export function garbageBetweenSteps(growthBytes: number, deps: Deps = { gc: exposedGc, liveBytes: heapAndExternalBytes }): GarbageBetweenSteps {
  const { gc, liveBytes } = deps;
  if (gc === undefined) return { step: () => undefined };
  let afterLast = liveBytes();
  return {
    step() {
      if (liveBytes() - afterLast < growthBytes) return;
      gc();
      afterLast = liveBytes();
    },
  };
}
