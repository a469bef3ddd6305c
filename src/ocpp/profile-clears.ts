// Clearing the charging profiles the gateway set on a connector (docs/chargers.md "Clearing
// profiles"), so a charger is not left throttled by a plan nobody wants any more: its target
// was deleted, or the transaction it was for stopped. Each profile id the gateway uses on
// the connector (TxDefaultProfile and TxProfile, charging-profile.ts chargingProfileIdOf)
// gets a ClearChargingProfile by that id; a charger that does not hold it answers Unknown.
// Requests are stored first (pending) and sent when the charger is connected, now or when
// it next connects; each answer is stored as SetChargingProfile answers are.
import type { Logger } from '../log.js';
import type { ChargingProfileStore, ProfileClear } from '../store/charging-profiles.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import type { CallOptions } from './charger-client.js';
import { chargingProfileIdOf, type ChargingProfilePurpose } from './charging-profile.js';

/** What sending needs of an ocpp-rpc client. */
export interface CallingClient {
  readonly identity: string;
  call(method: string, params: unknown, opts?: CallOptions): Promise<unknown>;
}

/** Stores a pending clear of every profile id the gateway uses on the connector (the ChargePointMaxProfile's too when its strategy sent one). */
export function requestClears(
  store: ChargingProfileStore,
  where: { chargePointId: string; connectorId: number; reason: ProfileClear['reason']; atMs: number },
  purposes: readonly ChargingProfilePurpose[] = ['TxProfile', 'TxDefaultProfile'],
): void {
  for (const purpose of purposes) {
    store.putClear({
      chargePointId: where.chargePointId,
      connectorId: where.connectorId,
      chargingProfileId: chargingProfileIdOf(where.connectorId, purpose),
      reason: where.reason,
      requestedAtMs: where.atMs,
      sentAtMs: null,
      status: 'pending',
      error: null,
    });
  }
}

/**
 * Sends the charger's pending clears. All calls are issued before the first answer is
 * awaited, in the safety lane with the SetChargingProfiles (call-lanes.ts): a lane sends
 * one call at a time in the order issued, so a plan sent after this (possibly under the
 * same profile id) is set after the clear, not removed by it. Each waits for its answer at
 * most `callTimeoutMs`: a lowering behind it in the lane waits that long at worst.
 */
export async function sendPendingClears(client: CallingClient, store: ChargingProfileStore, writes: StoreWriteQueue, nowMs: () => number, logger: Logger, callTimeoutMs: number): Promise<void> {
  const pending = store.pendingClears(client.identity);
  await Promise.all(
    pending.map(async (clear) => {
      const sentAtMs = nowMs();
      let status: string;
      let error: string | null = null;
      try {
        status = ((await client.call('ClearChargingProfile', { id: clear.chargingProfileId }, { lane: 'safety', callTimeoutMs })) as { status: string }).status;
      } catch (err) {
        // A CallError the charger sent (NotImplemented, ...) is its answer, not sent again; no answer is tried again.
        const code = (err as { rpcErrorCode?: unknown }).rpcErrorCode;
        status = typeof code === 'string' && code !== '' ? code : 'error';
        error = (err as Error).message.slice(0, 500);
      }
      // While the store refuses writes the answer waits in its queue (store/write-queue.ts).
      await writes.run(`ClearChargingProfile answer of ${clear.chargePointId}`, () => store.putClear({ ...clear, sentAtMs, status, error }));
      const fields = { charge_point_id: clear.chargePointId, connector_id: clear.connectorId, charging_profile_id: clear.chargingProfileId, reason: clear.reason, status, err: error === null ? undefined : { message: error } };
      if (status === 'error') logger.warn(fields, 'charging profile clear not answered by the charger');
      else logger.info(fields, 'charging profile cleared');
    }),
  );
}
