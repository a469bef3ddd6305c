// ISO 15118 through OCPP 2.0.1 (Part 2, block K: K15 charging with load leveling based on
// high-level communication, K17 renegotiation by the car; docs/chargers.md "A car's own
// needs"). The car reports when it leaves and how much energy it needs; the station sends it
// as NotifyEVChargingNeeds, and it becomes the EVSE's charging target (source 'ev') in the
// same store a client's PUT …/plan writes, planned as that typed target would be
// (needs-target.ts, pure). A client's target in force is kept: the client overrides the car.
// The plan goes out as plan.updated (reason target-set), as a PUT's does, for the station's
// TxProfile. NotifyEVChargingSchedule (what the car says it will do) is stored and answered.
// Both are stored per EVSE (store/ev-charging.ts) and shown in the plan view.
import type { ConnectorConfig } from '../../config/types.js';
import { requireMarket } from '../../prices/markets.js';
import { createRPCError } from '../rpc.js';
import { boundedId, registeredOnly, type Connection201 } from './connection.js';
import { scheduleAboveCeiling, type EvChargingSchedule201 } from './ev-schedule-check.js';
import { targetFromNeeds, type ChargingNeeds201 } from './needs-target.js';
import type { EvNeedsOutcome, EvNeedsStatus } from '../../store/ev-charging.js';

/** As the plan route's bound (http/routes/charging-plan.ts): beyond this there are neither prices nor a forecast. */
const MAX_AHEAD_MS = 8 * 24 * 3_600_000;

interface NotifyEVChargingNeeds {
  readonly evseId: number;
  readonly maxScheduleTuples?: number;
  readonly chargingNeeds: ChargingNeeds201;
}

interface NotifyEVChargingSchedule {
  readonly evseId: number;
  readonly timeBase: string;
  readonly chargingSchedule: EvChargingSchedule201;
}

interface Answer {
  readonly status: EvNeedsStatus;
  readonly statusInfo?: { readonly reasonCode: string; readonly additionalInfo?: string };
}

/** The EVSE's configured connector and where it is in the config (the 2.0.1 EVSE is the configured connector), or null. */
function configuredConnector(c: Connection201, evseId: number): { connector: ConnectorConfig; setting: string } | null {
  const chargers = c.ctx.config.chargers;
  const i = chargers.findIndex((ch) => ch.id === c.tools.id);
  const j = chargers[i]?.connectors?.findIndex((k) => k.connector_id === evseId) ?? -1;
  return i < 0 || j < 0 ? null : { connector: chargers[i]!.connectors![j]!, setting: `chargers[${i}].connectors[${j}]` };
}

