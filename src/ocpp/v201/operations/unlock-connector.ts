// UnlockConnector as OCPP 2.0.1 UnlockConnector (F05): the 1.6 connector is the station's EVSE
// (v201/provisioning.ts), unlocked at its connector 1 (an EVSE with one cable, as the
// connector mapping of the gateway assumes). The answer's status in 1.6's words: Unlocked and
// UnlockFailed as they are, OngoingAuthorizedTransaction is UnlockFailed (the station would not
// unlock under a running transaction), UnknownConnector is NotSupported; the station's own
// status and statusInfo beside (ocpp201).
import { registerOperationForm201 } from '../operation-forms.js';

const STATUS_16: Record<string, string> = { Unlocked: 'Unlocked', UnlockFailed: 'UnlockFailed', OngoingAuthorizedTransaction: 'UnlockFailed', UnknownConnector: 'NotSupported' };

registerOperationForm201('UnlockConnector', {
  toCall: (request) => {
    const connectorId = Number(request.connectorId);
    if (connectorId === 0) return { refused: 'UnlockConnector of connector 0 has no 2.0.1 equivalent: a 2.0.1 station unlocks one EVSE\'s connector' };
    return { action: 'UnlockConnector', request: { evseId: connectorId, connectorId: 1 } };
  },
  toAnswer: (answer) => ({ status: STATUS_16[String(answer.status)] ?? 'UnlockFailed', ocpp201: answer }),
});
