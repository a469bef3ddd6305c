// The notifications a 2.0.1 station sends on its own in normal operation, which the CSMS only
// acknowledges (their answers are empty): NotifyEvent (a variable changed: a station sends
// one beside most StatusNotifications), SecurityEventNotification (at boot, after a reset, a
// failed login), FirmwareStatusNotification, LogStatusNotification, NotifyReport and
// NotifyMonitoringReport (answers to requests the gateway does not send yet). Answered `{}`
// and logged, not stored yet (docs/chargers.md "OCPP 2.0.1": the device model and the
// security log are later blocks). Answering NotImplemented instead makes some stations retry
// or raise a fault for routine messages. Notifications that ask the CSMS to act on them are
// not here: in their block's file (ReservationStatusUpdate: reservations.ts), or
// NotImplemented until their block is done (NotifyChargingLimit, NotifyEVChargingNeeds, ...).
import { registeredOnly, type Connection201 } from './connection.js';

interface SecurityEvent {
  readonly type: string;
  readonly timestamp: string;
  readonly techInfo?: string;
}

export function registerNotifications(c: Connection201): void {
  const { log } = c.tools;
  const on = registeredOnly(c);
  // A security event is for the operator to see: a warning with what the station said (bounded by the schema: 50 and 255 characters).
  on('SecurityEventNotification', (p: SecurityEvent) => {
    log.warn({ security_event: p.type, at: p.timestamp, tech_info: p.techInfo }, 'security event reported by the station (not stored yet)');
    return {};
  }, { store: false });
  on('NotifyEvent', (p: { seqNo: number; tbc?: boolean; eventData: unknown[] }) => {
    log.debug({ seq_no: p.seqNo, events: p.eventData.length }, 'NotifyEvent acknowledged (not stored yet)');
    return {};
  }, { store: false });
  for (const action of ['FirmwareStatusNotification', 'LogStatusNotification', 'NotifyReport', 'NotifyMonitoringReport']) {
    on(action, () => {
      log.info({ action }, 'notification acknowledged (not stored yet)');
      return {};
    }, { store: false });
  }
}
