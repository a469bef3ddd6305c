// PUT/GET/DELETE /api/v1/chargers/:charge_point_id/connectors/:connector_id/plan: a client
// sets the departure time and the energy needed for a connector, reads the cheapest plan
// (docs/planning.md) and removes the target. The target is stored (it survives a restart); the plan is computed
// on each read from the stored prices and forecast, so it always uses the newest prices.
// Only configured connectors have plans (404 otherwise), and the configured limits are
// ceilings: a request above one is planned at the ceiling and the answer says so in
// ceilings_applied (planning/ceilings.ts, docs/chargers.md "Ceilings").
// The planning itself is pure (src/planning/); this file only reads, stores and shapes.
import type { Router } from 'express';
import type { Plan, Schedule } from '../../planning/plan.js';
import { boundLimits, configuredCeilings, type CeilingClamp } from '../../planning/ceilings.js';
import type { SiteLoad } from '../../planning/site-load.js';
import type { PlanCapacity } from '../../planning/target-plan.js';
import type { TargetPlan } from '../../planning/target-plan.js';
import { chargerSessionId, cdrPath } from '../../ocpp/charger-session-id.js';
import type { Refusal } from '../../ocpp/charging-strategy.js';
import { chargerRefusalsInForce, refusalRetryMs } from '../../ocpp/refusals-in-force.js';
import type { PlannedSession, ProfileClear, SentChargingProfile } from '../../store/charging-profiles.js';
import type { StrategyInForce } from '../../store/charging-strategies.js';
import type { ChargingTarget } from '../../store/charging-targets.js';
import type { EvChargingNeedsRecord, EvChargingScheduleRecord } from '../../store/ev-charging.js';
import type { ChargingNeeds201 } from '../../ocpp/v201/needs-target.js';
import type { EvChargingSchedule201 } from '../../ocpp/v201/ev-schedule-check.js';
import type { RouteDeps } from '../deps.js';
import { requireToken } from '../auth.js';
import { jsonBody } from '../body.js';
import { HttpProblem, methodNotAllowed } from '../errors.js';
import { pricesUnavailable, type MarketInfo } from '../price-access.js';
import { formatUtc, parseTimestamp } from '../timestamps.js';
import { fieldErrors, schemaValidator } from '../validate.js';

export const CHARGING_PLAN_PATH = '/api/v1/chargers/:charge_point_id/connectors/:connector_id/plan';

/** OCPP 1.6 charge point identity as configured (CiString48, URL-safe characters). */
const CHARGE_POINT_ID = /^[A-Za-z0-9*_=+.|@-]{1,48}$/;
/** How far ahead a departure may be: beyond a week there are neither prices nor a forecast. */
const MAX_AHEAD_MS = 8 * 24 * 3_600_000;

interface TargetRequest {
  departure_time: string;
  energy_wh: number;
  market_area_code?: string;
  charger?: { max_current_a?: number; min_current_a?: number; phases?: 1 | 3; voltage_v?: number };
  site?: { limit_a: number; other_load_a?: number };
}

const round = (v: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};

function costView(s: Schedule) {
  return { expected: round(s.cost.expected, 4), lower: round(s.cost.lower, 4), upper: round(s.cost.upper, 4) };
}

/** How the site meter's reading became the plan's other load (planning/site-load.ts). */
function siteMeterView(m: SiteLoad): Record<string, unknown> {
  return {
    resource_id: m.resourceId,
    state: m.state,
    assumed: m.state !== 'measured',
    sampled_at: m.sampledAtMs === null ? null : formatUtc(m.sampledAtMs),
    meter_load_a: m.meterLoadA,
    own_draw_a: m.ownDrawA,
    per_phase: m.perPhase,
    other_load_a: m.otherLoadA,
    note: m.note,
  };
}

/** A limit the request (or the stored target) asked for above the configured ceiling, and what the plan uses. */
function clampView(c: CeilingClamp): Record<string, unknown> {
  return { field: c.field, requested: c.requested, applied: c.applied, setting: c.setting };
}

