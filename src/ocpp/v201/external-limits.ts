// The external charging limits 2.0.1 stations reported (NotifyChargingLimit, K12), held in
// memory for the planner (planning/external-limit.ts ExternalLimits: asked on every plan) and
// kept in the store (store/ocpp201-charging-limits.ts, loaded at start): a limit on EVSE 0
// limits every EVSE of the station; several sources, the lowest in force.
import { lowestLimitA, type ExternalLimits, type ExternalSchedule } from '../../planning/external-limit.js';
import type { ExternalLimitRecord } from '../../store/ocpp201-charging-limits.js';

export class ExternalChargingLimits implements ExternalLimits {
  private readonly byCharger = new Map<string, ExternalLimitRecord[]>();

  constructor(stored: readonly ExternalLimitRecord[]) {
    for (const r of stored) this.put(r);
  }

  /** A station's notification (once stored): it replaces the same source's limit on the same EVSE. */
  put(r: ExternalLimitRecord): void {
    const list = (this.byCharger.get(r.chargePointId) ?? []).filter((x) => x.evseId !== r.evseId || x.source !== r.source);
    list.push(r);
    this.byCharger.set(r.chargePointId, list);
  }

  /** ClearedChargingLimit (K13): the source's limit on the EVSE, or on every EVSE when evseId is null. */
  clear(chargePointId: string, source: string, evseId: number | null): void {
    const list = (this.byCharger.get(chargePointId) ?? []).filter((x) => x.source !== source || (evseId !== null && x.evseId !== evseId));
    this.byCharger.set(chargePointId, list);
  }

  /** What the station reported, for views. */
  of(chargePointId: string): readonly ExternalLimitRecord[] {
    return this.byCharger.get(chargePointId) ?? [];
  }

  externalLimitA(chargePointId: string, connectorId: number, nowMs: number, connector: { readonly phases: number; readonly voltageV: number }): number | null {
    const schedules = (this.byCharger.get(chargePointId) ?? []).filter((r) => r.evseId === connectorId || r.evseId === 0).flatMap(schedulesOf);
    return schedules.length === 0 ? null : lowestLimitA(schedules, nowMs, connector);
  }
}

/** A reported limit's schedules as lowestLimitA takes them (none: no schedule sent). */
export function schedulesOf(r: ExternalLimitRecord): { readonly schedule: ExternalSchedule; readonly receivedAtMs: number }[] {
  return (r.schedules ?? []).map((s) => ({ schedule: s as ExternalSchedule, receivedAtMs: r.receivedAtMs }));
}
