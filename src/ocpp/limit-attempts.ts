// How the fuse controller (fuse-controller.ts) and the profile dispatcher (profile-dispatcher.ts)
// talk about putting a connector's limit in force: the controller asks (LimitSender), the
// dispatcher reports every call it makes for a connector's limit and its answer
// (LimitObserver), whoever started it — a plan, a boot, a transaction start or the controller.
import type { LimitMeans } from '../planning/connector-control.js';
import type { TargetPlan } from '../planning/target-plan.js';
import type { ChargingTarget } from '../store/charging-targets.js';
import type { SetChargingProfileRequest } from './charging-profile.js';

export interface LimitRequest {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly means: Exclude<LimitMeans, 'profile'>;
  readonly plan: TargetPlan;
  readonly target: ChargingTarget;
  readonly plannedAtMs: number;
  /** The connector's limit per phase to put in force (A): the plan's highest from now for a profile; 0 for a stop. */
  readonly limitA: number;
  readonly transactionId: number | null;
}

/** A charge-now plan (planning/charge-now.ts) for a connector with no target: it has no stored target for the dispatcher to plan from. */
export interface PlanRequest {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly plan: TargetPlan;
  readonly target: ChargingTarget;
  readonly plannedAtMs: number;
}

export interface LimitSender {
  /** Sends a plan by the connector's strategy ladder, as a stored target's plan goes; never rejects (the observer hears the calls). */
  sendPlan(r: PlanRequest): Promise<void>;
  /** Sends an escalation means for the connector; never rejects (the observer hears the call and its answer). */
  sendLimit(r: LimitRequest): Promise<void>;
  /** Clears the ChargePointMaxProfile an escalation set once the connector's own profile holds again. */
  clearEscalationProfile(chargePointId: string, connectorId: number): Promise<void>;
}

export interface LimitSent {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly means: LimitMeans;
  /** The profile sent (a by-period cut as sent); null for RemoteStopTransaction and ChangeAvailability (limit 0). */
  readonly request: SetChargingProfileRequest | null;
  readonly transactionId: number | null;
  readonly atMs: number;
}

export interface LimitAnswered {
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly sentAtMs: number;
  /** Accepted; refused (Rejected, NotSupported, a CallError); unanswered (timeout, connection lost). */
  readonly outcome: 'accepted' | 'refused' | 'unanswered';
  /** The answer as it came: status, CallError code, or 'error'. */
  readonly answer: string;
  /**
   * Whether an Accepted answer binds the connector's limit to what was sent: a TxProfile for its
   * transaction, a TxDefaultProfile where no TxProfile of ours is in force, a ChargePointMaxProfile,
   * an accepted stop or Inoperative. A TxDefaultProfile under a TxProfile does not (OCPP 1.6 3.13.2).
   */
  readonly binds: boolean;
  readonly atMs: number;
}

export interface LimitObserver {
  limitSent(e: LimitSent): void;
  limitAnswered(e: LimitAnswered): void;
}