export function planView(
  target: ChargingTarget,
  market: MarketInfo,
  plan: Plan & { readonly site?: TargetPlan['site']; readonly observed?: TargetPlan['observed']; readonly limits?: TargetPlan['limits']; readonly capacity?: TargetPlan['capacity'] },
  nowMs: number,
  deliveredWh: number,
  clamps: readonly CeilingClamp[] = [],
): Record<string, unknown> {
  // The limits planned with: the stored target's within the ceilings configured now.
  const charger = plan.limits ?? target;
  return {
    charge_point_id: target.chargePointId,
    connector_id: target.connectorId,
    source: target.source ?? 'client',
    market_area_code: market.code,
    currency_code: market.currency,
    planned_at: formatUtc(nowMs),
    departure_time: formatUtc(target.departureMs),
    energy_needed_wh: round(plan.energyNeededWh, 1),
    energy_delivered_wh: round(deliveredWh, 1),
    charger: { max_current_a: charger.maxCurrentA, min_current_a: charger.minCurrentA, phases: charger.phases, voltage_v: charger.voltageV },
    ceilings_applied: clamps.map(clampView),
    site: plan.site === undefined ? (target.siteLimitA === null ? null : { limit_a: target.siteLimitA, other_load_a: target.siteOtherLoadA }) : plan.site === null ? null : { limit_a: plan.site.limitA, other_load_a: plan.site.otherLoadA },
    site_meter: plan.site?.meter ? siteMeterView(plan.site.meter) : null,
    site_share: plan.site?.share
      ? {
          connectors: plan.site.share.connectors,
          headroom_a: plan.site.share.headroomA,
          share_a: plan.site.share.shareA,
          // The grid operator's dimming in force (§14a), shared by the same rule: why the share is what it is.
          dimmed: plan.site.dimmed ? { limit_w: plan.site.dimmed.limitW, fixed_loads_w: plan.site.dimmed.fixedLoadsW, chargers_a: plan.site.dimmed.chargersA, share_a: plan.site.dimmed.shareA } : null,
        }
      : null,
    observed_max_current_a: plan.observed ? round(plan.observed.maxCurrentA, 2) : null,
    observed_phases: plan.observed ? plan.observed.phases : null,
    allowed_current_a: round(plan.allowedCurrentA, 2),
    allowed_power_w: round(plan.allowedPowerW, 1),
    meets_target: plan.meetsTarget,
    shortfall_wh: round(plan.shortfallWh, 1),
    shortfall_reason: plan.shortfallReason,
    planned: {
      energy_wh: round(plan.planned.energyWh, 1),
      cost: costView(plan.planned),
      finishes_at: plan.planned.finishesAtMs === null ? null : formatUtc(Math.round(plan.planned.finishesAtMs)),
      periods: plan.planned.slots.map((s) => ({
        start: formatUtc(Math.round(s.startMs)),
        end: formatUtc(Math.round(s.endMs)),
        current_a: round(s.currentA, 2),
        power_w: round(s.powerW, 1),
        energy_wh: round(s.energyWh, 1),
        price_per_mwh: s.pricePerMwh,
        forecast: s.forecast,
        forecast_lower: s.forecast ? s.lowerPerMwh : null,
        forecast_upper: s.forecast ? s.upperPerMwh : null,
      })),
    },
    immediate: {
      energy_wh: round(plan.immediate.energyWh, 1),
      cost: costView(plan.immediate),
      finishes_at: plan.immediate.finishesAtMs === null ? null : formatUtc(Math.round(plan.immediate.finishesAtMs)),
    },
    saving_expected: round(plan.immediate.cost.expected - plan.planned.cost.expected, 4),
    capacity: plan.capacity ? capacityView(plan.capacity) : null,
  };
}

/** The capacity tariff's part of a plan (site.capacity; planning/capacity-limit.ts, docs/planning.md "The capacity peak"). */
function capacityView(c: PlanCapacity): Record<string, unknown> {
  const l = c.limit;
  return {
    state: l.state,
    month_peak_kw: l.monthPeakKw,
    month_peak_at: l.monthPeakAtMs === null ? null : formatUtc(l.monthPeakAtMs),
    cap_kw: l.capKw,
    limit_kw: round(l.limitKw, 3),
    quarter_hour_start: formatUtc(l.quarterStartMs),
    quarter_hour_average_kw: l.quarterHourAverageKw,
    energy_drawn_kwh: l.energyDrawnKwh,
    other_load_kw: l.otherLoadKw,
    projected_average_kw: l.allowance?.projectedAverageKw ?? null,
    allowed_kw: l.allowedKw,
    headroom_a: l.headroomA,
    binding: c.binding,
    new_peak: c.newPeak ? { peak_kw: c.newPeak.peakKw, raise_kw: c.newPeak.raiseKw, cost: c.newPeak.cost, applied: c.newPeak.applied, meets_target: c.newPeak.meetsTarget } : null,
    total_cost_expected: round(c.totalCostExpected, 4),
    note: l.note,
  };
}

