// Every event one module tells others about, and the typed bus that carries them. The
// composition root (daemon.ts) creates one EventBus per daemon, hands it to every module in
// the AppContext and subscribes the listeners: who listens to what is the "wiring" part of
// buildModules. Emitting is synchronous (listeners run before emit returns, in subscription
// order), as the direct calls it replaces were; a listener that throws is logged and does
// not stop the others or the emitter.
import type { MeterSample, MeterStatus } from './domain.js';
import type { Logger } from './log.js';
import type { P1Demand } from './p1/demand.js';
import type { Plan } from './planning/plan.js';
import type { PricesUpdated } from './prices/updates.js';
import type { NetworkScanContent } from './uplink/messages.js';

/** Event name → payload. `emitted by` → `heard by` (as daemon.ts wires them). */
export interface Events {
  /** A meter source read a sane sample. sources (modbus/, p1/) → clock guard; site meter and site follower (the site meter's). */
  'sample.taken': MeterSample;
  /** A P1 meter's Belgian capacity objects with its published sample (p1/demand.ts; not part of the measurement). P1 source → site meter (site.capacity). */
  'meter.demand': { readonly resourceId: string; readonly sampledAtMs: number; readonly demand: P1Demand };
  /** A sample with a trusted timestamp (at once, or re-stamped once the clock is trusted). clock guard → recorder (its poll slot). */
  'sample.released': MeterSample;
  /** A source handed on every sample of one poll slot. sources → the slot join, which commits the slot once every source is done. */
  'poll.tick-done': { readonly source: string };
  /** A meter changed state (online, offline, …); `statuses` are all of the source's meters. sources → network scan (re-check). */
  'meter.state-changed': { readonly source: string; readonly statuses: readonly MeterStatus[] };
  /** A commit added outbox rows, the newest with this id. recorder → publisher (wake). */
  'sample.stored': { readonly lastOutboxId: number };
  /** The outbox dropped its oldest rows to stay within its bounds. recorder → publisher (counts them). */
  'outbox.evicted': { readonly count: number };
  /** The network_scan content changed (and its first computation at start). network scan → device messages (publish). */
  'network.changed': NetworkScanContent;
  /** Day-ahead prices were stored by a sync, backfill or repair, or by another process (prices import while running). price sync, import watch → forecaster (refresh), central system, replanner. */
  'prices.updated': PricesUpdated;
  /** Exogenous series (load, wind, solar forecasts) were stored by a sync, backfill or repair, or by another process. price sync, import watch → forecaster (refresh). */
  'exogenous.updated': PricesUpdated & { readonly source: string };
  /**
   * A connector's charging plan was made: its target was set over HTTP, or new prices made
   * it again, or following the session or the site's load did. http route, replanner
   * (planning/replan.ts), plan follower, site follower → OCPP central system (sends it to
   * the charger with SetChargingProfile).
   */
  'plan.updated': {
    readonly chargePointId: string;
    readonly connectorId: number;
    readonly marketArea: string;
    /**
     * behind-plan, charger-available: the plan follower (ocpp/plan-follower.ts) planned the rest again;
     * car-limit: the plan follower learnt that the car draws less than allowed and planned the rest with it;
     * site-load: the site's load changed what the connector may draw (ocpp/site-follower.ts);
     * external-limit: a 2.0.1 station reported a limit set by another system (ocpp/v201/smart-charging.ts).
     */
    readonly reason: 'target-set' | 'prices-updated' | 'behind-plan' | 'charger-available' | 'car-limit' | 'site-load' | 'external-limit';
    readonly plannedAtMs: number;
    readonly plan: Plan;
  };
  /**
   * The profiles the gateway set on a connector are to be cleared: its target was deleted
   * over HTTP, or the transaction it was for stopped. http route, plan follower → OCPP
   * central system (ClearChargingProfile).
   */
  'plan.cleared': { readonly chargePointId: string; readonly connectorId: number; readonly reason: 'target-deleted' | 'transaction-stopped'; readonly atMs: number };
  /** A charger transaction started with an accepted id tag (StartTransaction, stored). OCPP central system → plan follower (a connector's default target). */
  'charger.transaction-started': { readonly chargePointId: string; readonly connectorId: number; readonly transactionId: number; readonly startedAtMs: number };
  /** A charger transaction stopped (StopTransaction, stored). OCPP central system → plan follower (ends the connector's target). */
  'charger.transaction-stopped': { readonly chargePointId: string; readonly connectorId: number; readonly transactionId: number; readonly stoppedAtMs: number };
  /** A charger's energy register values for an open transaction were stored (MeterValues). OCPP central system → plan follower. */
  'charger.energy-measured': { readonly chargePointId: string; readonly connectorId: number; readonly transactionId: number };
  /** A charger reported a connector's status (StatusNotification, stored). OCPP central system → plan follower. */
  'charger.connector-status': {
    readonly chargePointId: string;
    readonly connectorId: number;
    readonly status: string;
    readonly errorCode: string;
    readonly atMs: number;
    /** The connector's stored status before this one (null: none yet), by the charger's time. */
    readonly previous: { readonly status: string; readonly atMs: number } | null;
  };
  /**
   * The grid operator's dimming (§14a EnWG) started, changed or ended: grid control
   * (grid/grid-control.ts) → fuse controller (checks every connector at once), device messages
   * (the grid_dimming_events topic). limitW null: not dimmed.
   */
  'grid.limit-changed': { readonly limitW: number | null; readonly atMs: number; readonly cause: 'signal' | 'signal-lost'; readonly eventId: number | null };
  /** The clock became trusted (held samples were released just before). clock guard → nobody yet (tests, logs). */
  'clock.trusted': { readonly reason: string };
}

export type EventName = keyof Events;
export type Listener<E extends EventName> = (payload: Events[E]) => void;

export class EventBus {
  private readonly listeners = new Map<EventName, Array<Listener<never>>>();

  constructor(private readonly logger: Pick<Logger, 'error'>) {}

  /** Subscribes; returns the function that unsubscribes. */
  on<E extends EventName>(event: E, listener: Listener<E>): () => void {
    const list = this.listeners.get(event) ?? [];
    list.push(listener as Listener<never>);
    this.listeners.set(event, list);
    return () => {
      const at = list.indexOf(listener as Listener<never>);
      if (at >= 0) list.splice(at, 1);
    };
  }

  emit<E extends EventName>(event: E, payload: Events[E]): void {
    const list = this.listeners.get(event);
    if (!list) return;
    for (const listener of [...list]) {
      try {
        (listener as Listener<E>)(payload);
      } catch (err) {
        this.logger.error({ err, event }, 'event listener failed');
      }
    }
  }

  listenerCount(event: EventName): number {
    return this.listeners.get(event)?.length ?? 0;
  }
}
