// Reconnect delays (pure). mqtt.js's reconnectPeriod is a fixed interval, so a fleet of
// gateways would hit a restarted broker in lockstep; "full jitter" spreads them out:
// delay = random in [min, min(max, min * 2^attempt)].
export interface BackoffPolicy {
  readonly minMs: number;
  readonly maxMs: number;
}

/** Delay before reconnect attempt number `attempt` (0 = first retry after a loss). `random` is in [0, 1). */
export function reconnectDelayMs(policy: BackoffPolicy, attempt: number, random: number): number {
  const ceiling = Math.min(policy.maxMs, policy.minMs * 2 ** Math.min(attempt, 30));
  return Math.round(policy.minMs + random * Math.max(0, ceiling - policy.minMs));
}
