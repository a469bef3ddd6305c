// Pure: a limit set on a connector by a system other than the gateway (an OCPP 2.0.1
// station's NotifyChargingLimit, K12: its EMS, the grid operator, a local controller) as the
// current per phase it allows now. The planner takes it as one more ceiling of the connector's
// wanted limit (target-plan.ts useExternalLimits): a plan never asks for more than the station
// lets through anyway, so its share of the site is not held for current it cannot draw.
//
// A schedule (2.0.1 ChargingScheduleType: startSchedule, or relative to when it was received;
// periods from startPeriod s; limit in A, or in W at the period's phases, 3 by default, and
// the connector's voltage) gives the period in force now; after its duration, or before its
// first period, it limits nothing. Several schedules (or sources): the lowest in force.
export interface ExternalSchedule {
  readonly startSchedule?: string;
  readonly duration?: number;
  readonly chargingRateUnit: string;
  readonly chargingSchedulePeriod: ReadonlyArray<{ readonly startPeriod: number; readonly limit: number; readonly numberPhases?: number }>;
}

/** What the planner asks about a connector: the external limit per phase in force now (A), or null. */
export interface ExternalLimits {
  externalLimitA(chargePointId: string, connectorId: number, nowMs: number, connector: { readonly phases: number; readonly voltageV: number }): number | null;
}

/** The limit a schedule sets at nowMs (A per phase), or null where it sets none. */
export function scheduleLimitA(schedule: ExternalSchedule, receivedAtMs: number, nowMs: number, connector: { readonly phases: number; readonly voltageV: number }): number | null {
  const startMs = schedule.startSchedule === undefined ? receivedAtMs : Date.parse(schedule.startSchedule);
  if (!Number.isFinite(startMs) || nowMs < startMs) return null;
  if (schedule.duration !== undefined && nowMs >= startMs + schedule.duration * 1000) return null;
  const elapsedS = (nowMs - startMs) / 1000;
  let current: ExternalSchedule['chargingSchedulePeriod'][number] | null = null;
  for (const p of schedule.chargingSchedulePeriod) if (p.startPeriod <= elapsedS && (current === null || p.startPeriod >= current.startPeriod)) current = p;
  if (current === null) return null;
  if (schedule.chargingRateUnit === 'W') {
    const phases = current.numberPhases ?? 3;
    return Math.max(0, current.limit / (Math.min(phases, connector.phases) * connector.voltageV));
  }
  return Math.max(0, current.limit);
}

/** The lowest limit of several schedules at nowMs, or null where none sets one. */
export function lowestLimitA(schedules: ReadonlyArray<{ readonly schedule: ExternalSchedule; readonly receivedAtMs: number }>, nowMs: number, connector: { readonly phases: number; readonly voltageV: number }): number | null {
  let lowest: number | null = null;
  for (const s of schedules) {
    const a = scheduleLimitA(s.schedule, s.receivedAtMs, nowMs, connector);
    if (a !== null && (lowest === null || a < lowest)) lowest = a;
  }
  return lowest;
}
