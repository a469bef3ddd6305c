// Pure: is a charger's clock off, judged from the timestamps it sends (issue 20 point 7).
// A charger stamps what it measured with its own clock; its sessions are priced by those
// stamps, so a clock off by more than clock.step_tolerance_s puts energy in the wrong price
// periods. Both directions count:
// - ahead: a stamp later than the gateway's now can never be right (nothing is sent from
//   the future), so one message says it;
// - behind: an old stamp is legitimate for a message the charger queued while offline, so
//   one message says nothing. Queued messages drain in a burst: their stamps run ahead of
//   their arrivals. Messages sent live arrive as they are stamped: the offset (stamp -
//   arrival) stays the same. So the clock is behind when two stamped messages received at
//   least LIVE_SPAN_MS apart on the same connection are both behind by more than the
//   tolerance and their offsets agree within OFFSET_AGREEMENT_MS.
// Whole-hour offsets are named: a charger stamping its local time as UTC ('Z').

/** One stamped message as received. */
export interface ClockSample {
  readonly receivedAtMs: number;
  readonly stampedAtMs: number;
}

export type ClockVerdict =
  /** The stamp is within the tolerance of the gateway's clock. */
  | { readonly kind: 'in-step' }
  /** Behind, but possibly a queued message: nothing said yet. */
  | { readonly kind: 'undecided' }
  | { readonly kind: 'off'; readonly offsetMs: number; readonly problem: string };

export const LIVE_SPAN_MS = 10_000;
export const OFFSET_AGREEMENT_MS = 5_000;

const HOUR_MS = 3_600_000;

/** k when the offset is k whole hours (1..14) within the tolerance, else null. */
export function wholeHours(offsetMs: number, toleranceMs: number): number | null {
  const k = Math.round(offsetMs / HOUR_MS);
  if (k === 0 || Math.abs(k) > 14) return null;
  return Math.abs(offsetMs - k * HOUR_MS) <= toleranceMs ? k : null;
}

/** What a charger clock off by `offsetMs` (stamp - gateway time) is, in words. */
export function clockProblem(offsetMs: number, toleranceMs: number): string {
  const k = wholeHours(offsetMs, toleranceMs);
  const s = Math.round(Math.abs(offsetMs) / 1000);
  const direction = offsetMs > 0 ? 'ahead of' : 'behind';
  if (k !== null) return `local time sent as UTC: the charger's clock was ${Math.abs(k)} h ${direction} the gateway's (a charger at UTC${k > 0 ? '+' : '-'}${Math.abs(k)} stamping its local time with Z)`;
  return `the charger's clock was ${s} s ${direction} the gateway's (more than clock.step_tolerance_s ${Math.round(toleranceMs / 1000)} s)`;
}

/**
 * The verdict on a new stamped message, given the anchor: the first message of the current
 * run of messages behind by one offset, on this connection (null after a reconnect: a new
 * connection starts with its queue). Returns the anchor to keep for the next message.
 */
export function judgeChargerClock(anchor: ClockSample | null, current: ClockSample, toleranceMs: number): { verdict: ClockVerdict; anchor: ClockSample | null } {
  const offsetMs = current.stampedAtMs - current.receivedAtMs;
  if (offsetMs > toleranceMs) return { verdict: { kind: 'off', offsetMs, problem: clockProblem(offsetMs, toleranceMs) }, anchor: null };
  if (offsetMs >= -toleranceMs) return { verdict: { kind: 'in-step' }, anchor: null };
  const anchorOffsetMs = anchor === null ? null : anchor.stampedAtMs - anchor.receivedAtMs;
  // Another offset than the anchor's: a queue draining (or the clock set): this message starts a new run.
  if (anchor === null || anchorOffsetMs === null || Math.abs(anchorOffsetMs - offsetMs) > OFFSET_AGREEMENT_MS) return { verdict: { kind: 'undecided' }, anchor: current };
  if (current.receivedAtMs - anchor.receivedAtMs < LIVE_SPAN_MS) return { verdict: { kind: 'undecided' }, anchor };
  return { verdict: { kind: 'off', offsetMs, problem: clockProblem(offsetMs, toleranceMs) }, anchor };
}
