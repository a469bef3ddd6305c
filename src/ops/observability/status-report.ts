// The data behind the local status page (/status.json): one snapshot of every module's
// live view, in the same snake_case words as the rest of the gateway's JSON.
import type { Config } from '../../config/types.js';
import type { P1Demand } from '../../p1/demand.js';
import { VERSION } from '../../version.js';
import { healthOf, readViews } from './current-health.js';
import type { Health } from './health.js';
import type { Liveness } from '../systemd/liveness.js';
import type { Probes } from './probes.js';

export interface StatusReportDeps {
  readonly config: Config;
  readonly probes: Probes;
  readonly liveness: Liveness;
  readonly clock: { now(): number };
  readonly startedAtMs: number;
}

/** A Belgian P1 meter's capacity objects (p1/demand.ts), as the status page shows them. */
function demandView(d: P1Demand) {
  return {
    quarter_hour_average_kw: d.quarterHourAverageKw,
    month_peak: d.monthPeak ? { kw: d.monthPeak.kw, at: iso(d.monthPeak.atMs) } : null,
    history: d.history.map((p) => ({ month: p.month, kw: p.kw, at: iso(p.atMs) })),
  };
}

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

export function buildStatusReport(deps: StatusReportDeps) {
  const { probes, config } = deps;
  const now = deps.clock.now();
  // One read of each view serves both the health verdict and what the page shows.
  const views = readViews(probes);
  const { meters, uplink, clock, prices: coverage } = views;
  const health: Health = healthOf(views, deps);
  return {
    generated_at: iso(now),
    gateway: {
      id: config.gateway_id ?? null,
      organization_id: config.organization_id,
      software_version: VERSION,
      uptime_s: Math.round((now - deps.startedAtMs) / 1000),
      poll_interval_ms: config.poll.interval_ms,
    },
    health: { status: health.status, live: health.live, ready: health.ready, reasons: health.reasons, components: health.components },
    meters: (meters ?? []).map((m) => ({
      resource_id: m.resourceId,
      bus: m.bus,
      unit_id: m.unitId,
      profile: m.profile,
      state: m.state,
      consecutive_misses: m.consecutiveMisses,
      problem: m.problem ?? null,
      demand: m.demand ? demandView(m.demand) : null,
      last_answered_at: iso(m.lastAnsweredAtMs),
      sampled_at: iso(m.lastSample?.sampledAtMs),
      metrics: (m.lastSample?.metrics ?? []).map((x) => ({ name: x.name, value: x.value, unit: x.unit })),
    })),
    chargers: (probes.chargers?.() ?? []).map((c) => ({
      charge_point_id: c.chargePointId,
      state: c.connected ? 'connected' : 'disconnected',
      connected_since: iso(c.connectedSinceMs),
      last_message_at: iso(c.lastMessageAtMs),
      clock_ahead_s: c.clockAheadS,
      clock_problem: c.clockProblem ?? null,
      vendor: c.vendor,
      model: c.model,
      firmware_version: c.firmwareVersion ?? null,
      ocpp_version: c.ocppVersion ?? null,
      operations: c.operations ?? null,
      supported_profiles: c.supportedProfiles ?? null,
      device_model: c.deviceModel
        ? { rows: c.deviceModel.rows, last_report: c.deviceModel.lastReport ? { report_base: c.deviceModel.lastReport.reportBase, status: c.deviceModel.lastReport.status, complete: c.deviceModel.lastReport.complete, at: iso(c.deviceModel.lastReport.atMs) } : null }
        : null,
      connectors: c.connectors.map((k) => {
        const open = c.openTransactions.filter((t) => t.connectorId === k.connectorId).at(-1);
        const strategy = c.chargingStrategies?.find((s) => s.connectorId === k.connectorId);
        const reservation = c.reservations?.find((r) => r.connectorId === k.connectorId);
        return {
          connector_id: k.connectorId,
          status: k.status,
          error_code: k.errorCode,
          status_at: iso(k.statusAtMs),
          open_transaction: open ? { transaction_id: open.transactionId, session: open.session, started_at: iso(open.startedAtMs), energy_wh: open.energyWh } : null,
          plan_strategy: strategy ? { strategy: strategy.strategy, reason: strategy.reason, chosen_at: iso(strategy.chosenAtMs) } : null,
          reservation: reservation ? { reservation_id: reservation.reservationId, expiry_date: iso(reservation.expiryAtMs), confirmed: reservation.confirmed } : null,
        };
      }),
      plans: (c.plans ?? []).map((p) => ({
        connector_id: p.connectorId,
        target: p.target ? { departure_time: iso(p.target.departureMs), energy_wh: p.target.energyWh, source: p.target.source, ended_at: iso(p.target.endedAtMs) } : null,
        charger_profile: p.profile
          ? { purpose: p.profile.purpose, status: p.profile.status, sent_at: iso(p.profile.sentAtMs), rate_unit: p.profile.rateUnit, periods: p.profile.periods.map((x) => ({ start: iso(x.startMs), limit: x.limit })), ends_at: iso(p.profile.endMs) }
          : null,
      })),
      reservations: (c.reservations ?? []).map((r) => ({ reservation_id: r.reservationId, connector_id: r.connectorId, expiry_date: iso(r.expiryAtMs), confirmed: r.confirmed })),
      plan_strategies: (c.chargingStrategies ?? []).map((s) => ({ connector_id: s.connectorId, strategy: s.strategy, reason: s.reason, chosen_at: iso(s.chosenAtMs) })),
      open_transactions: c.openTransactions.map((t) => ({ transaction_id: t.transactionId, connector_id: t.connectorId, session: t.session, started_at: iso(t.startedAtMs), energy_wh: t.energyWh })),
      last_session: c.lastSession
        ? {
            session: c.lastSession.session,
            planned: c.lastSession.planned,
            energy_wh: c.lastSession.energyWh,
            currency: c.lastSession.currency,
            actual_cost: c.lastSession.actualCost,
            immediate_cost: c.lastSession.immediateCost,
            saving: c.lastSession.actualCost === null || c.lastSession.immediateCost === null ? null : Math.round((c.lastSession.immediateCost - c.lastSession.actualCost) * 10_000) / 10_000,
            unpriced_reason: c.lastSession.unpricedReason,
          }
        : null,
      last_signed_meter: c.lastSignedMeter ? { transaction_id: c.lastSignedMeter.transactionId, outcome: c.lastSignedMeter.outcome, reason: c.lastSignedMeter.reason } : null,
      last_security_event: c.lastSecurityEvent
        ? { type: c.lastSecurityEvent.type, severity: c.lastSecurityEvent.severity, occurred_at: iso(c.lastSecurityEvent.occurredAtMs), received_at: iso(c.lastSecurityEvent.receivedAtMs), tech_info: c.lastSecurityEvent.techInfo, kept: c.lastSecurityEvent.kept }
        : null,
      external_limits: (c.externalLimits ?? []).map((l) => ({ evse_id: l.evseId, source: l.source, grid_critical: l.gridCritical, limit_a_now: l.limitANow === null ? null : Math.round(l.limitANow * 10) / 10, received_at: iso(l.receivedAtMs) })),
    })),
    // The fuse controller's connectors (docs/planning.md "The fuse controller"): health, limit in force, last attempt, escalation.
    fuse: probes.fuse?.() ?? [],
    // The grid operator's dimming (§14a EnWG, docs/grid-limits.md): signal, limit, the event in force and its confirmation.
    grid_control: probes.gridControl?.() ?? null,
    uplink: uplink
      ? {
          state: uplink.state,
          broker: uplink.broker,
          nodes: (uplink.nodes ?? []).map((n) => ({ node: n.node, state: n.state, last_error: n.lastError, last_failed_at: iso(n.lastFailedAtMs), failures: n.failures })),
          outbox_depth: uplink.outboxDepth,
          oldest_age_s: uplink.oldestAgeMs === null ? null : Math.round(uplink.oldestAgeMs / 1000),
          last_published_at: iso(uplink.lastPublishedAtMs),
          last_error: uplink.lastError,
          outbox_full: uplink.outboxFull,
          held_messages: uplink.heldMessages ?? 0,
          refusals: uplink.refusals ?? null,
        }
      : { state: 'disabled', broker: null, nodes: [], outbox_depth: 0, oldest_age_s: null, last_published_at: null, last_error: null, outbox_full: false, held_messages: 0, refusals: null },
    clock: clock ? { trusted: clock.trusted, plausible: clock.plausible, reason: clock.reason, held_samples: clock.heldSamples, fix: clock.fix ?? null, step_warning: clock.stepWarning ?? null } : null,
    prices: config.prices.regions.map((region) => {
      const series = probes.priceSeries?.(region, now) ?? null;
      const cov = coverage?.find((c) => c.region === region) ?? null;
      return {
        region,
        currency: series?.currency ?? 'EUR',
        covered_until: iso(cov?.lastEndMs),
        periods: (series?.points ?? []).map((p) => ({
          period_start: iso(p.periodStartMs),
          duration_s: p.durationS,
          price_per_mwh: p.pricePerMwh,
          forecast: p.forecast,
          forecast_lower: p.forecastLower,
          forecast_upper: p.forecastUpper,
        })),
      };
    }),
  };
}

export type StatusReport = ReturnType<typeof buildStatusReport>;
