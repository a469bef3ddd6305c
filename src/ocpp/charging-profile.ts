// A charging plan as an OCPP 1.6 SetChargingProfile request (docs/chargers.md, "Applying
// plans"). Pure: a plan and where it goes in, the request out. One chargingSchedulePeriod
// per planned slot at its current (A; or its power in W for a charger that takes only W),
// 0 where the plan does not charge, from the time
// the plan was made to departure; TxProfile for a running transaction, else TxDefaultProfile
// (the charger uses it for the next transaction on that connector). The plan's own limits
// (within the configured ceilings, planning/ceilings.ts) give the phases and the power in
// W: nothing here can allow more than the plan.
import type { Plan } from '../planning/plan.js';
import type { ScheduleSegment } from '../planning/progress.js';

export type ChargingProfilePurpose = 'TxProfile' | 'TxDefaultProfile' | 'ChargePointMaxProfile';

export interface ChargingSchedulePeriod {
  readonly startPeriod: number;
  readonly limit: number;
  /** Phases the charger may use; absent means 3 (OCPP 1.6), so it is sent only for a one-phase plan. */
  readonly numberPhases?: number;
}

export interface SetChargingProfileRequest {
  readonly connectorId: number;
  readonly csChargingProfiles: {
    readonly chargingProfileId: number;
    readonly transactionId?: number;
    readonly stackLevel: number;
    readonly chargingProfilePurpose: ChargingProfilePurpose;
    readonly chargingProfileKind: 'Absolute';
    readonly validFrom: string;
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
 * The limit sent for a planned current: rounded down to a tenth of an ampere, the
 * precision OCPP 1.6 allows (`limit` has `multipleOf: 0.1` in the schema), never above the
 * plan (which keeps the charger's and the site's limits). Tenths pass ocpp-rpc's strict
 * check: Ajv's own multipleOf tests `limit / 0.1` for integrality in binary floating point,
 * which refuses most tenths (11.4 / 0.1 = 113.99999999999999; mikuso/ocpp-rpc#50), but
 * ocpp-rpc 2.2.1 (lib/validator.js) replaces that keyword with one that accepts a quotient
 * within 1e-6 of an integer. test/unit/charging-profile.test.ts checks every tenth from 0
 * to 80 A against the library's own OCPP 1.6 validator.
 */
export const limitForCurrentA = (currentA: number): number => Math.floor(currentA * 10 + 1e-9) / 10;

/** The limit sent in W (a charger that takes only W schedules): the planned power rounded down to a whole watt. */
export const limitForPowerW = (powerW: number): number => Math.floor(powerW + 1e-9);

/**
 * The unit to build a charger's schedules in, from its ChargingScheduleAllowedChargingRateUnit
 * (a comma-separated list of "Current" and "Power"; some chargers write "A" and "W"): W only
 * when it declares Power and not Current; A otherwise, also when it did not say (unknown
 * key, never read): A is what every OCPP 1.6 smart-charging charger must support.
 */
export function chargingRateUnitFor(declared: string | null | undefined): 'A' | 'W' {
  const units = new Set((declared ?? '').split(',').map((u) => u.trim().toLowerCase()));
  const power = units.has('power') || units.has('w');
  const current = units.has('current') || units.has('a');
  return power && !current ? 'W' : 'A';
}

/** The profile id per connector and purpose: a new plan replaces the connector's previous profile of that purpose. */
export const chargingProfileIdOf = (connectorId: number, purpose: ChargingProfilePurpose): number => connectorId * 10 + (purpose === 'TxProfile' ? 2 : purpose === 'TxDefaultProfile' ? 1 : 3);

export function chargingProfileRequest(
  plan: Plan,
  where: {
    readonly connectorId: number;
    readonly transactionId: number | null;
    readonly plannedAtMs: number;
    readonly departureMs: number;
    /** A (default) or W; in W a planned current is sent as current × the plan's phases × its voltage. */
    readonly rateUnit?: 'A' | 'W';
    /**
     * The profile's purpose (charging-strategy.ts); default: TxProfile for a running
     * transaction, else TxDefaultProfile. A ChargePointMaxProfile goes to connector 0 and a
     * TxDefaultProfile names no transaction.
     */
    readonly purpose?: ChargingProfilePurpose;
  },
): SetChargingProfileRequest {
  const rateUnit = where.rateUnit ?? 'A';
  const { phases, voltageV } = plan.charger;
  const limitFor = (currentA: number) => (rateUnit === 'W' ? limitForPowerW(currentA * phases * voltageV) : limitForCurrentA(currentA));
  // OCPP 1.6 assumes 3 phases unless told: a one-phase plan says so in every period.
  const phasesField = phases < 3 ? { numberPhases: phases } : {};
  // Whole seconds: startSchedule is sent to the second, periods count seconds from it.
  const startMs = Math.floor(where.plannedAtMs / 1000) * 1000;
  const secondsFromStart = (ms: number) => Math.max(0, Math.round((ms - startMs) / 1000));
  const periods: ChargingSchedulePeriod[] = [];
  const add = (startPeriod: number, limit: number) => {
    const last = periods[periods.length - 1];
    if (last && last.startPeriod === startPeriod) periods[periods.length - 1] = { startPeriod, limit, ...phasesField };
    else if (!last || last.limit !== limit) periods.push({ startPeriod, limit, ...phasesField });
  };
  let cursorS = 0;
  for (const slot of [...plan.planned.slots].sort((a, b) => a.startMs - b.startMs)) {
    const fromS = secondsFromStart(slot.startMs);
    if (fromS > cursorS || periods.length === 0) add(cursorS, 0);
    add(fromS, limitFor(slot.currentA));
    cursorS = secondsFromStart(slot.endMs);
  }
  const durationS = Math.max(1, Math.ceil((where.departureMs - startMs) / 1000));
  if (periods.length === 0 || cursorS < durationS) add(cursorS, 0);
  const purpose: ChargingProfilePurpose = where.purpose ?? (where.transactionId === null ? 'TxDefaultProfile' : 'TxProfile');
  const transactionId = purpose === 'TxProfile' ? where.transactionId : null;
  return {
    connectorId: purpose === 'ChargePointMaxProfile' ? 0 : where.connectorId,
    csChargingProfiles: {
      chargingProfileId: chargingProfileIdOf(where.connectorId, purpose),
      ...(transactionId === null ? {} : { transactionId }),
      stackLevel: 0,
      chargingProfilePurpose: purpose,
      chargingProfileKind: 'Absolute',
      // An Absolute profile names its whole validity (OCTT TC_056/TC_057_CSMS check validFrom and
      // validTo); after departure it no longer applies: the charger falls back to its own limits.
      validFrom: new Date(startMs).toISOString(),
      validTo: new Date(startMs + durationS * 1000).toISOString(),
      chargingSchedule: {
        duration: durationS,
        startSchedule: new Date(startMs).toISOString(),
        chargingRateUnit: rateUnit,
        chargingSchedulePeriod: periods,
      },
    },
  };
}

/**
 * The power a sent schedule allows, as segments from startSchedule to its end: what the
 * charger may deliver, which the plan follower (plan-follower.ts) compares the delivered
 * energy against. A limit in A is per phase (limit × phases × voltage; a period's own
 * numberPhases when it has one).
 */
export function scheduleSegments(request: SetChargingProfileRequest, charger: { readonly phases: number; readonly voltageV: number }): ScheduleSegment[] {
  const schedule = request.csChargingProfiles.chargingSchedule;
  const startMs = Date.parse(schedule.startSchedule);
  const periods = schedule.chargingSchedulePeriod;
  return periods.map((p, i) => ({
    startMs: startMs + p.startPeriod * 1000,
    endMs: startMs + (periods[i + 1]?.startPeriod ?? schedule.duration) * 1000,
    powerW: schedule.chargingRateUnit === 'W' ? p.limit : p.limit * (p.numberPhases ?? charger.phases) * charger.voltageV,
  }));
}

/**
 * A by-period strategy's profile (charging-strategy.ts): the whole plan's request cut to the
 * period in force at nowMs and the next ones, at most maxPeriods, starting at nowMs (whole
 * seconds). The last period sent holds until the schedule's end, so a charger the gateway
 * loses keeps the last planned limit (never more than the plan) instead of none.
 * nextBoundaryMs: when the first period left out starts (the profile is sent again then);
 * null when the cut holds the rest of the plan.
 */
export function profileWindow(request: SetChargingProfileRequest, nowMs: number, maxPeriods: number): { request: SetChargingProfileRequest; nextBoundaryMs: number | null } {
  const profile = request.csChargingProfiles;
  const schedule = profile.chargingSchedule;
  const startMs = Date.parse(schedule.startSchedule);
  const offsetS = Math.min(Math.max(0, Math.floor((nowMs - startMs) / 1000)), Math.max(0, schedule.duration - 1));
  const periods = schedule.chargingSchedulePeriod;
  let first = 0;
  while (first + 1 < periods.length && periods[first + 1]!.startPeriod <= offsetS) first++;
  const cut = periods.slice(first, first + Math.max(1, Math.floor(maxPeriods)));
  const next = periods[first + cut.length];
  return {
    request: {
      ...request,
      csChargingProfiles: {
        ...profile,
        validFrom: new Date(startMs + offsetS * 1000).toISOString(),
        chargingSchedule: {
          ...schedule,
          duration: schedule.duration - offsetS,
          startSchedule: new Date(startMs + offsetS * 1000).toISOString(),
          chargingSchedulePeriod: cut.map((p, i) => ({ ...p, startPeriod: i === 0 ? 0 : p.startPeriod - offsetS })),
        },
      },
    },
    nextBoundaryMs: next ? startMs + next.startPeriod * 1000 : null,
  };
}

/**
 * The remote-start-stop strategy's step at nowMs (charging-strategy.ts): whether the plan
 * charges now (its period's limit above 0), and when that next changes (null: not before
 * the schedule's end).
 */
export function chargingNow(request: SetChargingProfileRequest, nowMs: number): { charging: boolean; nextChangeMs: number | null } {
  const schedule = request.csChargingProfiles.chargingSchedule;
  const startMs = Date.parse(schedule.startSchedule);
  const periods = schedule.chargingSchedulePeriod;
  const offsetS = (nowMs - startMs) / 1000;
  let current = periods[0];
  for (const p of periods) if (p.startPeriod <= offsetS) current = p;
  const charging = (current?.limit ?? 0) > 0;
  const endMs = startMs + schedule.duration * 1000;
  if (nowMs >= endMs) return { charging: false, nextChangeMs: null };
  const change = periods.find((p) => p.startPeriod > offsetS && p.limit > 0 !== charging);
  return { charging, nextChangeMs: change ? startMs + change.startPeriod * 1000 : null };
}
