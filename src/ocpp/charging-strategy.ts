// How a connector's plan reaches a charger that refuses some of what OCPP 1.6 offers
// (docs/chargers.md "Chargers that say no"). Pure: what the charger declared and what it
// refused before in, the strategy in force and why out; no I/O (the profile dispatcher
// sends, stores and falls through to the next strategy when a charger refuses one).
//
// The ladder, first that applies:
//   tx-profile                          the whole plan as a TxProfile (a transaction is open)
//   tx-default-profile                  the whole plan as a TxDefaultProfile
//   tx-profile-by-period                the plan a few periods at a time (its
//   tx-default-profile-by-period          ChargingScheduleMaxPeriods when the plan is longer,
//                                         else one), re-sent at each boundary
//   charge-point-max-profile            the plan as the charger's ChargePointMaxProfile
//   charge-point-max-profile-by-period    (connector 0): only for a charger with one connector
//   remote-start-stop                   no profile at all: RemoteStopTransaction where the
//                                         plan holds the car at 0, RemoteStartTransaction where
//                                         it charges again
// A strategy is skipped when the charger refused it before (Rejected), when it refused
// profiles outright (NotSupported answer, NotImplemented/NotSupported CallError) or does not
// declare SmartCharging among its SupportedFeatureProfiles, when it needs an open
// transaction there is none of, or when the whole plan has more periods than the charger
// takes. So a car is never held at 0 A with a kind of profile its charger refused before:
// the pause falls to the next strategy. "Before" is the refusal's back-off window
// (refusalsInForce): ocpp.refusal_retry_h since it, within the charger's boot and firmware;
// then the strategy is tried again. The unit (A or W) is the one the charger allows.
import { chargingRateUnitFor } from './charging-profile.js';

export const STRATEGIES = [
  'tx-profile',
  'tx-default-profile',
  'tx-profile-by-period',
  'tx-default-profile-by-period',
  'charge-point-max-profile',
  'charge-point-max-profile-by-period',
  'remote-start-stop',
] as const;
export type StrategyName = (typeof STRATEGIES)[number];

export type ProfilePurpose = 'TxProfile' | 'TxDefaultProfile' | 'ChargePointMaxProfile';

/** What the charger declared with GetConfiguration; null where it did not say (unknown key, never read). */
export interface ChargerCapabilities {
  readonly supportedFeatureProfiles: readonly string[] | null;
  readonly maxStackLevel: number | null;
  readonly allowedChargingRateUnit: string | null;
  readonly maxPeriods: number | null;
}

/**
 * An ISO 15118 car takes at most maxScheduleTuples periods per schedule (its
 * NotifyEVChargingNeeds, v201/charging-needs.ts): while its transaction is open that bounds
 * the profile as a charger's ChargingScheduleMaxPeriods does (a longer plan goes a few
 * periods at a time: the by-period strategies above), whichever is lower.
 */
export function withCarScheduleTuples(capabilities: ChargerCapabilities, carTuples: number | null): ChargerCapabilities {
  if (carTuples === null || carTuples < 1) return capabilities;
  return { ...capabilities, maxPeriods: Math.min(capabilities.maxPeriods ?? Number.POSITIVE_INFINITY, carTuples) };
}

/** A charger's refusal of a strategy's profile, remembered per charger ('all-profiles': it refused SetChargingProfile outright). */
export interface Refusal {
  readonly strategy: StrategyName | 'all-profiles';
  /** Its answer: Rejected, NotSupported, or the CallError code (NotImplemented, ...). */
  readonly answer: string;
  readonly atMs: number;
  /** The firmware it ran then (BootNotification firmwareVersion; null: none sent). */
  readonly firmwareVersion?: string | null;
}

/** How long a refusal counts (ocpp.refusal_retry_h): after it the refused strategy is tried again. */
export const DEFAULT_REFUSAL_RETRY_H = 24;

/** The charger now, as far as its refusals go. */
export interface RefusalWindow {
  /** The firmware it runs (its last BootNotification; null: none sent). */
  readonly firmwareVersion: string | null;
  /** When it last booted (gateway time; null: never seen booting). */
  readonly bootedAtMs: number | null;
  readonly nowMs: number;
  /** How long after it a refusal stops counting (ocpp.refusal_retry_h). */
  readonly retryAfterMs: number;
}

/**
 * The refusals that count for a charger now: those made within the back-off window
 * (`retryAfterMs`: a one-off refusal does not demote it for good; a refusal again starts a
 * new window), since its last boot (a reboot may clear what made it refuse), and under the
 * firmware it runs (an update may bring what it refused). A refusal stored without a
 * firmware (undefined) passes the firmware rule.
 */
export function refusalsInForce(refusals: readonly Refusal[], w: RefusalWindow): Refusal[] {
  return refusals.filter(
    (r) => (r.firmwareVersion === undefined || r.firmwareVersion === w.firmwareVersion) && w.nowMs - r.atMs < w.retryAfterMs && (w.bootedAtMs === null || r.atMs >= w.bootedAtMs),
  );
}

