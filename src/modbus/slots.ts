// Poll slots on the wall clock (pure): slot n starts at n × interval ms since the epoch
// (…:00, :10, :20 for 10 s). The poller arms one timer per slot and polls when it fires.

export interface NextSlot {
  /** The slot the timer is armed for. */
  readonly slot: number;
  /** Time until that slot starts; > 0, at most two intervals. */
  readonly delayMs: number;
}

/** The slot whose interval contains `nowMs`. */
export function slotAt(nowMs: number, intervalMs: number): number {
  return Math.floor(nowMs / intervalMs);
}

/**
 * The next slot to arm a timer for, after `polledSlot` (the slot just polled, null before the
 * first): the first slot that starts after `nowMs`, but never `polledSlot` again.
 *
 * Timers run on the monotonic clock and `nowMs` is the wall clock: a timer armed for a slot
 * can fire a little before the slot starts on the wall clock (libuv truncates its loop time to
 * whole milliseconds; NTP slews the wall clock). Computed from `nowMs` alone, such a fire would
 * arm a second timer for the very slot it just polled. A fire late by any amount polls once
 * and the slots it overslept are skipped, not caught up in a burst. A wall clock stepped back
 * by more than an interval realigns to the new time.
 */
export function nextSlot(nowMs: number, intervalMs: number, polledSlot: number | null): NextSlot {
  let slot = slotAt(nowMs, intervalMs) + 1;
  if (polledSlot !== null && slot === polledSlot) slot = polledSlot + 1; // fired early
  return { slot, delayMs: slot * intervalMs - nowMs };
}
