// GetCompositeSchedule (OCPP 2.0.1 K08): connectorId -> evseId (0: the whole station); the
// station's schedule comes back in 1.6's shape (connectorId, scheduleStart, chargingSchedule)
// so the route compares it with the plan as for a 1.6 charger, its 2.0.1 fields kept beside.
import { compositeScheduleAnswer16, getCompositeSchedule201 } from '../charging-profiles.js';
import { registerOperationForm201 } from '../operation-forms.js';

registerOperationForm201('GetCompositeSchedule', {
  toCall: (request) => getCompositeSchedule201(request as { connectorId: number; duration: number; chargingRateUnit?: 'A' | 'W' }),
  toAnswer: (answer) => compositeScheduleAnswer16(answer),
});
