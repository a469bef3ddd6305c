// Pure: the gateway's limit calls (built in their OCPP 1.6 shape by charging-profile.ts and
// the profile dispatcher, which every part above the protocol reads: the fuse controller,
// the plan's GET, the stored answers) in their OCPP 2.0.1 form (Part 2 K01, K10; F03; G03),
// and the 2.0.1 answers back in the 1.6 shape. One translation, so a 2.0.1 station is
// planned, limited and escalated exactly as a 1.6 charger is (docs/chargers.md "OCPP 2.0.1").
// - SetChargingProfile: connectorId -> evseId (the EVSE is what our config calls a connector);
//   csChargingProfiles -> chargingProfile (chargingProfileId -> id), ChargePointMaxProfile ->
//   ChargingStationMaxProfile (evseId 0), the transactionId of a TxProfile the station's own
//   string id, the schedule one element of the 2.0.1 array (its id the profile's).
// - ClearChargingProfile: id -> chargingProfileId; the other fields as chargingProfileCriteria.
// - GetCompositeSchedule: connectorId -> evseId; the answer's schedule back as 1.6's.
// The answers of SetChargingProfile, ClearChargingProfile, RequestStopTransaction and
// ChangeAvailability have 1.6's shape already ({ status } with the same values, and an
// optional statusInfo a 1.6 reader ignores).
import type { SetChargingProfileRequest } from '../charging-profile.js';

/** What a translation may look up: the station's string id of one of its transactions (ours is an integer). */
export interface StationTransactionIds {
  chargerTransactionId(transactionId: number): string | null;
}

/** The 2.0.1 call, or why this 1.6 request has none (nothing is sent). */
export type Call201 = { readonly action: string; readonly request: Record<string, unknown> } | { readonly refused: string };

type Purpose201 = 'TxProfile' | 'TxDefaultProfile' | 'ChargingStationMaxProfile' | 'ChargingStationExternalConstraints';

const PURPOSE_201: Record<string, Purpose201> = { TxProfile: 'TxProfile', TxDefaultProfile: 'TxDefaultProfile', ChargePointMaxProfile: 'ChargingStationMaxProfile' };
const PURPOSE_16: Record<string, string> = { TxProfile: 'TxProfile', TxDefaultProfile: 'TxDefaultProfile', ChargingStationMaxProfile: 'ChargePointMaxProfile', ChargingStationExternalConstraints: 'ChargingStationExternalConstraints' };

/** The 1.6 purpose of a 2.0.1 one (ChargingStationExternalConstraints has none: kept as it is). */
export const purpose16Of = (purpose201: string): string => PURPOSE_16[purpose201] ?? purpose201;

export function setChargingProfile201(r: SetChargingProfileRequest, ids: StationTransactionIds): Call201 {
  const p = r.csChargingProfiles;
  const purpose = PURPOSE_201[p.chargingProfilePurpose];
  if (!purpose) return { refused: `chargingProfilePurpose ${String(p.chargingProfilePurpose)} has no OCPP 2.0.1 equivalent` };
  let transactionId: string | undefined;
  if (purpose === 'TxProfile') {
    if (p.transactionId === undefined) return { refused: 'a TxProfile needs the transaction it is for' };
    const station = ids.chargerTransactionId(p.transactionId);
    if (station === null) return { refused: `transaction ${p.transactionId} is not one of this station's OCPP 2.0.1 transactions` };
    transactionId = station;
  }
  return {
    action: 'SetChargingProfile',
    // OCPP 2.0.1 K01.FR.38/39: the station's own limit goes on EVSE 0, a transaction's on its EVSE.
    request: { evseId: purpose === 'ChargingStationMaxProfile' ? 0 : r.connectorId, chargingProfile: chargingProfile201(p, purpose, transactionId) },
  };
}

/**
 * A 1.6 csChargingProfiles as 2.0.1's ChargingProfileType: chargingProfileId -> id, the
 * schedule one element of the array (its id the profile's), the transaction the station's id.
 * Also the profile of a RequestStartTransaction (a TxProfile without transactionId, F01.FR.12).
 */