/** What the charger was sent for the plan and what it answered (the OCPP central system stores it). */
function profileView(p: SentChargingProfile): Record<string, unknown> {
  return {
    purpose: p.purpose,
    transaction_id: p.transactionId,
    planned_at: formatUtc(p.plannedAtMs),
    sent_at: formatUtc(p.sentAtMs),
    status: p.status,
    error: p.error,
    periods: p.periods,
  };
}

/** How the plan reaches the charger (docs/chargers.md "Chargers that say no"): the strategy in force, why, and what the charger refused. */
function strategyView(s: StrategyInForce | undefined, refusals: readonly Refusal[]): Record<string, unknown> | null {
  if (!s) return null;
  return {
    strategy: s.strategy,
    reason: s.reason,
    chosen_at: formatUtc(s.chosenAtMs),
    paused_transaction_id: s.pausedTransactionId,
    charger_refused: refusals.map((r) => ({ strategy: r.strategy, answer: r.answer, at: formatUtc(r.atMs) })),
  };
}

/** A ClearChargingProfile the gateway sent (or will send) for a profile it set, and the answer. */
function clearView(c: ProfileClear): Record<string, unknown> {
  return {
    charging_profile_id: c.chargingProfileId,
    reason: c.reason,
    requested_at: formatUtc(c.requestedAtMs),
    sent_at: c.sentAtMs === null ? null : formatUtc(c.sentAtMs),
    status: c.status,
    error: c.error,
  };
}

/**
 * What the car on a 2.0.1 EVSE said through ISO 15118 (store/ev-charging.ts): its last
 * charging needs with the gateway's answer, and the schedule it says it will follow
 * (periods as instants); null when it said nothing.
 */
function evView(needs: EvChargingNeedsRecord | undefined, schedule: EvChargingScheduleRecord | undefined): Record<string, unknown> | null {
  if (!needs && !schedule) return null;
  const n = needs ? (needs.request as { maxScheduleTuples?: number; chargingNeeds: ChargingNeeds201 }) : null;
  const ac = n?.chargingNeeds.acChargingParameters;
  const dc = n?.chargingNeeds.dcChargingParameters;
  const s = schedule ? (schedule.schedule as EvChargingSchedule201 & { duration?: number }) : null;
  return {
    needs:
      needs && n
        ? {
            received_at: formatUtc(needs.receivedAtMs),
            status: needs.status,
            reason_code: needs.reasonCode,
            additional_info: needs.additionalInfo,
            outcome: needs.outcome,
            requested_energy_transfer: n.chargingNeeds.requestedEnergyTransfer,
            departure_time: n.chargingNeeds.departureTime ?? null,
            energy_amount_wh: ac?.energyAmount ?? dc?.energyAmount ?? null,
            ev_min_current_a: ac?.evMinCurrent ?? null,
            ev_max_current_a: ac?.evMaxCurrent ?? dc?.evMaxCurrent ?? null,
            ev_max_voltage_v: ac?.evMaxVoltage ?? dc?.evMaxVoltage ?? null,
            ev_max_power_w: dc?.evMaxPower ?? null,
            max_schedule_tuples: n.maxScheduleTuples ?? null,
          }
        : null,
    schedule:
      schedule && s
        ? {
            received_at: formatUtc(schedule.receivedAtMs),
            time_base: formatUtc(schedule.timeBaseMs),
            charging_rate_unit: s.chargingRateUnit,
            duration_s: s.duration ?? null,
            periods: s.chargingSchedulePeriod.map((p) => ({ start: formatUtc(schedule.timeBaseMs + p.startPeriod * 1000), limit: p.limit, number_phases: p.numberPhases ?? null })),
          }
        : null,
  };
}

/** How many of the connector's planned sessions a GET lists (newest first). */
const PLANNED_SESSIONS_SHOWN = 10;

/** A charger session that ran under a plan: what the plan expected against charging immediately; its price is its CDR. */
function plannedSessionView(chargePointId: string, p: PlannedSession): Record<string, unknown> {
  const session = chargerSessionId(chargePointId, p.transactionId);
  return {
    cpo_transaction_id: session,
    status: p.stoppedAtMs === null ? 'active' : 'completed',
    start_date_time: formatUtc(p.startedAtMs),
    end_date_time: p.stoppedAtMs === null ? null : formatUtc(p.stoppedAtMs),
    planned_at: formatUtc(p.plannedAtMs),
    energy_needed_wh: round(p.energyNeededWh, 1),
    planned_energy_wh: round(p.plannedEnergyWh, 1),
    expected_cost: round(p.expectedCost, 4),
    immediate_cost: round(p.immediateCost, 4),
    cdr: cdrPath(session),
  };
}

