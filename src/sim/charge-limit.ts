// What a simulated charger lets a car draw under the charging profiles it was sent (OCPP
// 1.6 smart charging, the subset the gateway sends). Pure: profiles and an instant in, a
// current per phase out.
//
// The rule, as a charger applies it: per purpose the valid profile with the highest stack
// level wins; a TxProfile of the running transaction overrides a TxDefaultProfile; a
// ChargePointMaxProfile caps both; no profile at all leaves the charger's own maximum.

export type ProfilePurpose = 'ChargePointMaxProfile' | 'TxDefaultProfile' | 'TxProfile';

export interface ReceivedProfile {
  readonly connectorId: number;
  readonly chargingProfileId: number;
  readonly stackLevel: number;
  readonly purpose: ProfilePurpose;
  readonly transactionId?: number;
  readonly validToMs?: number;
  readonly startScheduleMs: number;
  readonly durationS?: number;
  readonly rateUnit: 'A' | 'W';
  /** startPeriod in seconds from startScheduleMs, limit in A per phase or W in total. */
  readonly periods: ReadonlyArray<{ readonly startPeriodS: number; readonly limit: number; readonly numberPhases?: number }>;
}

export interface Connector {
  readonly connectorId: number;
  readonly maxCurrentA: number;
  readonly phases: number;
  readonly voltageV: number;
}

/** The limit (A per phase) one profile sets at `atMs`, or null when it sets none then. */
function profileLimitA(p: ReceivedProfile, atMs: number, connector: Connector): number | null {
  if (p.validToMs !== undefined && atMs >= p.validToMs) return null;
  const sinceS = (atMs - p.startScheduleMs) / 1000;
  if (sinceS < 0 || (p.durationS !== undefined && sinceS >= p.durationS)) return null;
  let limit: { limit: number; numberPhases?: number } | null = null;
  for (const period of p.periods) if (period.startPeriodS <= sinceS) limit = period;
  if (limit === null) return null;
  if (p.rateUnit === 'A') return limit.limit;
  return limit.limit / ((limit.numberPhases ?? connector.phases) * connector.voltageV);
}

/** The winning profile's limit of one purpose (highest stack level that sets one now). */
function purposeLimitA(profiles: readonly ReceivedProfile[], purpose: ProfilePurpose, atMs: number, connector: Connector, transactionId: number | null): number | null {
  const candidates = profiles
    .filter((p) => p.purpose === purpose && (p.connectorId === connector.connectorId || p.connectorId === 0))
    .filter((p) => purpose !== 'TxProfile' || (transactionId !== null && (p.transactionId === undefined || p.transactionId === transactionId)))
    .sort((a, b) => b.stackLevel - a.stackLevel);
  for (const p of candidates) {
    const limit = profileLimitA(p, atMs, connector);
    if (limit !== null) return limit;
  }
  return null;
}

/** Current per phase the connector allows at `atMs` (0 .. its maximum). */
export function allowedCurrentA(profiles: readonly ReceivedProfile[], connector: Connector, atMs: number, transactionId: number | null): number {
  const tx = purposeLimitA(profiles, 'TxProfile', atMs, connector, transactionId) ?? purposeLimitA(profiles, 'TxDefaultProfile', atMs, connector, transactionId);
  const cap = purposeLimitA(profiles, 'ChargePointMaxProfile', atMs, connector, transactionId);
  return Math.max(0, Math.min(connector.maxCurrentA, tx ?? Infinity, cap ?? Infinity));
}

/** A SetChargingProfile request's profile as the charger keeps it (the OCPP 1.6 JSON shape). */
export function receivedProfile(params: {
  connectorId: number;
  csChargingProfiles: {
    chargingProfileId: number;
    stackLevel: number;
    chargingProfilePurpose: ProfilePurpose;
    transactionId?: number;
    validTo?: string;
    chargingSchedule: { startSchedule?: string; duration?: number; chargingRateUnit: 'A' | 'W'; chargingSchedulePeriod: Array<{ startPeriod: number; limit: number; numberPhases?: number }> };
  };
}, receivedAtMs: number): ReceivedProfile {
  const cp = params.csChargingProfiles;
  const s = cp.chargingSchedule;
  return {
    connectorId: params.connectorId,
    chargingProfileId: cp.chargingProfileId,
    stackLevel: cp.stackLevel,
    purpose: cp.chargingProfilePurpose,
    ...(cp.transactionId === undefined ? {} : { transactionId: cp.transactionId }),
    ...(cp.validTo === undefined ? {} : { validToMs: Date.parse(cp.validTo) }),
    startScheduleMs: s.startSchedule === undefined ? receivedAtMs : Date.parse(s.startSchedule),
    ...(s.duration === undefined ? {} : { durationS: s.duration }),
    rateUnit: s.chargingRateUnit,
    periods: s.chargingSchedulePeriod.map((p) => ({ startPeriodS: p.startPeriod, limit: p.limit, ...(p.numberPhases === undefined ? {} : { numberPhases: p.numberPhases }) })),
  };
}

/** The profiles left after a ClearChargingProfile with these criteria (all absent: every one). */
export function clearProfiles(profiles: readonly ReceivedProfile[], c: { id?: number; connectorId?: number; chargingProfilePurpose?: ProfilePurpose; stackLevel?: number }): ReceivedProfile[] {
  return profiles.filter((p) => {
    if (c.id !== undefined) return p.chargingProfileId !== c.id;
    const matches = (c.connectorId === undefined || p.connectorId === c.connectorId) && (c.chargingProfilePurpose === undefined || p.purpose === c.chargingProfilePurpose) && (c.stackLevel === undefined || p.stackLevel === c.stackLevel);
    return !matches;
  });
}
