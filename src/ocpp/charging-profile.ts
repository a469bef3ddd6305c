// A charging plan as an OCPP 1.6 SetChargingProfile request (docs/chargers.md, "Applying
// plans"). Pure: a plan and where it goes in, the request out. One chargingSchedulePeriod
// per planned slot at its current (A), 0 A where the plan does not charge, from the time
// the plan was made to departure; TxProfile for a running transaction, else TxDefaultProfile
// (the charger uses it for the next transaction on that connector).
import type { Plan } from '../planning/plan.js';
import type { ScheduleSegment } from '../planning/progress.js';

export type ChargingProfilePurpose = 'TxProfile' | 'TxDefaultProfile';

export interface ChargingSchedulePeriod {
  readonly startPeriod: number;
  readonly limit: number;
}

export interface SetChargingProfileRequest {
  readonly connectorId: number;
  readonly csChargingProfiles: {
    readonly chargingProfileId: number;
    readonly transactionId?: number;
    readonly stackLevel: number;
    readonly chargingProfilePurpose: ChargingProfilePurpose;
    readonly chargingProfileKind: 'Absolute';
    readonly validTo: string;
    readonly chargingSchedule: {
      readonly duration: number;
      readonly startSchedule: string;
      readonly chargingRateUnit: 'A' | 'W';
      readonly chargingSchedulePeriod: readonly ChargingSchedulePeriod[];
    };
  };
}

/**
 * The limit sent for a planned current: rounded down to half an ampere. Never above the
 * plan (which keeps the charger's and the site's limits). Halves because the OCPP schema
 * says multipleOf 0.1 and ocpp-rpc's ajv checks it as `limit / 0.1` being an integer in
 * floating point, which most tenths (11.4, 0.3) fail while whole and half amperes pass.
 */
export const limitForCurrentA = (currentA: number): number => Math.floor(currentA * 2 + 1e-9) / 2;

/** The profile id per connector and purpose: a new plan replaces the connector's previous profile of that purpose. */
export const chargingProfileIdOf = (connectorId: number, purpose: ChargingProfilePurpose): number => connectorId * 10 + (purpose === 'TxProfile' ? 2 : 1);

export function chargingProfileRequest(
  plan: Plan,
  where: { readonly connectorId: number; readonly transactionId: number | null; readonly plannedAtMs: number; readonly departureMs: number },
): SetChargingProfileRequest {
  // Whole seconds: startSchedule is sent to the second, periods count seconds from it.
  const startMs = Math.floor(where.plannedAtMs / 1000) * 1000;
  const secondsFromStart = (ms: number) => Math.max(0, Math.round((ms - startMs) / 1000));
  const periods: ChargingSchedulePeriod[] = [];
  const add = (startPeriod: number, limit: number) => {
    const last = periods[periods.length - 1];
    if (last && last.startPeriod === startPeriod) periods[periods.length - 1] = { startPeriod, limit };
    else if (!last || last.limit !== limit) periods.push({ startPeriod, limit });
  };
  let cursorS = 0;
  for (const slot of [...plan.planned.slots].sort((a, b) => a.startMs - b.startMs)) {
    const fromS = secondsFromStart(slot.startMs);
    if (fromS > cursorS || periods.length === 0) add(cursorS, 0);
    add(fromS, limitForCurrentA(slot.currentA));
    cursorS = secondsFromStart(slot.endMs);
  }
  const durationS = Math.max(1, Math.ceil((where.departureMs - startMs) / 1000));
  if (periods.length === 0 || cursorS < durationS) add(cursorS, 0);
  const purpose: ChargingProfilePurpose = where.transactionId === null ? 'TxDefaultProfile' : 'TxProfile';
  return {
    connectorId: where.connectorId,
    csChargingProfiles: {
      chargingProfileId: chargingProfileIdOf(where.connectorId, purpose),
      ...(where.transactionId === null ? {} : { transactionId: where.transactionId }),
      stackLevel: 0,
      chargingProfilePurpose: purpose,
      chargingProfileKind: 'Absolute',
      // After departure the profile no longer applies: the charger falls back to its own limits.
      validTo: new Date(startMs + durationS * 1000).toISOString(),
      chargingSchedule: {
        duration: durationS,
        startSchedule: new Date(startMs).toISOString(),
        chargingRateUnit: 'A',
        chargingSchedulePeriod: periods,
      },
    },
  };
}

/**
 * The power a sent schedule allows, as segments from startSchedule to its end: what the
 * charger may deliver, which the plan follower (plan-follower.ts) compares the delivered
 * energy against. A limit in A is per phase (limit × phases × voltage).
 */
export function scheduleSegments(request: SetChargingProfileRequest, charger: { readonly phases: number; readonly voltageV: number }): ScheduleSegment[] {
  const schedule = request.csChargingProfiles.chargingSchedule;
  const startMs = Date.parse(schedule.startSchedule);
  const periods = schedule.chargingSchedulePeriod;
  return periods.map((p, i) => ({
    startMs: startMs + p.startPeriod * 1000,
    endMs: startMs + (periods[i + 1]?.startPeriod ?? schedule.duration) * 1000,
    powerW: schedule.chargingRateUnit === 'W' ? p.limit : p.limit * charger.phases * charger.voltageV,
  }));
}
