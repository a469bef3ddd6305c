// RemoteStopTransaction as OCPP 2.0.1 RequestStopTransaction (F03, TC_E_21): the operator names
// our integer transaction id (as for 1.6: GET …/transactions, the cdrs); the station is sent
// its own string id for it (store/ocpp201-transactions.ts). A transaction that is not one of
// this station's 2.0.1 transactions is refused with the reason (409), nothing sent: the
// station could only answer Rejected for an id it never had. The answer is 1.6's.
import { registerOperationForm201 } from '../operation-forms.js';

registerOperationForm201('RemoteStopTransaction', {
  toCall: (request, ctx) => {
    const transactionId = Number(request.transactionId);
    const theirs = ctx.transactions.chargerTransaction(transactionId);
    if (!theirs || theirs.chargePointId !== ctx.chargePointId) {
      return { refused: `transaction ${transactionId} is not a transaction of this station (GET /api/v1/chargers/${ctx.chargePointId}/transactions lists them)` };
    }
    return { action: 'RequestStopTransaction', request: { transactionId: theirs.chargerTransactionId } };
  },
  toAnswer: (answer, _ctx, sent) => ({ ...answer, chargerTransactionId: sent.transactionId }),
});
