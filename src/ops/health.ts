// Liveness and readiness of the gateway, with reasons (pure: takes the views, returns the verdict).
import type { MeterStatus } from '../domain.js';
import type { LivenessReport } from './liveness.js';
import type { ClockView, PriceCoverageView, UplinkView } from './probes.js';

export interface HealthInputs {
  readonly nowMs: number;
  readonly liveness: LivenessReport;
  readonly meters: readonly MeterStatus[] | null;
  readonly uplink: UplinkView | null;
  readonly clock: ClockView | null;
  readonly prices: readonly PriceCoverageView[] | null;
  /** The outbox is "backed up" when its oldest message is older than this. */
  readonly maxOutboxAgeMs: number;
}

export type ComponentState = 'ok' | 'degraded' | 'down' | 'disabled';

export interface ComponentHealth {
  readonly state: ComponentState;
  readonly detail: string;
}

export interface Health {
  readonly status: 'ok' | 'degraded' | 'down';
  /** The process works: every loop ticks. False means systemd's watchdog will restart it. */
  readonly live: boolean;
  /** The gateway does its job: meters answer, the broker takes messages, the clock is trusted, prices are there. */
  readonly ready: boolean;
  readonly reasons: readonly string[];
  readonly components: Readonly<Record<'loops' | 'meters' | 'broker' | 'clock' | 'prices', ComponentHealth>>;
}

function loops(l: LivenessReport): ComponentHealth {
  if (l.stale.length > 0) return { state: 'down', detail: l.stale.map((s) => `${s.loop} loop silent for ${Math.round(s.silentForMs / 1000)} s`).join('; ') };
  if (l.loops.length === 0) return { state: 'ok', detail: 'no loops registered' };
  return { state: 'ok', detail: `${l.loops.map((x) => x.loop).join(', ')} ticking` };
}

function meters(list: readonly MeterStatus[] | null): ComponentHealth {
  if (list === null) return { state: 'disabled', detail: 'meter polling not running' };
  if (list.length === 0) return { state: 'disabled', detail: 'no meters configured' };
  const offline = list.filter((m) => m.state === 'offline');
  const online = list.filter((m) => m.state === 'online');
  if (online.length === 0 && offline.length === 0) return { state: 'degraded', detail: `${list.length} meter(s) not polled yet` };
  if (offline.length === list.length) return { state: 'down', detail: `all ${list.length} meter(s) offline` };
  if (offline.length > 0) return { state: 'degraded', detail: `${offline.length} of ${list.length} meter(s) offline: ${offline.map((m) => `${m.bus}/${m.unitId}`).join(', ')}` };
  return { state: 'ok', detail: `${online.length} meter(s) online` };
}

function broker(u: UplinkView | null, maxAgeMs: number): ComponentHealth {
  if (u === null || u.state === 'disabled') return { state: 'disabled', detail: 'no broker configured' };
  const backlog = u.outboxDepth > 0 ? `, ${u.outboxDepth} message(s) waiting${u.oldestAgeMs !== null ? `, oldest ${Math.round(u.oldestAgeMs / 1000)} s` : ''}` : '';
  if (u.state !== 'connected') return { state: 'down', detail: `broker ${u.state}${u.lastError ? ` (${u.lastError})` : ''}${backlog}` };
  if (u.oldestAgeMs !== null && u.oldestAgeMs > maxAgeMs) return { state: 'degraded', detail: `connected but backed up${backlog}` };
  return { state: 'ok', detail: `connected${backlog}` };
}

function clock(c: ClockView | null): ComponentHealth {
  if (c === null) return { state: 'disabled', detail: 'clock guard not running' };
  if (c.trusted) return { state: 'ok', detail: 'clock trusted' };
  // A plausible clock that is not confirmed yet (waiting for NTP) only delays readings,
  // which are held and re-stamped; an implausible one makes every timestamp wrong.
  return { state: c.plausible ? 'degraded' : 'down', detail: `clock not trusted: ${c.reason}; ${c.heldSamples} sample(s) held` };
}

function prices(list: readonly PriceCoverageView[] | null): ComponentHealth {
  if (list === null) return { state: 'disabled', detail: 'price sync not running' };
  if (list.length === 0) return { state: 'disabled', detail: 'no price regions configured' };
  const missing = list.filter((p) => !p.coversNow);
  if (missing.length === list.length) return { state: 'down', detail: `no current price for ${missing.map((p) => p.region).join(', ')}` };
  if (missing.length > 0) return { state: 'degraded', detail: `no current price for ${missing.map((p) => p.region).join(', ')}` };
  return { state: 'ok', detail: list.map((p) => `${p.region} until ${p.lastEndMs !== null ? new Date(p.lastEndMs).toISOString() : '-'}`).join(', ') };
}

export function assessHealth(input: HealthInputs): Health {
  const components = {
    loops: loops(input.liveness),
    meters: meters(input.meters),
    broker: broker(input.uplink, input.maxOutboxAgeMs),
    clock: clock(input.clock),
    prices: prices(input.prices),
  };
  const live = components.loops.state !== 'down';
  const notOk = Object.entries(components).filter(([, c]) => c.state === 'down' || c.state === 'degraded');
  const reasons = notOk.map(([name, c]) => `${name}: ${c.detail}`);
  // Not ready when a part that must work is down; a degraded part (one meter of several
  // offline, a backlog) is reported but does not take the gateway out of service.
  const ready = live && !notOk.some(([, c]) => c.state === 'down');
  return { status: !live || !ready ? 'down' : notOk.length > 0 ? 'degraded' : 'ok', live, ready, reasons, components };
}
