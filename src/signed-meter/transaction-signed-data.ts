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
  /** What it was computed from, to take it again while that stays the same. */
  readonly inputs: string;
}

/**
 * Null for an unknown or open transaction. `reuse`: an earlier result for the same
 * transaction, taken again when nothing it was computed from changed (a status page polled
 * every few seconds does not verify up to 200 documents each time).
 */
export function transactionSignedData(ocpp: OcppStore, signed: SignedValueStore, chargers: readonly ChargerConfig[], transactionId: number, reuse?: TransactionSignedData): TransactionSignedData | null {
  const tx = ocpp.transaction(transactionId);
  if (!tx || tx.stoppedAtMs === null || tx.meterStopWh === null) return null;
  const key = meterKeyOf(chargers.find((c) => c.id === tx.chargePointId), tx.connectorId);
  const values = signed.ofTransaction(transactionId);
  const edges = { startedAtMs: tx.startedAtMs, stoppedAtMs: tx.stoppedAtMs, meterStartWh: tx.meterStartWh, meterStopWh: tx.meterStopWh };
  // Values are only ever added (a repeat adds nothing), so their count says whether they changed.
  const inputs = `${JSON.stringify(edges)}|${key ?? ''}|${values.length}`;
  if (reuse && reuse.transactionId === transactionId && reuse.inputs === inputs) return reuse;
  return { transactionId, chargePointId: tx.chargePointId, connectorId: tx.connectorId, verification: verifySession(values, edges, key, { chargePointId: tx.chargePointId, connectorId: tx.connectorId }), keyConfigured: key !== null, inputs };
}

/** Whether the cdr carries signed data: the charger signed, or a key says it should have. */
export const carriesSignedData = (d: TransactionSignedData): boolean => d.verification.values.length > 0 || d.keyConfigured;
