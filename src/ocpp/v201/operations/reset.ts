// Reset as OCPP 2.0.1 Reset (B11, B12) of the whole station, or of one EVSE when the operator
// names it (`evse_id`, FormContext.only201: a 1.6 Reset has no place for it): Soft is OnIdle
// (after its transactions end, as a 1.6 soft reset stops them gracefully), Hard is Immediate. The answer's
// status passes as it came: Accepted, Rejected, or 2.0.1's Scheduled (OnIdle with a
// transaction running: the station resets when it ends), with statusInfo beside.
import { registerOperationForm201 } from '../operation-forms.js';

registerOperationForm201('Reset', {
  toCall: (request, ctx) => ({ action: 'Reset', request: { type: request.type === 'Hard' ? 'Immediate' : 'OnIdle', ...(typeof ctx.only201?.evseId === 'number' ? { evseId: ctx.only201.evseId } : {}) } }),
  toAnswer: (answer) => answer,
});
