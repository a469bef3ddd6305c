// The refusals of a charger that count now (docs/chargers.md "Chargers that say no"): what
// the store kept, judged by the back-off window of charging-strategy.ts refusalsInForce
// against the charger's last boot and firmware. One reading for the dispatcher, the plan's
// GET and the operator's remote start, so all three say the same.
import type { Config } from '../config/types.js';
import type { ChargingStrategyStore } from '../store/charging-strategies.js';
import { DEFAULT_REFUSAL_RETRY_H, refusalsInForce, type Refusal } from './charging-strategy.js';

/** ocpp.refusal_retry_h in ms. */
export function refusalRetryMs(config: Pick<Config, 'ocpp'>): number {
  return (config.ocpp.refusal_retry_h ?? DEFAULT_REFUSAL_RETRY_H) * 3_600_000;
}

/**
 * The charger's stored refusals that count at `nowMs`, and `learnt` ones (refused in the
 * exchange going on, perhaps not stored yet: they always count).
 */
export function chargerRefusalsInForce(strategies: ChargingStrategyStore, chargePointId: string, nowMs: number, retryAfterMs: number, learnt: readonly Refusal[] = []): Refusal[] {
  return [...refusalsInForce(strategies.refusals(chargePointId), { ...strategies.lastBoot(chargePointId), nowMs, retryAfterMs }), ...learnt];
}
