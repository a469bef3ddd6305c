// The seam to clock safety (src/ops/clock/clock-guard.ts): the uplink asks it for "now" before
// stamping a message of its own, and whether a stored message's timestamp may leave.
import type { Clock } from '../clock.js';
import type { LeaveVerdict } from './publisher.js';

export interface ClockGate {
  /** The current time if it may go into a message, else null (clock not trusted yet). */
  trustedNow(): number | null;
}

/** A gate that trusts the system clock: for tools and tests without the clock guard. */
export const trustingGate = (clock: Clock): ClockGate => ({ trustedNow: () => clock.now() });

/** Default of clock.step_tolerance_s: messages stamped more than this ahead of the trusted now cannot be placed. */
export const DEFAULT_AHEAD_TOLERANCE_MS = 60_000;

/**
 * Whether a stored message stamped `stampedAtMs` may leave now: it waits while the clock
 * is not trusted; it is quarantined (kept in outbox_held, never deleted for its time) when
 * it is ahead of the trusted now (stamped before the clock stepped back) or not a time at all. Old is fine: a backlog may span weeks, and a software update with a
 * later build date must not throw it away (the clock guard checked each sample against
 * the build date of the software that stored it). `buildDateMs` bounds only the absurd.
 */
export function leaveVerdict(gate: ClockGate, buildDateMs: number, stampedAtMs: number, aheadToleranceMs = DEFAULT_AHEAD_TOLERANCE_MS): LeaveVerdict {
  if (!Number.isFinite(stampedAtMs) || stampedAtMs < buildDateMs - 20 * 366 * 86_400_000) return 'quarantine';
  const now = gate.trustedNow();
  if (now === null) return 'hold';
  return stampedAtMs > now + aheadToleranceMs ? 'quarantine' : 'send';
}
