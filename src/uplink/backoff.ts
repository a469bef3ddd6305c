// Delays before trying again (pure).
export interface BackoffPolicy {
  readonly minMs: number;
  readonly maxMs: number;
}

/**
 * "Full jitter" above min: random in [min, min(max, min * 2^attempt)] (the publisher's
 * pauses after refusals). `random` is in [0, 1).
 */
export function reconnectDelayMs(policy: BackoffPolicy, attempt: number, random: number): number {
  const ceiling = Math.min(policy.maxMs, policy.minMs * 2 ** Math.min(attempt, 30));
  return Math.round(policy.minMs + random * Math.max(0, ceiling - policy.minMs));
}

/**
 * A connection that lasted this long resets the connect backoff; one that the broker closed
 * sooner (a refusal close, a session taken over) counts as a failed attempt, so a broker
 * that accepts and drops at once cannot pull a gateway into a CONNECT loop.
 */
export const STABLE_CONNECTION_MS = 10_000;

/**
 * Delay before connect attempt number `attempt` (0 = the first after a loss). mqtt.js's
 * reconnectPeriod is a fixed interval, so a fleet would hit a restarted broker in lockstep
 * (scripts/bench/reconnect-storm.ts measures it). "Equal jitter": a random time in
 * [c/2, c] with c = min(max, 2 * min * 2^attempt), so
 * - gateways that lost the same broker at the same moment never retry together, and the
 *   spread widens every round: the fleet's CONNECT rate falls like N / (c/2);
 * - one gateway's attempts are at least min, 2 min, 4 min, ... apart: with min = 1 s at
 *   most 7 CONNECTs in any minute (the first included), under EMQX's flapping detection (15 per client id a
 *   minute; docs/uplink.md "Reconnecting"); at max = 60 s, one every 30-60 s.
 */
export function connectDelayMs(policy: BackoffPolicy, attempt: number, random: number): number {
  const ceiling = Math.max(policy.minMs, Math.min(policy.maxMs, 2 * policy.minMs * 2 ** Math.min(attempt, 30)));
  const floor = Math.max(policy.minMs, ceiling / 2);
  return Math.round(floor + random * Math.max(0, ceiling - floor));
}
