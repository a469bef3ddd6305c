// RemoteStartTransaction as OCPP 2.0.1 RequestStartTransaction (F01/F02): the id tag as an
// idToken of the charger's id_token_type with its configured group (authorization.ts), the connector as the EVSE (evseId; left
// out: the station chooses), and a remoteStartId of the gateway's that the station sends back
// in the TransactionEvent its start causes (F02.FR.01). The answer keeps 1.6's status, with
// the remoteStartId beside it and, when the station had a transaction already (a cable plugged
// first, TC_F_01), its own id (chargerTransactionId) and ours (transactionId) once stored.
//
// A start with the connector's plan as its profile (charging_profile "plan", K05/TC_K_37): the
// 1.6 TxProfile the route builds goes as 2.0.1's chargingProfile (charging-profiles.ts), a
// TxProfile without transactionId (F01.FR.12: the station binds it to the transaction it starts).
import type { SetChargingProfileRequest } from '../../charging-profile.js';
import { configuredGroup, stationIdToken } from '../authorization.js';
import { chargingProfile201 } from '../charging-profiles.js';
import { registerOperationForm201 } from '../operation-forms.js';

/** 2.0.1 remoteStartId is an integer: seconds since 2020 at start, counted up per request, so ids grow across restarts too. */
const EPOCH_2020_MS = Date.UTC(2020, 0, 1);
let lastRemoteStartId = Math.floor((Date.now() - EPOCH_2020_MS) / 1000);

export function nextRemoteStartId(): number {
  lastRemoteStartId = lastRemoteStartId >= 2_147_483_647 ? 1 : lastRemoteStartId + 1;
  return lastRemoteStartId;
}

registerOperationForm201('RemoteStartTransaction', {
  toCall: (request, ctx) => {
    const profile = request.chargingProfile as SetChargingProfileRequest['csChargingProfiles'] | undefined;
    return {
      action: 'RequestStartTransaction',
      request: {
        idToken: stationIdToken(String(request.idTag), ctx.charger),
        ...configuredGroup(String(request.idTag), ctx.charger),
        remoteStartId: nextRemoteStartId(),
        ...(request.connectorId === undefined ? {} : { evseId: request.connectorId }),
        ...(profile === undefined ? {} : { chargingProfile: chargingProfile201(profile, 'TxProfile') }),
      },
    };
  },
  toAnswer: (answer, ctx, sent) => {
    const chargerTransactionId = typeof answer.transactionId === 'string' ? answer.transactionId : undefined;
    const ours = chargerTransactionId === undefined ? null : ctx.transactions.get(ctx.chargePointId, chargerTransactionId);
    return {
      status: answer.status,
      ...(answer.statusInfo === undefined ? {} : { statusInfo: answer.statusInfo }),
      remoteStartId: sent.remoteStartId,
      ...(chargerTransactionId === undefined ? {} : { chargerTransactionId }),
      ...(ours ? { transactionId: ours.transactionId } : {}),
    };
  },
});
