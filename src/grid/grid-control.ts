// The grid operator's dimming (§14a EnWG) as a module: reads the control box's contacts
// (control-signal.ts), debounces them, turns a pattern into a limit (planning/dimmed-limit.ts,
// config grid_control.patterns), tells the planner (GridLimit: the fuse controller's shares
// then keep it) and the bus ('grid.limit-changed', which makes the fuse controller check at
// once), and keeps the evidence: each event with each controlled connector's share, limit
// in force and confirmation (store/grid-dimming.ts; docs/grid-limits.md).
//
// A signal that cannot be read follows grid_control.on_signal_lost (default dim: the
// EEBus LPC failsafe rule, docs/grid-limits.md "A signal that cannot be read").
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AppContext } from '../context.js';
import type { GridControlConfig } from '../config/types.js';
import type { Module } from '../lifecycle.js';
import type { ComponentHealth, FuseConnectorView, GridControlView, ModuleViews } from '../ops/observability/views.js';
import { minimumPowerW, patternLimit, type ContactPattern } from '../planning/dimmed-limit.js';
import type { GridLimit } from '../planning/target-plan.js';
import { DimmingStore, type DimmingConnector, type DimmingEvent } from '../store/grid-dimming.js';
import type { ControlSignalSource, SignalReading } from './control-signal.js';
import type { DimmingPhase } from './dimming-message.js';

/** How often an unconfirmed event looks at the fuse controller's connectors. */
const CONFIRM_POLL_MS = 250;
/** … and once every connector was confirmed, while the event lasts. */
const CONFIRMED_POLL_MS = 1000;

type Cause = DimmingEvent['cause'];

export interface GridControlDeps {
  readonly source: ControlSignalSource;
  /** The fuse controller's connectors (limit in force, confirmation); empty before it runs. */
  readonly fuseConnectors: () => readonly FuseConnectorView[];
  /** Controlled charge points (configured connectors) behind this energy manager: each is one controllable device. */
  readonly chargePoints: number;
  /** Sends an event's phase upstream (the grid_dimming_events topic, through the outbox); absent: not published. */
  readonly publish?: (event: DimmingEvent, phase: DimmingPhase, atMs: number) => void;
}

export class GridControl implements Module, GridLimit {
  readonly name = 'grid-control';
  readonly views: ModuleViews;
  private readonly store: DimmingStore;
  private readonly settings: GridControlConfig;
  private readonly patterns: ContactPattern[];
  readonly minimumW: number;
  readonly fixedLoadsW: number;
  private limitW: number | null = null;
  private event: DimmingEvent | null = null;
  private accepted: readonly boolean[] | null = null;
  private signal: { state: 'unread' | 'read' | 'lost'; reason: string; atMs: number } = { state: 'unread', reason: 'not read yet', atMs: 0 };
  private pending: { contacts: readonly boolean[]; timer: NodeJS.Timeout } | null = null;
  private confirmTimer: NodeJS.Timeout | null = null;
  private tracked = new Map<string, DimmingConnector>();
  private readonly metrics: { dimmed: Gauge; limit: Gauge; lost: Gauge; events: Counter; reaction: Gauge; late: Counter };

