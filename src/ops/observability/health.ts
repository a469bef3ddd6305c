// Health of the gateway (pure: takes plain views, returns the verdict). Every component
// says ok, degraded or down with a reason; combineHealth is the one rule that turns them
// into status, live and ready, and healthHttpStatus the one place that maps those to HTTP
// codes. The rule and what each component reports: docs/http-api.md#health.
import type { MeterStatus } from '../../domain.js';
import type { LivenessReport } from '../systemd/liveness.js';
import type { ClockView, ComponentHealth, HealthStatus, PriceCoverageView, UplinkView } from './views.js';

/** The component whose `down` means the process no longer works (a loop is stuck). */
export const LIVENESS_COMPONENT = 'loops';

export interface HealthInputs {
  readonly nowMs: number;
  readonly liveness: LivenessReport;
  readonly meters: readonly MeterStatus[] | null;
  readonly uplink: UplinkView | null;
  readonly clock: ClockView | null;
  readonly prices: readonly PriceCoverageView[] | null;
  /** The outbox is "backed up" when its oldest message is older than this. */
  readonly maxOutboxAgeMs: number;
  /** Components contributed by other modules (name → verdict), combined by the same rule. */
  readonly contributed?: Readonly<Record<string, ComponentHealth>>;
  /**
   * For a client /status would not answer (beyond the gateway, docs/http-api.md): reasons
   * without the broker's host and last error and without held topics (they name
   * organization and resource ids). The verdicts are the same.
   */
  readonly redactForLan?: boolean;
}

export interface Health {
  readonly status: HealthStatus;
  /** The process works: every loop ticks. False means systemd's watchdog will restart it. */
  readonly live: boolean;
  /** No component is down: the gateway does its job (possibly degraded). */
  readonly ready: boolean;
  /** `component: reason` for every component not ok, the down ones first. */
  readonly reasons: readonly string[];
  readonly components: Readonly<Record<string, ComponentHealth>>;
}

/**
 * The rule: status is the worst component status (disabled counts as ok); ready means no
 * component is down; live means the loops component is not down. So a stuck loop is
 * neither live nor ready, and a degraded component never takes the gateway out of service.
 */
export function combineHealth(components: Readonly<Record<string, ComponentHealth>>): Health {
  const entries = Object.entries(components);
  const down = entries.filter(([, c]) => c.status === 'down');
  const degraded = entries.filter(([, c]) => c.status === 'degraded');
  const status: HealthStatus = down.length > 0 ? 'down' : degraded.length > 0 ? 'degraded' : 'ok';
  return {
    status,
    live: components[LIVENESS_COMPONENT]?.status !== 'down',
    ready: down.length === 0,
    reasons: [...down, ...degraded].map(([name, c]) => `${name}: ${c.reason}`),
    components,
  };
}

/** HTTP code of /healthz and /healthz/ready (503 only when down) and of /healthz/live. */
export function healthHttpStatus(h: Health, probe: 'combined' | 'ready' | 'live'): 200 | 503 {
  if (probe === 'live') return h.live ? 200 : 503;
  return h.ready ? 200 : 503;
}

/** The loops component: down when a poll or publish loop is silent past its limit. */
export function loopsHealth(l: LivenessReport): ComponentHealth {
  if (l.stale.length > 0) return { status: 'down', reason: l.stale.map((s) => `${s.loop} loop silent for ${Math.round(s.silentForMs / 1000)} s`).join('; ') };
  if (l.loops.length === 0) return { status: 'ok', reason: 'no loops registered' };
  return { status: 'ok', reason: `${l.loops.map((x) => x.loop).join(', ')} ticking` };
}

function meters(list: readonly MeterStatus[] | null): ComponentHealth {
  if (list === null) return { status: 'disabled', reason: 'meter polling not running' };
  if (list.length === 0) return { status: 'disabled', reason: 'no meters configured' };
  const offline = list.filter((m) => m.state === 'offline');
  const online = list.filter((m) => m.state === 'online');
  if (online.length === 0 && offline.length === 0) return { status: 'degraded', reason: `${list.length} meter(s) not polled yet` };
  // Nothing is measured at all: the gateway's first job has stopped.
  // A source that knows why a meter gives nothing (P1) says so with the fix, one line each.
  const why = (m: MeterStatus) => (m.problem ? ` (${m.problem})` : '');
  if (offline.length === list.length) return { status: 'down', reason: `all ${list.length} meter(s) offline${offline.length === 1 ? why(offline[0]) : ''}` };
  if (offline.length > 0) return { status: 'degraded', reason: `${offline.length} of ${list.length} meter(s) offline: ${offline.map((m) => `${m.bus}/${m.unitId}${why(m)}`).join(', ')}` };
  const noted = online.filter((m) => m.problem);
  if (noted.length > 0) return { status: 'degraded', reason: `${online.length} meter(s) online; ${noted.map((m) => `${m.bus}/${m.unitId}${why(m)}`).join(', ')}` };
  return { status: 'ok', reason: `${online.length} meter(s) online` };
}

