// ChangeAvailability as OCPP 2.0.1 ChangeAvailability (G03, G04): type Operative/Inoperative
// is operationalStatus; connector 0 is the whole station (no evse), another connector its
// EVSE (a 1.6 connector is a 2.0.1 EVSE, v201/provisioning.ts). The answer's status
// (Accepted, Rejected, Scheduled) passes as it came, with statusInfo beside.
import { registerOperationForm201 } from '../operation-forms.js';

registerOperationForm201('ChangeAvailability', {
  toCall: (request) => {
    const connectorId = Number(request.connectorId);
    return { action: 'ChangeAvailability', request: { operationalStatus: request.type, ...(connectorId > 0 ? { evse: { id: connectorId } } : {}) } };
  },
  toAnswer: (answer) => answer,
});
