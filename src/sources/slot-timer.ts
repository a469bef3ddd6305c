// The poll-slot timer every meter source runs: one timer per wall-clock slot (modbus/slots.ts
// nextSlot), re-armed after each fire until stopped.
import type { Clock } from '../clock.js';
import { nextSlot } from '../modbus/slots.js';

export class SlotTimer {
  private timer: NodeJS.Timeout | null = null;
  /** The slot the last timer fired for (see slots.ts). */
  private polledSlot: number | null = null;
  private running = false;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly onSlot: () => void,
  ) {}

  start(): void {
    this.running = true;
    this.arm();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (!this.running) return;
    const { slot, delayMs } = nextSlot(this.clock.now(), this.intervalMs, this.polledSlot);
    this.timer = setTimeout(() => {
      this.polledSlot = slot;
      this.onSlot();
      this.arm();
    }, delayMs);
  }
}
