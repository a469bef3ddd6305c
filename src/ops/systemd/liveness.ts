// Liveness of the daemon's long-running loops (feeds the systemd watchdog and /healthz).
/**
 * Liveness of the daemon's long-running loops (meter polling, MQTT publishing). Each
 * loop registers once with the longest silence that is still healthy and ticks every
 * time it completes a cycle; the systemd watchdog is fed only while no registered loop
 * has been silent for longer than that. Time is monotonic, so a wall-clock step (NTP
 * sync on a gateway without RTC) cannot fake or hide a stall.
 */
export interface LoopHandle {
  /** Call once per completed cycle of the loop. */
  tick(): void;
  /** Stop watching this loop (on module stop). */
  unregister(): void;
}

export interface StaleLoop {
  readonly loop: string;
  readonly silentForMs: number;
  readonly maxSilenceMs: number;
}

export interface LivenessReport {
  readonly alive: boolean;
  readonly loops: ReadonlyArray<{ readonly loop: string; readonly silentForMs: number; readonly maxSilenceMs: number }>;
  readonly stale: readonly StaleLoop[];
}

export const monotonicNowMs = (): number => performance.now();

export class Liveness {
  private readonly loops = new Map<string, { lastTickMs: number; maxSilenceMs: number }>();

  constructor(private readonly monotonicMs: () => number = monotonicNowMs) {}

  /** Registers (or re-registers) a loop; counts as a tick. */
  register(loop: string, maxSilenceMs: number): LoopHandle {
    if (!(maxSilenceMs > 0)) throw new RangeError(`maxSilenceMs must be > 0 (loop ${loop})`);
    this.loops.set(loop, { lastTickMs: this.monotonicMs(), maxSilenceMs });
    return {
      tick: () => this.tick(loop),
      unregister: () => {
        this.loops.delete(loop);
      },
    };
  }

  tick(loop: string): void {
    const entry = this.loops.get(loop);
    if (entry) entry.lastTickMs = this.monotonicMs();
  }

  check(): LivenessReport {
    const now = this.monotonicMs();
    const loops = [...this.loops].map(([loop, e]) => ({ loop, silentForMs: Math.max(0, now - e.lastTickMs), maxSilenceMs: e.maxSilenceMs }));
    const stale = loops.filter((l) => l.silentForMs > l.maxSilenceMs);
    return { alive: stale.length === 0, loops, stale };
  }
}