  constructor(
    private readonly ctx: AppContext,
    private readonly deps: GridControlDeps,
    metrics: Registry = ctx.metrics,
  ) {
    this.settings = ctx.config.grid_control!;
    this.store = new DimmingStore(ctx.db);
    this.patterns = this.settings.patterns.map((p) => ({ contacts: p.contacts, limit: typeof p.limit === 'string' ? p.limit : p.limit.power_kw * 1000 }));
    const others = this.settings.other_devices.map((d) => ({ kind: d.kind, connectionPowerKw: d.connection_power_kw }));
    this.minimumW = this.settings.minimum_power_kw !== undefined ? Math.round(this.settings.minimum_power_kw * 1000) : minimumPowerW(deps.chargePoints, others);
    this.fixedLoadsW = Math.round(this.settings.other_devices.reduce((s, d) => s + (d.fixed_load_kw ?? d.connection_power_kw), 0) * 1000);
    this.views = { gridControl: () => this.view(), health: { grid_control: () => this.health() } };
    const registers = [metrics];
    this.metrics = {
      dimmed: new Gauge({ name: 'metergate_grid_dimmed', help: '1 while the grid operator dims the controllable devices (§14a EnWG), else 0', registers }),
      limit: new Gauge({ name: 'metergate_grid_dimmed_limit_watts', help: 'The power the controllable devices may draw together while dimmed (0 while not dimmed)', registers }),
      lost: new Gauge({ name: 'metergate_grid_control_signal_lost', help: '1 while the control box contacts cannot be read', registers }),
      events: new Counter({ name: 'metergate_grid_dimming_events_total', help: 'Dimming events started, by cause (signal, signal-lost)', labelNames: ['cause'], registers }),
      reaction: new Gauge({ name: 'metergate_grid_dimming_confirm_seconds', help: 'From the last dimming event to every controlled connector confirmed within its share', registers }),
      late: new Counter({ name: 'metergate_grid_dimming_late_total', help: 'Dimming events not confirmed within grid_control.reaction_deadline_s', registers }),
    };
  }

  async start(): Promise<void> {
    this.event = this.store.open();
    if (this.event) this.limitW = this.event.limitW;
    this.ctx.logger.info({ input: this.deps.source.describe(), minimum_w: this.minimumW, fixed_loads_w: this.fixedLoadsW, on_signal_lost: this.settings.on_signal_lost, open_event: this.event?.id ?? null }, 'grid control: reading the control box');
    await this.deps.source.start((r) => this.reading(r));
  }

  async stop(): Promise<void> {
    if (this.pending) clearTimeout(this.pending.timer);
    if (this.confirmTimer) clearTimeout(this.confirmTimer);
    await this.deps.source.stop();
  }

  /** GridLimit: what the planner shares while dimmed (null: not dimmed). */
  dimmedAt(_nowMs: number): { limitW: number; fixedLoadsW: number } | null {
    return this.limitW === null ? null : { limitW: this.limitW, fixedLoadsW: this.fixedLoadsW };
  }

  private debounceMs(): number {
    return this.settings.input.debounce_ms ?? 100;
  }

  private reading(r: SignalReading): void {
    if (r.kind === 'lost') {
      if (this.signal.state !== 'lost') this.ctx.logger.error({ reason: r.reason, on_signal_lost: this.settings.on_signal_lost }, 'grid control: the control box contacts cannot be read');
      this.signal = { state: 'lost', reason: r.reason, atMs: r.atMs };
      this.metrics.lost.set(1);
      if (this.pending) clearTimeout(this.pending.timer);
      this.pending = null;
      // hold-last with nothing read since the start (and no event carried over) has no last state to hold: dimmed, as with dim.
      const nothingToHold = this.accepted === null && this.event === null;
      if (this.settings.on_signal_lost === 'dim' || (this.settings.on_signal_lost === 'hold-last' && nothingToHold)) this.apply(this.minimumW, 'signal-lost', null, r.atMs);
      else if (this.settings.on_signal_lost === 'release') this.apply(null, 'signal-lost', null, r.atMs);
      return;
    }
    const wasLost = this.signal.state !== 'read';
    if (wasLost && this.signal.state === 'lost') this.ctx.logger.warn({ contacts: r.contacts }, 'grid control: the control box contacts are read again');
    this.signal = { state: 'read', reason: '', atMs: r.atMs };
    this.metrics.lost.set(0);
    const same = (a: readonly boolean[] | null, b: readonly boolean[]) => a !== null && a.length === b.length && a.every((v, i) => v === b[i]);
    if (same(this.accepted, r.contacts) && !wasLost) {
      // A bounce back before the debounce ran out: nothing changed.
      if (this.pending) clearTimeout(this.pending.timer);
      this.pending = null;
      return;
    }
    // The first reading (and the first after a loss) counts at once: the state is known, not a bounce.
    if (wasLost || this.debounceMs() === 0) {
      this.accept(r.contacts, r.atMs);
      return;
    }
    if (this.pending && same(this.pending.contacts, r.contacts)) return;
    if (this.pending) clearTimeout(this.pending.timer);
    const timer = setTimeout(() => {
      this.pending = null;
      this.accept(r.contacts, this.ctx.clock.now());
    }, this.debounceMs());
    this.pending = { contacts: r.contacts, timer };
  }

