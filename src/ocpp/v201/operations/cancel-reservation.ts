// CancelReservation (OCPP 2.0.1 H02): the same call and answer as in 1.6 ({reservationId} -> {status: Accepted|Rejected}).
import { registerOperationForm201 } from '../operation-forms.js';

registerOperationForm201('CancelReservation', {
  toCall: (request) => ({ action: 'CancelReservation', request: { reservationId: request.reservationId } }),
  toAnswer: (answer) => answer,
});
