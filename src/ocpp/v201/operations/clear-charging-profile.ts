// ClearChargingProfile (OCPP 2.0.1 K10): the operator's 1.6 request (by id, or by connector,
// purpose and stack level) as 2.0.1's chargingProfileId or chargingProfileCriteria
// (charging-profiles.ts, the same translation the gateway's own clears take); the answer
// ({status: Accepted|Unknown}) has 1.6's shape already.
import { clearChargingProfile201, type ClearChargingProfile16 } from '../charging-profiles.js';
import { registerOperationForm201 } from '../operation-forms.js';

registerOperationForm201('ClearChargingProfile', {
  toCall: (request) => clearChargingProfile201(request as ClearChargingProfile16),
  toAnswer: (answer) => answer,
});