  private accept(contacts: readonly boolean[], atMs: number): void {
    this.accepted = contacts;
    const limit = patternLimit(contacts, this.patterns);
    this.apply(limit === 'none' ? null : limit === 'minimum' ? this.minimumW : limit, 'signal', contacts, atMs);
  }

  /** Puts a limit in force (null: none): ends the open event, starts the next, tells the bus. */
  private apply(limitW: number | null, cause: Cause, contacts: readonly boolean[] | null, atMs: number): void {
    if (limitW === this.limitW && (this.event !== null) === (limitW !== null)) return;
    if (this.event) {
      const ended = this.event;
      this.evidence('dimming end not stored', () => this.store.end(ended.id, atMs));
      this.evidence('dimming end not published', () => this.deps.publish?.({ ...ended, endedAtMs: atMs }, 'ended', atMs));
    }
    this.event = null;
    this.limitW = limitW;
    this.tracked = new Map();
    if (limitW !== null) {
      // 0: not stored (the store refused): the limit is applied all the same, the evidence is what is lost.
      const id = this.evidence('dimming event not stored', () => this.store.start({ startedAtMs: atMs, limitW, cause, contacts })) ?? 0;
      this.event = { id, startedAtMs: atMs, endedAtMs: null, limitW, cause, contacts, confirmedAtMs: null, late: false, connectors: [] };
      this.metrics.events.inc({ cause });
      const started = this.event;
      this.evidence('dimming start not published', () => this.deps.publish?.(started, 'started', atMs));
    }
    this.metrics.dimmed.set(limitW === null ? 0 : 1);
    this.metrics.limit.set(limitW ?? 0);
    this.ctx.logger.warn({ limit_w: limitW, cause, contacts, event_id: this.event?.id ?? null }, limitW === null ? 'grid control: dimming ended, back to the plan' : 'grid control: dimmed by the grid operator');
    this.ctx.events.emit('grid.limit-changed', { limitW, atMs, cause, eventId: this.event?.id ?? null });
    // The fuse controller checked every connector on the event (synchronously): record what it holds now, then follow it.
    if (this.event) this.confirm();
  }

  /**
   * The evidence of a dimming (its row, its upstream message) is written beside the limit, never
   * in its way: a store that refuses writes (locked, full disk) must neither keep the grid
   * operator's limit from being applied nor throw out of a timer or the signal's poll loop.
   */
  private evidence<T>(what: string, write: () => T): T | undefined {
    try {
      return write();
    } catch (err) {
      this.ctx.logger.error({ err, event_id: this.event?.id ?? null }, `grid control: ${what}`);
      return undefined;
    }
  }

  private scheduleConfirm(): void {
    if (this.confirmTimer) clearTimeout(this.confirmTimer);
    // Once confirmed, a slower look suffices (a connector joining or a share changing is recorded within a second).
    this.confirmTimer = setTimeout(() => this.confirm(), this.event?.confirmedAtMs === null ? CONFIRM_POLL_MS : CONFIRMED_POLL_MS);
    this.confirmTimer.unref();
  }