export function chargingProfile201(p: SetChargingProfileRequest['csChargingProfiles'], purpose: Purpose201, transactionId?: string): Record<string, unknown> {
  const s = p.chargingSchedule;
  return {
    id: p.chargingProfileId,
    stackLevel: p.stackLevel,
    chargingProfilePurpose: purpose,
    chargingProfileKind: p.chargingProfileKind,
    ...(p.validFrom === undefined ? {} : { validFrom: p.validFrom }),
    ...(p.validTo === undefined ? {} : { validTo: p.validTo }),
    ...(transactionId === undefined ? {} : { transactionId }),
    chargingSchedule: [
      {
        id: p.chargingProfileId,
        ...(s.startSchedule === undefined ? {} : { startSchedule: s.startSchedule }),
        ...(s.duration === undefined ? {} : { duration: s.duration }),
        chargingRateUnit: s.chargingRateUnit,
        chargingSchedulePeriod: s.chargingSchedulePeriod.map((x) => ({ startPeriod: x.startPeriod, limit: x.limit, ...(x.numberPhases === undefined ? {} : { numberPhases: x.numberPhases }) })),
      },
    ],
  };
}

export interface ClearChargingProfile16 {
  readonly id?: number;
  readonly connectorId?: number;
  readonly chargingProfilePurpose?: string;
  readonly stackLevel?: number;
}

export function clearChargingProfile201(r: ClearChargingProfile16): Call201 {
  const purpose = r.chargingProfilePurpose === undefined ? undefined : PURPOSE_201[r.chargingProfilePurpose];
  if (r.chargingProfilePurpose !== undefined && !purpose) return { refused: `chargingProfilePurpose ${r.chargingProfilePurpose} has no OCPP 2.0.1 equivalent` };
  const criteria = {
    ...(r.connectorId === undefined ? {} : { evseId: r.connectorId }),
    ...(purpose === undefined ? {} : { chargingProfilePurpose: purpose }),
    ...(r.stackLevel === undefined ? {} : { stackLevel: r.stackLevel }),
  };
  return {
    action: 'ClearChargingProfile',
    request: { ...(r.id === undefined ? {} : { chargingProfileId: r.id }), ...(Object.keys(criteria).length === 0 ? {} : { chargingProfileCriteria: criteria }) },
  };
}

export function getCompositeSchedule201(r: { readonly connectorId: number; readonly duration: number; readonly chargingRateUnit?: 'A' | 'W' }): Call201 {
  return { action: 'GetCompositeSchedule', request: { evseId: r.connectorId, duration: r.duration, ...(r.chargingRateUnit === undefined ? {} : { chargingRateUnit: r.chargingRateUnit }) } };
}

interface CompositeSchedule201 {
  readonly evseId: number;
  readonly duration: number;
  readonly scheduleStart: string;
  readonly chargingRateUnit: string;
  readonly chargingSchedulePeriod: ReadonlyArray<Record<string, unknown>>;
}

/** GetCompositeSchedule's 2.0.1 answer as 1.6's (connectorId, scheduleStart, chargingSchedule), the 2.0.1 fields kept beside. */
export function compositeScheduleAnswer16(a: Record<string, unknown>): Record<string, unknown> {
  const schedule = a.schedule as CompositeSchedule201 | undefined;
  if (!schedule) return a;
  return {
    ...a,
    connectorId: schedule.evseId,
    scheduleStart: schedule.scheduleStart,
    chargingSchedule: { duration: schedule.duration, startSchedule: schedule.scheduleStart, chargingRateUnit: schedule.chargingRateUnit, chargingSchedulePeriod: schedule.chargingSchedulePeriod },
  };
}

/**
 * The gateway's own limit call that no operator form carries: SetChargingProfile (limit-client.ts
 * takes an operation's form first: RemoteStopTransaction, ChangeAvailability and
 * ClearChargingProfile go by their files in operations/). Any other action has no 2.0.1 form
 * here (GetConfiguration: a 2.0.1 station's device model is read otherwise).
 */
export function limitCall201(action: string, params: unknown, ids: StationTransactionIds): Call201 {
  if (action === 'SetChargingProfile') return setChargingProfile201(params as SetChargingProfileRequest, ids);
  return { refused: `${action} has no OCPP 2.0.1 form among the gateway's limit calls` };
}
