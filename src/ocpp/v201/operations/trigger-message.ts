// TriggerMessage as OCPP 2.0.1 TriggerMessage (F06). The 1.6 requestedMessage as 2.0.1's
// (the same name for BootNotification, FirmwareStatusNotification, Heartbeat, MeterValues
// and StatusNotification); a 1.6 connector is the station's EVSE (v201/provisioning.ts), and
// a StatusNotification is asked for the EVSE's connector 1. Refused (409): 1.6's
// DiagnosticsStatusNotification (2.0.1 has logs instead, which the gateway does not ask for),
// and StatusNotification of connector 0 (2.0.1 has no status of the whole station). The
// answer's status (Accepted, Rejected, NotImplemented) passes as it came.
import { registerOperationForm201 } from '../operation-forms.js';

const SAME = new Set(['BootNotification', 'FirmwareStatusNotification', 'Heartbeat', 'MeterValues', 'StatusNotification']);

registerOperationForm201('TriggerMessage', {
  toCall: (request) => {
    const message = String(request.requestedMessage);
    const connectorId = request.connectorId as number | undefined;
    if (message === 'DiagnosticsStatusNotification') return { refused: 'DiagnosticsStatusNotification has no 2.0.1 equivalent: 2.0.1 stations keep logs instead of diagnostics (GetLog, LogStatusNotification), which the gateway does not ask for' };
    if (!SAME.has(message)) return { refused: `${message} has no 2.0.1 equivalent` };
    if (message === 'StatusNotification' && connectorId === 0) return { refused: 'a StatusNotification of connector 0 (the whole charge point) has no 2.0.1 equivalent: a 2.0.1 station reports the status of each connector' };
    const evse = connectorId === undefined || connectorId === 0 ? {} : { evse: message === 'StatusNotification' ? { id: connectorId, connectorId: 1 } : { id: connectorId } };
    return { action: 'TriggerMessage', request: { requestedMessage: message, ...evse } };
  },
  toAnswer: (answer) => answer,
});