export function registerChargingNeeds(c: Connection201): void {
  const { tools, ctx, charging } = c;
  const { log, id } = tools;
  const { targets, ev } = charging.stores;
  const { planner } = charging;
  const on = registeredOnly(c);

  on('NotifyEVChargingNeeds', (p: NotifyEVChargingNeeds, later) => {
    const nowMs = ctx.clock.now();
    const evseId = boundedId(p.evseId, 'evseId');
    const { config } = ctx;
    const market = requireMarket(config.ocpp.market_area ?? config.prices.regions[0] ?? 'NL');
    const place = configuredConnector(c, evseId);
    const made = targetFromNeeds({
      chargePointId: id,
      evseId,
      needs: p.chargingNeeds,
      connector: place?.connector ?? null,
      setting: place?.setting ?? '',
      siteLimitA: config.site.limit_a ?? null,
      market,
      nowMs,
      maxAheadMs: MAX_AHEAD_MS,
    });
    let answer: Answer;
    let outcome: EvNeedsOutcome = 'none';
    if (made.kind === 'refused') {
      answer = { status: made.refusal.status, statusInfo: { reasonCode: made.refusal.reasonCode, additionalInfo: made.refusal.additionalInfo } };
    } else {
      const existing = targets.get(id, evseId);
      const clientInForce = existing !== undefined && (existing.source ?? 'client') === 'client' && existing.endedAtMs == null && existing.departureMs > nowMs;
      if (clientInForce) {
        // The client's word wins over the car's; the station still gets the plan (K15.FR.03: Accepted, then a TxProfile).
        outcome = 'client-target';
        answer = { status: 'Accepted' };
        const plan = planner.plan(existing, nowMs);
        later(() => ctx.events.emit('plan.updated', { chargePointId: id, connectorId: evseId, marketArea: existing.marketArea, reason: 'target-set', plannedAtMs: nowMs, plan }));
      } else if (noPrices(planner.plan(made.target, nowMs))) {
        // Without a single price before departure the plan would hold the car at 0 A: not planned (as a default target, plan-follower.ts).
        answer = { status: 'Rejected', statusInfo: { reasonCode: 'NoPrices', additionalInfo: `no ${market.code} prices stored before the car's departure: it charges within the connector's limits, unplanned` } };
      } else {
        outcome = 'target';
        answer = { status: 'Accepted' };
        targets.put(made.target);
        // Planned once stored, as a PUT's: the target shares the site with the others as stored.
        const plan = planner.plan(made.target, nowMs);
        later(() => ctx.events.emit('plan.updated', { chargePointId: id, connectorId: evseId, marketArea: market.code, reason: 'target-set', plannedAtMs: nowMs, plan }));
      }
    }
    // Kept only for a configured EVSE (as the schedule below): a station naming any number of EVSEs cannot grow the table.
    if (place) ev.putNeeds({ chargePointId: id, evseId, receivedAtMs: nowMs, request: p, status: answer.status, reasonCode: answer.statusInfo?.reasonCode ?? null, additionalInfo: answer.statusInfo?.additionalInfo ?? null, outcome });
    const target = made.kind === 'target' ? made.target : null;
    log.info(
      {
        evse_id: evseId,
        status: answer.status,
        reason_code: answer.statusInfo?.reasonCode,
        outcome,
        departure: target ? new Date(target.departureMs).toISOString() : p.chargingNeeds.departureTime,
        energy_wh: target?.energyWh,
        max_current_a: target?.maxCurrentA,
        min_current_a: target?.minCurrentA,
        phases: target?.phases,
        from_default_target: made.kind === 'target' && made.filledFromDefault.length > 0 ? made.filledFromDefault : undefined,
        ceilings_applied: made.kind === 'target' && made.clamps.length > 0 ? made.clamps : undefined,
      },
      'EV charging needs answered',
    );
    return answer;
  });

  on('NotifyEVChargingSchedule', (p: NotifyEVChargingSchedule) => {
    const nowMs = ctx.clock.now();
    const evseId = boundedId(p.evseId, 'evseId');
    const timeBaseMs = Date.parse(p.timeBase);
    if (!Number.isFinite(timeBaseMs)) throw createRPCError('PropertyConstraintViolation', 'timeBase is not a date-time', { path: 'timeBase' });
    const place = configuredConnector(c, evseId);
    if (!place) return { status: 'Rejected', statusInfo: { reasonCode: 'UnknownEvse', additionalInfo: `EVSE ${evseId} is not configured (chargers[].connectors)` } };
    ev.putSchedule({ chargePointId: id, evseId, receivedAtMs: nowMs, timeBaseMs, schedule: p.chargingSchedule });
    const above = scheduleAboveCeiling(p.chargingSchedule, place.connector);
    log.info({ evse_id: evseId, time_base: p.timeBase, periods: p.chargingSchedule.chargingSchedulePeriod.length, unit: p.chargingSchedule.chargingRateUnit, above_ceiling: above ?? undefined }, 'EV charging schedule stored');
    return above === null ? { status: 'Accepted' } : { status: 'Rejected', statusInfo: { reasonCode: 'ValueTooHigh', additionalInfo: above } };
  });
}

/** Nothing planned because no price is stored before the departure. */
function noPrices(plan: { readonly planned: { readonly energyWh: number }; readonly shortfallReason: string | null }): boolean {
  return plan.planned.energyWh === 0 && plan.shortfallReason === 'prices-end-before-departure';
}
