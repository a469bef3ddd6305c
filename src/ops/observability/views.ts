// The views modules give of themselves (plain data) for /healthz, /metrics, the status page
// and the network scan; health.ts, status-report.ts and metrics.ts read only these.
import type { SiteMeterReading } from '../../planning/site-load.js';
import type { MeterStatus } from '../../domain.js';

export type HealthStatus = 'ok' | 'degraded' | 'down';
/** `disabled`: the part is not configured or not running here; counts as ok. */
export type ComponentStatus = HealthStatus | 'disabled';

/**
 * One component's verdict. `down`: the gateway loses data or has stopped doing that part
 * of its job and waiting will not fix it. `degraded`: something is late, partial or
 * unavailable for now while nothing is lost (a broker outage with the outbox buffering).
 */
export interface ComponentHealth {
  readonly status: ComponentStatus;
  readonly reason: string;
}

/** A module's health now, one component of /healthz (ModuleViews.health). */
export type HealthContributor = () => ComponentHealth;

/** One connector under the fuse controller, as the status page and /healthz show it (ocpp/fuse-controller.ts). */
export interface FuseConnectorView {
  readonly charge_point_id: string;
  readonly connector_id: number;
  readonly transaction_id: number | null;
  /** settled, lowering (above its share, within site.lower_deadline_s), escalating, uncontrollable. */
  readonly health: 'settled' | 'lowering' | 'escalating' | 'uncontrollable';
  readonly why: string;
  readonly share_a: number | null;
  /** The limit the charger confirmed (A); null while unknown (then counted at its maximum). */
  readonly in_force_a: number | null;
  readonly in_force_unknown: 'not-confirmed' | 'unanswered' | 'refused' | 'disconnected' | 'restarted' | null;
  /** What the site counts it at now (A). */
  readonly counted_a: number;
  readonly last_attempt: { readonly means: string; readonly outcome: string; readonly answer: string | null; readonly sent_at: string } | null;
  readonly last_escalation: { readonly means: string; readonly at: string; readonly why: string } | null;
  readonly inoperative_by_fuse: boolean;
}

/** The grid operator's dimming (grid/grid-control.ts), as the status page shows it. */
export interface GridControlView {
  readonly input: string;
  readonly signal: 'unread' | 'read' | 'lost';
  readonly signal_reason: string | null;
  readonly contacts: readonly boolean[] | null;
  readonly dimmed: boolean;
  readonly limit_w: number | null;
  readonly minimum_w: number;
  readonly fixed_loads_w: number;
  readonly on_signal_lost: 'dim' | 'hold-last' | 'release';
  readonly event: {
    readonly id: number;
    readonly started_at: string;
    readonly cause: 'signal' | 'signal-lost';
    readonly confirmed_at: string | null;
    readonly late: boolean;
    readonly connectors: ReadonlyArray<{ readonly charge_point_id: string; readonly connector_id: number; readonly share_a: number | null; readonly in_force_a: number | null; readonly confirmed_at: string | null }>;
  } | null;
}

export type BrokerState = 'connected' | 'connecting' | 'disconnected' | 'disabled';

/** One broker node (a configured URL, or one address of a host name with several), as the connection last saw it. */
export interface BrokerNodeView {
  /** URL without credentials; `[address]` appended when the host name has several addresses. */
  readonly node: string;
  /** `current`: the node the gateway is connected or connecting to; `failed`: its last attempt or connection failed; `standby`: not tried yet, or fine when last used. */
  readonly state: 'current' | 'failed' | 'standby';
  /** Why its last attempt or connection failed (a TLS error names this node's certificate), or null. */
  readonly lastError: string | null;
  readonly lastFailedAtMs: number | null;
  /** Failed attempts and lost connections since the start. */
  readonly failures: number;
}

export interface UplinkView {
  readonly state: BrokerState;
  /** Broker URL without credentials: the node connected or being tried. */
  readonly broker: string | null;
  /** Every broker node (mqtt.urls; a host name with several addresses counts once per address). */
  readonly nodes?: readonly BrokerNodeView[];
  readonly outboxDepth: number;
  /** Age of the oldest message waiting for its PUBACK, or null when the outbox is empty. */
  readonly oldestAgeMs: number | null;
  readonly lastPublishedAtMs: number | null;
  readonly lastError: string | null;
  /** The outbox is at its bound and drops its oldest message for every new one (since the last PUBACK). */
  readonly outboxFull: boolean;
  /** Messages held out of the sending order (refused by the broker, or stamped ahead of the clock); kept, not deleted. */
  readonly heldMessages?: number;
  /** One line while the broker refuses messages or messages are held (what and since when), else null. */
  readonly refusals?: string | null;
}

