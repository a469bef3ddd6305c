// A stopped charger transaction's signed values verified against its edges and the key
// configured for its connector: what its cdr carries, the status page shows and /metrics
// counts (one computation for all three). Reads the store; the verification is pure.
import type { ChargerConfig } from '../config/types.js';
import type { OcppStore } from '../store/ocpp.js';
import type { SignedValueStore } from '../store/signed-values.js';
import { meterKeyOf } from './ocmf-signature.js';
import { verifySession, type SessionVerification } from './session-verification.js';

export interface TransactionSignedData {
  readonly transactionId: number;
  readonly chargePointId: string;
  readonly connectorId: number;
  readonly verification: SessionVerification;
  /** A key is configured for the connector: the charger is expected to sign (an unsigned session is then named). */
  readonly keyConfigured: boolean;
}

/** Null for an unknown or open transaction. */
export function transactionSignedData(ocpp: OcppStore, signed: SignedValueStore, chargers: readonly ChargerConfig[], transactionId: number): TransactionSignedData | null {
  const tx = ocpp.transaction(transactionId);
  if (!tx || tx.stoppedAtMs === null || tx.meterStopWh === null) return null;
  const key = meterKeyOf(chargers.find((c) => c.id === tx.chargePointId), tx.connectorId);
  const verification = verifySession(signed.ofTransaction(transactionId), { startedAtMs: tx.startedAtMs, stoppedAtMs: tx.stoppedAtMs, meterStartWh: tx.meterStartWh, meterStopWh: tx.meterStopWh }, key);
  return { transactionId, chargePointId: tx.chargePointId, connectorId: tx.connectorId, verification, keyConfigured: key !== null };
}

/** Whether the cdr carries signed data: the charger signed, or a key says it should have. */
export const carriesSignedData = (d: TransactionSignedData): boolean => d.verification.values.length > 0 || d.keyConfigured;