export interface StrategyInput {
  readonly capabilities: ChargerCapabilities;
  readonly refusals: readonly Refusal[];
  /** A transaction is open on the connector. */
  readonly transactionOpen: boolean;
  /** chargingSchedulePeriod entries the whole plan needs. */
  readonly planPeriods: number;
  /** The connector is the charger's only configured one (a ChargePointMaxProfile limits the whole charger). */
  readonly soleConnector: boolean;
  /**
   * A car this gateway stopped by RemoteStopTransaction waits on the connector (remote-start-stop
   * in force, a paused transaction, none open). No profile starts it again, only a
   * RemoteStartTransaction: remote-start-stop stays until it has, also once a refusal's window ended.
   */
  readonly pausedByRemoteStop?: boolean;
}

export interface ChargingStrategy {
  readonly name: StrategyName;
  /** The profile sent; null for remote-start-stop. */
  readonly purpose: ProfilePurpose | null;
  /** Periods per profile (by-period strategies); null: the whole plan. */
  readonly periodsPerProfile: number | null;
  readonly rateUnit: 'A' | 'W';
  /** Why this one: each strategy above it and why it was passed over (empty for tx-profile). */
  readonly skipped: ReadonlyArray<{ readonly strategy: StrategyName; readonly why: string }>;
  /** One sentence for people: the strategy and why. */
  readonly reason: string;
}

const PURPOSE: Record<StrategyName, ProfilePurpose | null> = {
  'tx-profile': 'TxProfile',
  'tx-default-profile': 'TxDefaultProfile',
  'tx-profile-by-period': 'TxProfile',
  'tx-default-profile-by-period': 'TxDefaultProfile',
  'charge-point-max-profile': 'ChargePointMaxProfile',
  'charge-point-max-profile-by-period': 'ChargePointMaxProfile',
  'remote-start-stop': null,
};

const isByPeriod = (s: StrategyName) => s.endsWith('-by-period');

/** Whether an answer to SetChargingProfile (status, or CallError code) says the charger takes no profiles at all. */
export function refusesAllProfiles(answer: string): boolean {
  return answer === 'NotSupported' || answer === 'NotImplemented';
}

/**
 * Whether an answer is a refusal to remember: Rejected or NotSupported, or a CallError the
 * charger sent (its code). A call that was not answered (timeout, connection lost: 'error')
 * says nothing about what the charger takes.
 */
export function isRefusal(answer: string): boolean {
  return answer !== 'Accepted' && answer !== 'error';
}

export function chooseStrategy(input: StrategyInput): ChargingStrategy {
  const { capabilities: caps, refusals } = input;
  const rateUnit = chargingRateUnitFor(caps.allowedChargingRateUnit);
  const refusedAll = refusals.find((r) => r.strategy === 'all-profiles');
  const noSmartCharging = caps.supportedFeatureProfiles !== null && !caps.supportedFeatureProfiles.some((p) => p.trim().toLowerCase() === 'smartcharging');
  const maxPeriods = caps.maxPeriods !== null && caps.maxPeriods >= 1 ? Math.floor(caps.maxPeriods) : null;
  const skipped: Array<{ strategy: StrategyName; why: string }> = [];
  for (const name of STRATEGIES) {
    const why = whyNot(name);
    if (why === null) {
      // As many periods as it takes when the whole plan is too long for it; one when a whole plan it could take was refused (the same cut again would be no different).
      const periodsPerProfile = isByPeriod(name) ? (maxPeriods !== null && input.planPeriods > maxPeriods ? maxPeriods : 1) : null;
      const reason = skipped.length === 0 ? `${name}: the charger takes the whole plan as a TxProfile` : `${name}: ${skipped.map((s) => `${s.strategy} ${s.why}`).join('; ')}`;
      return { name, purpose: PURPOSE[name], periodsPerProfile, rateUnit, skipped, reason };
    }
    skipped.push({ strategy: name, why });
  }
  // remote-start-stop always applies (whyNot returns null for it): not reached.
  throw new Error('no charging strategy applies');

  function whyNot(name: StrategyName): string | null {
    if (name === 'remote-start-stop') return null;
    if (input.pausedByRemoteStop) return 'waits: the car paused by RemoteStopTransaction has not started again (only a RemoteStartTransaction starts it)';
    if (noSmartCharging) return `not possible: SupportedFeatureProfiles (${caps.supportedFeatureProfiles!.join(',')}) has no SmartCharging`;
    if (refusedAll) return `not possible: the charger refused charging profiles outright (${refusedAll.answer} at ${new Date(refusedAll.atMs).toISOString()})`;
    const refused = refusals.find((r) => r.strategy === name);
    if (refused) return `refused before (${refused.answer} at ${new Date(refused.atMs).toISOString()})`;
    if (PURPOSE[name] === 'TxProfile' && !input.transactionOpen) return 'needs an open transaction';
    if (PURPOSE[name] === 'ChargePointMaxProfile' && !input.soleConnector) return 'limits the whole charger, which has more than one connector';
    if (!isByPeriod(name) && maxPeriods !== null && input.planPeriods > maxPeriods) return `needs ${input.planPeriods} periods, the charger takes ${maxPeriods} (ChargingScheduleMaxPeriods)`;
    return null;
  }
}