export interface BusScanView {
  readonly bus: string;
  readonly port: string;
  readonly unit_ids: readonly number[];
  readonly devices: ReadonlyArray<{ readonly unit_id: number; readonly profile: string | null }>;
}

export interface ClockView {
  readonly trusted: boolean;
  /** Whether the wall clock is within the plausible range (after the build date, not far ahead). */
  readonly plausible: boolean;
  readonly reason: string;
  readonly heldSamples: number;
  /** While not trusted: the setting or action that ends the wait (e.g. `clock.trust: system`). */
  readonly fix?: string | null;
  /** While a step of the trusted clock beyond clock.step_tolerance_s is recent: what happened and what is flagged. */
  readonly stepWarning?: string | null;
}

/** Whether the database takes writes; what waits in memory while it does not. */
export interface StoreView {
  readonly writable: boolean;
  /** The last refusal, e.g. `SQLITE_FULL: database or disk is full`; null while writable. */
  readonly reason: string | null;
  readonly failingSinceMs: number | null;
  readonly pendingWrites: number;
  readonly maxPendingWrites: number;
  /** Dropped (oldest first) because the queue was full, since start. */
  readonly pendingDroppedTotal: number;
}

export interface PriceCoverageView {
  readonly region: string;
  /** End of the last stored period (ms), or null without prices. */
  readonly lastEndMs: number | null;
  /** Whether a price exists for the period containing now. */
  readonly coversNow: boolean;
}

export interface PricePoint {
  readonly periodStartMs: number;
  readonly durationS: number;
  readonly pricePerMwh: number | null;
  readonly forecast: number | null;
  readonly forecastLower: number | null;
  readonly forecastUpper: number | null;
}

export interface PriceSeriesView {
  readonly region: string;
  readonly currency: string;
  readonly points: readonly PricePoint[];
}

