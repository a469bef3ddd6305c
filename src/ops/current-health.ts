// The gateway's health now, read from the modules' live views (Probes) and judged by the
// one rule in health.ts. /healthz, /healthz/live, /healthz/ready and /status.json all ask here.
import { assessHealth, type ComponentHealth, type Health } from './health.js';
import type { Liveness } from './liveness.js';
import type { Probes } from './probes.js';

/** A backlog older than this marks the broker "degraded" while connected (a few minutes of slack). */
export const MAX_OUTBOX_AGE_MS = 5 * 60_000;

export interface CurrentHealthDeps {
  readonly probes: Probes;
  readonly liveness: Liveness;
  readonly clock: { now(): number };
}

export function currentHealth(deps: CurrentHealthDeps): Health {
  const p = deps.probes;
  const contributed: Record<string, ComponentHealth> = {};
  for (const [name, contributor] of p.health) {
    try {
      contributed[name] = contributor();
    } catch (err) {
      // A broken health view must not take /healthz down with it; it is reported instead.
      contributed[name] = { status: 'degraded', reason: `health not assessable: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
  return assessHealth({
    nowMs: deps.clock.now(),
    liveness: deps.liveness.check(),
    meters: p.meters?.() ?? null,
    uplink: p.uplink?.() ?? null,
    clock: p.clock?.() ?? null,
    prices: p.prices?.() ?? null,
    maxOutboxAgeMs: MAX_OUTBOX_AGE_MS,
    contributed,
  });
}