/**
 * With several broker nodes: which one (n of m, and its URL off the LAN) and which failed
 * last and why. A failed node alone does not make the broker degraded: the gateway is on
 * another one and loses nothing; it is named so someone looks.
 */
function nodesLine(u: UplinkView, redactForLan: boolean): string {
  const nodes = u.nodes ?? [];
  if (nodes.length < 2) return '';
  const at = nodes.findIndex((n) => n.state === 'current');
  const failed = nodes.map((n, i) => ({ n, i })).filter(({ n }) => n.state === 'failed');
  const on = at < 0 ? '' : ` ${u.state === 'connected' ? 'on' : 'trying'} node ${at + 1} of ${nodes.length}${redactForLan ? '' : ` (${nodes[at]!.node})`}`;
  const down = failed.length === 0 ? '' : `; failed: ${failed.map(({ n, i }) => (redactForLan ? `node ${i + 1}` : `${n.node} (${n.lastError})`)).join(', ')}`;
  return `${on}${down}`;
}

function broker(u: UplinkView | null, maxAgeMs: number, redactForLan: boolean): ComponentHealth {
  if (u === null || u.state === 'disabled') return { status: 'disabled', reason: 'no broker configured' };
  const waiting = u.outboxDepth > 0 ? `${u.outboxDepth} message(s) waiting${u.oldestAgeMs !== null ? `, oldest ${Math.round(u.oldestAgeMs / 1000)} s` : ''}` : 'nothing waiting yet';
  // The last error names the broker's host ("connect ECONNREFUSED 10.0.0.5:8883").
  const link = `${u.state === 'connected' ? 'connected' : `broker ${u.state}${u.lastError && !redactForLan ? ` (${u.lastError})` : ''}`}${nodesLine(u, redactForLan)}`;
  // Held messages are kept, not lost, but wait for someone to fix the broker's ACL (or the
  // clock). Their topics carry organization and resource ids: only a count for the LAN.
  const held = !u.refusals ? '' : redactForLan ? `; ${u.heldMessages ?? 0} message(s) held or refused (which, on /status)` : `; ${u.refusals}`;
  // The outbox at its bound drops the oldest message for every new one: data is lost.
  if (u.outboxFull) return { status: 'down', reason: `${link}; outbox full (store.outbox_max_rows/outbox_max_bytes), dropping the oldest messages; ${waiting}${held}` };
  // Buffering through an outage is the designed mode: readings are kept and sent later.
  if (u.state !== 'connected') return { status: 'degraded', reason: `${link}; buffering in the outbox, ${waiting}${held}` };
  if (u.oldestAgeMs !== null && u.oldestAgeMs > maxAgeMs) return { status: 'degraded', reason: `connected but backed up, ${waiting}${held}` };
  if (u.refusals) return { status: 'degraded', reason: `connected, ${waiting}${held}` };
  return { status: 'ok', reason: u.outboxDepth > 0 ? `${link}, ${waiting}` : link };
}

function clock(c: ClockView | null): ComponentHealth {
  if (c === null) return { status: 'disabled', reason: 'clock guard not running' };
  // Readings around the step are kept but flagged (not priced): someone should look.
  if (c.trusted && c.stepWarning) return { status: 'degraded', reason: `clock trusted, but ${c.stepWarning}` };
  if (c.trusted) return { status: 'ok', reason: 'clock trusted' };
  // A plausible clock that is not confirmed yet (waiting for NTP) only delays readings,
  // which are held and re-stamped; an implausible one makes every timestamp wrong.
  // Nothing is published meanwhile: the reason says so and names what ends the wait.
  return { status: c.plausible ? 'degraded' : 'down', reason: `clock not trusted: ${c.reason}; ${c.heldSamples} sample(s) held, nothing is published until then${c.fix ? `; to end it: ${c.fix}` : ''}` };
}

function prices(list: readonly PriceCoverageView[] | null): ComponentHealth {
  if (list === null) return { status: 'disabled', reason: 'price sync not running' };
  if (list.length === 0) return { status: 'disabled', reason: 'no price regions configured' };
  const missing = list.filter((p) => !p.coversNow);
  // Degraded, not down: readings are kept and sessions are priced when read, so a session
  // in the gap is priced once its prices arrive; the price endpoints answer 503 meanwhile.
  if (missing.length > 0) {
    const last = (p: PriceCoverageView) => (p.lastEndMs === null ? 'none stored' : `stored until ${new Date(p.lastEndMs).toISOString()}`);
    return { status: 'degraded', reason: `no current price for ${missing.map((p) => `${p.region} (${last(p)})`).join(', ')}` };
  }
  return { status: 'ok', reason: list.map((p) => `${p.region} until ${p.lastEndMs !== null ? new Date(p.lastEndMs).toISOString() : '-'}`).join(', ') };
}

export function assessHealth(input: HealthInputs): Health {
  return combineHealth({
    [LIVENESS_COMPONENT]: loopsHealth(input.liveness),
    meters: meters(input.meters),
    broker: broker(input.uplink, input.maxOutboxAgeMs, input.redactForLan === true),
    clock: clock(input.clock),
    prices: prices(input.prices),
    ...input.contributed,
  });
}
