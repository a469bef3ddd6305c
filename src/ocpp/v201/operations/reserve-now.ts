// ReserveNow (OCPP 2.0.1 H01): the reservation the gateway keeps (reservations.ts) in 2.0.1's
// shape: id for reservationId, expiryDateTime for expiryDate, the id tag as an idToken of the
// charger's id_token_type, its parent as the groupIdToken (TC_H_19; the operator's
// parent_id_tag, else the tag's configured one), the connector as the EVSE
// (evseId; connector 0, any EVSE: left out, TC_H_08), and the operator's connector_type when
// given (TC_H_15: a 2.0.1 field the 1.6 request has no place for). The answer (Accepted,
// Faulted, Occupied, Rejected, Unavailable) is 1.6's.
import { configuredGroup, groupIdToken, stationIdToken } from '../authorization.js';
import { registerOperationForm201 } from '../operation-forms.js';

registerOperationForm201('ReserveNow', {
  toCall: (request, ctx) => {
    const connectorType = ctx.only201?.connectorType;
    return {
      action: 'ReserveNow',
      request: {
        id: request.reservationId,
        expiryDateTime: request.expiryDate,
        idToken: stationIdToken(String(request.idTag), ctx.charger),
        ...(request.parentIdTag === undefined ? configuredGroup(String(request.idTag), ctx.charger) : { groupIdToken: groupIdToken(String(request.parentIdTag)) }),
        ...(request.connectorId === 0 ? {} : { evseId: request.connectorId }),
        ...(typeof connectorType === 'string' ? { connectorType } : {}),
      },
    };
  },
  toAnswer: (answer) => answer,
});