export function registerChargingPlanRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Token', type: 'cpo' });
  const validate = schemaValidator('ChargingTargetRequest');
  const { targets, profiles, strategies, ev } = deps.charging.stores;
  const planner = deps.charging.planner;
  // The configured connectors and site limit: the ceilings of every request (planning/ceilings.ts).
  const ceilings = configuredCeilings(deps.config);
  const access = deps.priceAccess;

  function connectorOf(params: Record<string, string | string[] | undefined>): { chargePointId: string; connectorId: number } {
    const chargePointId = typeof params.charge_point_id === 'string' ? params.charge_point_id : '';
    const raw = typeof params.connector_id === 'string' ? params.connector_id : '';
    const errors = [];
    if (!CHARGE_POINT_ID.test(chargePointId)) errors.push({ path: 'charge_point_id', message: 'must be 1 to 48 of A-Z a-z 0-9 * _ = + . | @ -' });
    const connectorId = /^[1-9][0-9]{0,3}$/.test(raw) ? Number(raw) : NaN;
    if (Number.isNaN(connectorId)) errors.push({ path: 'connector_id', message: 'must be an integer from 1 to 9999' });
    if (errors.length) throw new HttpProblem(422, 'invalid charger or connector', { errors });
    return { chargePointId, connectorId };
  }

  /** The connector's configured limits; 404 for a charge point or connector that is not configured. */
  function configuredConnector(chargePointId: string, connectorId: number) {
    const ceiling = ceilings.connector(chargePointId, connectorId);
    if (ceiling) return ceiling;
    if (!ceilings.chargePointConfigured(chargePointId)) throw new HttpProblem(404, `charge point ${chargePointId} is not configured (chargers[].id); plans are made only for configured connectors`);
    throw new HttpProblem(404, `connector ${connectorId} of charge point ${chargePointId} is not configured (chargers[].connectors); plans are made only for configured connectors`);
  }

  function marketFor(code: string, path: string): MarketInfo {
    const market = access.market(code);
    if (!market) throw new HttpProblem(422, `unknown market area ${code.slice(0, 40)}`, { errors: [{ path, message: `must be one of ${access.knownMarkets().join(', ')}` }] });
    const unavailable = pricesUnavailable(access, market, { path, unconfiguredWithPrices: true });
    if (unavailable) throw unavailable;
    return market;
  }

  router.put(CHARGING_PLAN_PATH, auth, ...jsonBody(deps.config.http.body_limit_bytes), (req, res) => {
    const { chargePointId, connectorId } = connectorOf(req.params);
    const ceiling = configuredConnector(chargePointId, connectorId);
    if (!validate(req.body)) throw new HttpProblem(422, 'the request body does not match the ChargingTargetRequest schema', { errors: fieldErrors(validate) });
    const input = req.body as TargetRequest;
    const nowMs = deps.clock.now();
    const departureMs = parseTimestamp(input.departure_time);
    if (typeof departureMs === 'string') throw new HttpProblem(422, 'invalid departure_time', { errors: [{ path: 'departure_time', message: departureMs }] });
    if (departureMs <= nowMs) throw new HttpProblem(422, 'departure_time is not in the future', { errors: [{ path: 'departure_time', message: `must be after now (${formatUtc(nowMs)})` }] });
    if (departureMs > nowMs + MAX_AHEAD_MS) throw new HttpProblem(422, 'departure_time is too far ahead', { errors: [{ path: 'departure_time', message: 'must be at most 8 days ahead (prices and forecasts reach no further)' }] });
    const asked = input.charger ?? {};
    if (asked.min_current_a !== undefined && asked.max_current_a !== undefined && asked.min_current_a > asked.max_current_a) {
      throw new HttpProblem(422, 'the charger limits contradict each other', { errors: [{ path: 'charger.min_current_a', message: 'must not exceed charger.max_current_a' }] });
    }
    // What the client leaves out is the connector's configured limit; what it gives may be lower, never higher.
    const { limits, clamps } = boundLimits(
      { maxCurrentA: asked.max_current_a, minCurrentA: asked.min_current_a, phases: asked.phases, voltageV: asked.voltage_v, siteLimitA: input.site?.limit_a },
      ceiling,
      ceilings.siteLimitA,
    );
    if (limits.minCurrentA > limits.maxCurrentA) {
      throw new HttpProblem(422, 'the charger limits contradict the connector\'s', {
        errors: [{ path: 'charger.max_current_a', message: `must be at least the connector's minimum current (${limits.minCurrentA} A, ${ceiling.setting}.min_current_a)` }],
      });
    }
    const marketCode = input.market_area_code ?? access.configuredMarkets()[0];
    if (marketCode === undefined) throw new HttpProblem(422, 'no market area given and none configured', { errors: [{ path: 'market_area_code', message: 'is required when prices.regions is empty' }] });
    const market = marketFor(marketCode, 'market_area_code');
    const target: ChargingTarget = {
      chargePointId,
      connectorId,
      marketArea: market.code,
      departureMs,
      energyWh: input.energy_wh,
      maxCurrentA: limits.maxCurrentA,
      minCurrentA: limits.minCurrentA,
      phases: limits.phases,
      voltageV: limits.voltageV,
      // Without a limit of its own the target follows site.limit_a as configured at each plan.
      siteLimitA: input.site?.limit_a === undefined ? null : limits.siteLimitA,
      siteOtherLoadA: input.site?.other_load_a ?? null,
      updatedAtMs: nowMs,
    };
    if (clamps.length > 0) {
      deps.logger.info({ charge_point_id: chargePointId, connector_id: connectorId, ceilings_applied: clamps }, 'charging target asked for more than configured: planned at the configured limits');
    }
    const created = targets.get(chargePointId, connectorId) === undefined;
    targets.put(target);
    const plan = planner.plan(target, nowMs);
    deps.events.emit('plan.updated', { chargePointId, connectorId, marketArea: market.code, reason: 'target-set', plannedAtMs: nowMs, plan });
    if (created) res.status(201).location(req.originalUrl);
    res.set('Cache-Control', 'no-store').json(planView(target, market, plan, nowMs, 0, [...clamps, ...plan.clamps]));
  });

  router.get(CHARGING_PLAN_PATH, auth, (req, res) => {
    const { chargePointId, connectorId } = connectorOf(req.params);
    configuredConnector(chargePointId, connectorId);
    const target = targets.get(chargePointId, connectorId);
    if (!target) throw new HttpProblem(404, `no charging target is set for connector ${connectorId} of ${chargePointId}; PUT one first`);
    const nowMs = deps.clock.now();
    const market = marketFor(target.marketArea, 'market_area_code');
    const sent = profiles.get(chargePointId, connectorId);
    const plan = planner.plan(target, nowMs);
    res.set('Cache-Control', 'no-store').json({
      ...planView(target, market, plan, nowMs, plan.deliveredWh, plan.clamps),
      ended_at: target.endedAtMs == null ? null : formatUtc(target.endedAtMs),
      charger_profile: sent ? profileView(sent) : null,
      charging_strategy: strategyView(strategies.get(chargePointId, connectorId), chargerRefusalsInForce(strategies, chargePointId, nowMs, refusalRetryMs(deps.config))),
      charger_profile_clears: profiles.clears(chargePointId, connectorId).map(clearView),
      planned_sessions: profiles.plannedSessions(chargePointId, connectorId, PLANNED_SESSIONS_SHOWN).map((p) => plannedSessionView(chargePointId, p)),
      // A 2.0.1 EVSE's car (ISO 15118): what it asked for and what it says it will do.
      ev: evView(ev.needs(chargePointId, connectorId), ev.schedule(chargePointId, connectorId)),
    });
  });
  // The target is removed and the profiles the gateway set for it are cleared from the
  // charger (the central system sends ClearChargingProfile), so it is not left throttled.
  router.delete(CHARGING_PLAN_PATH, auth, (req, res) => {
    const { chargePointId, connectorId } = connectorOf(req.params);
    if (!targets.delete(chargePointId, connectorId)) throw new HttpProblem(404, `no charging target is set for connector ${connectorId} of ${chargePointId}`);
    deps.events.emit('plan.cleared', { chargePointId, connectorId, reason: 'target-deleted', atMs: deps.clock.now() });
    res.status(204).end();
  });
  router.all(CHARGING_PLAN_PATH, methodNotAllowed(['GET', 'PUT', 'DELETE']));
}