  /**
   * Records what the fuse controller's connectors hold now: each one's share, limit in force
   * and the first time it was within its share; the event is confirmed once every one is.
   * Looked at every CONFIRM_POLL_MS until then (and while the event lasts, so a connector
   * that joins later is recorded too).
   */
  private confirm(): void {
    this.confirmTimer = null;
    const e = this.event;
    if (!e) return;
    const nowMs = this.ctx.clock.now();
    const views = this.deps.fuseConnectors();
    for (const v of views) {
      const key = `${v.charge_point_id}\u0000${v.connector_id}`;
      const before = this.tracked.get(key);
      const within = v.health === 'settled' && v.in_force_a !== null && v.share_a !== null && v.in_force_a <= v.share_a + 0.01;
      this.tracked.set(key, { charge_point_id: v.charge_point_id, connector_id: v.connector_id, share_a: v.share_a, in_force_a: v.in_force_a, confirmed_at_ms: before?.confirmed_at_ms ?? (within ? nowMs : null) });
    }
    // A connector no longer under the fuse controller (its car left, stopped or was stopped by
    // the escalation ladder) draws nothing: it is within any share from the moment it left.
    const present = new Set(views.map((v) => `${v.charge_point_id}\u0000${v.connector_id}`));
    for (const [key, c] of this.tracked) if (!present.has(key) && c.confirmed_at_ms === null) this.tracked.set(key, { ...c, in_force_a: 0, confirmed_at_ms: nowMs });
    const connectors = [...this.tracked.values()];
    const all = connectors.every((c) => c.confirmed_at_ms !== null);
    const confirmedAtMs = e.confirmedAtMs ?? (all ? Math.max(e.startedAtMs, ...connectors.map((c) => c.confirmed_at_ms ?? 0)) : null);
    const deadlineMs = e.startedAtMs + this.settings.reaction_deadline_s * 1000;
    const late = e.late || (confirmedAtMs === null ? nowMs > deadlineMs : confirmedAtMs > deadlineMs);
    if (late && !e.late) {
      this.metrics.late.inc();
      this.ctx.logger.error({ event_id: e.id, limit_w: e.limitW, deadline_s: this.settings.reaction_deadline_s, connectors }, 'grid control: dimming not confirmed by every connector within grid_control.reaction_deadline_s');
    }
    if (confirmedAtMs !== null && e.confirmedAtMs === null) {
      this.metrics.reaction.set((confirmedAtMs - e.startedAtMs) / 1000);
      this.ctx.logger.info({ event_id: e.id, confirm_ms: confirmedAtMs - e.startedAtMs, connectors }, 'grid control: every connector confirmed within its share of the dimmed limit');
    }
    this.event = { ...e, connectors, confirmedAtMs, late };
    // Written only when something changed: a dimming may last hours (an SD card counts the writes).
    if (JSON.stringify([e.connectors, e.confirmedAtMs, e.late]) !== JSON.stringify([connectors, confirmedAtMs, late])) this.evidence('dimming progress not stored', () => this.store.progress(e.id, { connectors, confirmedAtMs, late }));
    const current = this.event;
    if (late && !e.late) this.evidence('dimming late not published', () => this.deps.publish?.(current, 'late', nowMs));
    if (confirmedAtMs !== null && e.confirmedAtMs === null) this.evidence('dimming confirmation not published', () => this.deps.publish?.(current, 'confirmed', nowMs));
    this.scheduleConfirm();
  }

  private health(): ComponentHealth {
    if (this.signal.state === 'lost') return { status: 'degraded', reason: `control box contacts cannot be read (${this.signal.reason}); on_signal_lost: ${this.settings.on_signal_lost}` };
    if (this.event?.late) return { status: 'degraded', reason: `dimming event ${this.event.id} not confirmed within ${this.settings.reaction_deadline_s} s` };
    return { status: 'ok', reason: this.limitW === null ? 'not dimmed' : `dimmed to ${this.limitW} W` };
  }

  view(): GridControlView {
    const e = this.event;
    return {
      input: this.deps.source.describe(),
      signal: this.signal.state,
      signal_reason: this.signal.reason || null,
      contacts: this.accepted,
      dimmed: this.limitW !== null,
      limit_w: this.limitW,
      minimum_w: this.minimumW,
      fixed_loads_w: this.fixedLoadsW,
      on_signal_lost: this.settings.on_signal_lost,
      event: e
        ? {
            id: e.id,
            started_at: new Date(e.startedAtMs).toISOString(),
            cause: e.cause,
            confirmed_at: e.confirmedAtMs === null ? null : new Date(e.confirmedAtMs).toISOString(),
            late: e.late,
            connectors: e.connectors.map((c) => ({ ...c, confirmed_at: c.confirmed_at_ms === null ? null : new Date(c.confirmed_at_ms).toISOString() })),
          }
        : null,
    };
  }
}
