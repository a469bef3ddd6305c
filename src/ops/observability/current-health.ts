// The gateway's health now, read from the modules' live views (Probes) and judged by the
// one rule in health.ts. /healthz, /healthz/live, /healthz/ready and /status.json all ask here.
import { assessHealth, combineHealth, LIVENESS_COMPONENT, loopsHealth, type Health } from './health.js';
import type { ComponentHealth } from './views.js';
import type { Liveness } from '../systemd/liveness.js';
import type { Probes } from './probes.js';

/** A backlog older than this marks the broker "degraded" while connected (a few minutes of slack). */
export const MAX_OUTBOX_AGE_MS = 5 * 60_000;

export interface CurrentHealthDeps {
  readonly probes: Probes;
  readonly liveness: Liveness;
  readonly clock: { now(): number };
}

/** One read of every module view, each guarded: what /healthz and /status.json judge and show. */
export interface ViewSnapshot {
  readonly meters: ReturnType<NonNullable<Probes['meters']>> | null;
  readonly uplink: ReturnType<NonNullable<Probes['uplink']>> | null;
  readonly clock: ReturnType<NonNullable<Probes['clock']>> | null;
  readonly prices: ReturnType<NonNullable<Probes['prices']>> | null;
  /** Health contributed by modules, plus a degraded entry for each view that threw. */
  readonly contributed: Record<string, ComponentHealth>;
}

export function readViews(p: Probes): ViewSnapshot {
  // A view that throws (a database error under outbox.stats()) makes its component
  // degraded with the error, instead of taking /healthz down with it.
  const unreadable: Record<string, ComponentHealth> = {};
  const read = <T>(component: string, view: (() => T) | null): T | null => {
    if (!view) return null;
    try {
      return view();
    } catch (err) {
      unreadable[component] = { status: 'degraded', reason: `cannot be assessed: ${err instanceof Error ? err.message : String(err)}` };
      return null;
    }
  };
  const meters = read('meters', p.meters);
  const uplink = read('broker', p.uplink);
  const clock = read('clock', p.clock);
  const prices = read('prices', p.prices);
  const contributed: Record<string, ComponentHealth> = {};
  for (const [name, contributor] of p.health) {
    const c = read(name, contributor);
    if (c) contributed[name] = c;
  }
  return { meters, uplink, clock, prices, contributed: { ...contributed, ...unreadable } };
}

/** Health judged from views already read (so a caller that also shows them reads them once). */
export function healthOf(views: ViewSnapshot, deps: Omit<CurrentHealthDeps, 'probes'>, opts: { redactForLan?: boolean } = {}): Health {
  return assessHealth({
    redactForLan: opts.redactForLan,
    nowMs: deps.clock.now(),
    liveness: deps.liveness.check(),
    meters: views.meters,
    uplink: views.uplink,
    clock: views.clock,
    prices: views.prices,
    maxOutboxAgeMs: MAX_OUTBOX_AGE_MS,
    contributed: views.contributed,
  });
}

/** `redactForLan`: for a client the operational routes would refuse (health.ts HealthInputs). */
export function currentHealth(deps: CurrentHealthDeps, opts: { redactForLan?: boolean } = {}): Health {
  return healthOf(readViews(deps.probes), deps, opts);
}

/** Liveness alone: reads no module view (no database), so it answers while the process works. */
export function currentLiveness(deps: Pick<CurrentHealthDeps, 'liveness'>): Health {
  return combineHealth({ [LIVENESS_COMPONENT]: loopsHealth(deps.liveness.check()) });
}
