// What the status page shows of each planned connector: its target and the schedule last
// sent to its charger with the charger's answer. Pure: stored rows in, a view out.
import type { ChargerView } from '../ops/observability/views.js';
import type { SentChargingProfile } from '../store/charging-profiles.js';
import type { ChargingTarget } from '../store/charging-targets.js';
import type { SetChargingProfileRequest } from './charging-profile.js';

export type ConnectorPlanView = NonNullable<ChargerView['plans']>[number];

export function connectorPlanView(connectorId: number, target: ChargingTarget | undefined, sent: SentChargingProfile | undefined): ConnectorPlanView | null {
  if (!target && !sent) return null;
  const schedule = sent ? (JSON.parse(sent.requestJson) as SetChargingProfileRequest).csChargingProfiles.chargingSchedule : null;
  const startMs = schedule ? Date.parse(schedule.startSchedule) : 0;
  return {
    connectorId,
    target: target ? { departureMs: target.departureMs, energyWh: target.energyWh, source: target.source ?? 'client', endedAtMs: target.endedAtMs ?? null } : null,
    profile:
      sent && schedule
        ? {
            purpose: sent.purpose,
            status: sent.status,
            sentAtMs: sent.sentAtMs,
            rateUnit: schedule.chargingRateUnit,
            periods: schedule.chargingSchedulePeriod.map((p) => ({ startMs: startMs + p.startPeriod * 1000, limit: p.limit })),
            endMs: startMs + schedule.duration * 1000,
          }
        : null,
  };
}