/** A configured charge point as the OCPP central system sees it now (src/ocpp). */
export interface ChargerView {
  readonly chargePointId: string;
  readonly connected: boolean;
  readonly connectedSinceMs: number | null;
  readonly lastMessageAtMs: number | null;
  /** The charger's clock is ahead of the gateway's by this much (s), or null while it is not (beyond clock.step_tolerance_s). */
  readonly clockAheadS: number | null;
  /** While its clock is known to be off (either way, beyond clock.step_tolerance_s): why; its transactions are flagged (docs/chargers.md). */
  readonly clockProblem?: string | null;
  readonly vendor: string | null;
  readonly model: string | null;
  /** From its last BootNotification. */
  readonly firmwareVersion?: string | null;
  /** The OCPP version of its current connection, else of its last one (null: never connected). */
  readonly ocppVersion?: '1.6' | '2.0.1' | null;
  /** The operator actions it takes (OCPP 1.6 names: a 2.0.1 station's have a 2.0.1 form, ocpp/v201/operations/); null or left out: every one. */
  readonly operations?: readonly string[] | null;
  /** Its SupportedFeatureProfiles as read after boot (ocpp/charger-configuration.ts), or null while unknown. */
  readonly supportedProfiles?: readonly string[] | null;
  /** An OCPP 2.0.1 station's device model (ocpp/v201/device-model.ts): attribute rows stored and its newest report; null for a 1.6 charger. */
  readonly deviceModel?: { readonly rows: number; readonly lastReport: { readonly reportBase: string | null; readonly status: string | null; readonly complete: boolean; readonly atMs: number | null } | null } | null;
  readonly connectors: ReadonlyArray<{ readonly connectorId: number; readonly status: string; readonly errorCode: string; readonly statusAtMs: number }>;
  readonly openTransactions: ReadonlyArray<{ readonly transactionId: number; readonly connectorId: number; readonly session: string; readonly startedAtMs: number; readonly energyWh: number }>;
  /** What its most recently completed session came to (ocpp/session-outcomes.ts), or null before any. */
  readonly lastSession?: {
    readonly session: string;
    readonly planned: boolean;
    readonly energyWh: number | null;
    readonly currency: string | null;
    readonly actualCost: number | null;
    readonly immediateCost: number | null;
    readonly unpricedReason: string | null;
  } | null;
  /** The signed meter values of its most recently stopped session, verified (signed-meter/), or null when it carried none. */
  readonly lastSignedMeter?: { readonly transactionId: number; readonly outcome: string; readonly reason: string } | null;
  /** The last security event the station reported (ocpp/security-events.ts) and how many are kept, or null before any. */
  readonly lastSecurityEvent?: { readonly type: string; readonly severity: 'critical' | 'routine' | 'unknown'; readonly occurredAtMs: number; readonly receivedAtMs: number; readonly techInfo: string | null; readonly kept: number } | null;
  /** Limits set by other systems that a 2.0.1 station reported (NotifyChargingLimit, ocpp/v201/smart-charging.ts): a ceiling of its connectors' plans. */
  readonly externalLimits?: ReadonlyArray<{ readonly evseId: number; readonly source: string; readonly gridCritical: boolean | null; readonly limitANow: number | null; readonly receivedAtMs: number }>;
  /** How each planned connector's plan reaches it (ocpp/charging-strategy.ts, docs/chargers.md "Chargers that say no"): the strategy in force and why. */
  readonly chargingStrategies?: ReadonlyArray<{ readonly connectorId: number; readonly strategy: string; readonly reason: string; readonly chosenAtMs: number }>;
  /** Per configured connector with a target or a sent profile (ocpp/plan-view.ts): the target, and the schedule last sent with the charger's answer. */
  readonly plans?: ReadonlyArray<{
    readonly connectorId: number;
    readonly target: { readonly departureMs: number; readonly energyWh: number; readonly source: 'client' | 'default' | 'ev'; readonly endedAtMs: number | null } | null;
    readonly profile: {
      readonly purpose: string;
      readonly status: string;
      readonly sentAtMs: number;
      readonly rateUnit: 'A' | 'W';
      readonly periods: ReadonlyArray<{ readonly startMs: number; readonly limit: number }>;
      readonly endMs: number;
    } | null;
  }>;
  /** The reservations in force (ocpp/reservations.ts): connector 0 is any; confirmed: the charger answered Accepted. */
  readonly reservations?: ReadonlyArray<{ readonly reservationId: number; readonly connectorId: number; readonly expiryAtMs: number; readonly confirmed: boolean }>;
}

/**
 * What a module shows of itself (Module.views), each view read when asked: /healthz, /metrics,
 * the status page and the network scan read them through Probes, across every module.
 */
export interface ModuleViews {
  /** The state of each of its meters (meter sources). */
  readonly meters?: () => readonly MeterStatus[];
  /** What answers on each of its buses, for network_scan (meter sources). */
  readonly busScan?: () => readonly BusScanView[];
  /** Its charge points (the OCPP central system). */
  readonly chargers?: () => readonly ChargerView[];
  readonly uplink?: () => UplinkView;
  readonly clock?: () => ClockView;
  readonly prices?: () => readonly PriceCoverageView[];
  /** Prices (actual, else forecast with its band) for the status chart: today and tomorrow in the market's time zone. */
  readonly priceSeries?: (region: string, nowMs: number) => PriceSeriesView | null;
  /** The site meter's latest reading (site/site-meter.ts), which charging plans take the site's other load from. */
  readonly siteMeter?: () => SiteMeterReading | null;
  /** The site meter's latest quarter-hour demand and month's peak (a Belgian P1 meter, site.capacity; planning/capacity-limit.ts). */
  readonly siteDemand?: () => import('../../planning/capacity-limit.js').SiteDemandReading | null;
  /** The connectors under the fuse controller (ocpp/fuse-controller.ts): health, limit in force, last attempt and escalation. */
  readonly fuse?: () => readonly FuseConnectorView[];
  /** The grid operator's dimming (grid/grid-control.ts). */
  readonly gridControl?: () => GridControlView;
  /** Components of /healthz it judges itself, by name (e.g. `store`), combined by the one rule in health.ts. */
  readonly health?: Readonly<Record<string, HealthContributor>>;
}
