// The notifications a 2.0.1 station sends on its own in normal operation, which the CSMS only
// acknowledges (their answers are empty): NotifyEvent (a variable changed: a station sends
// one beside most StatusNotifications), FirmwareStatusNotification, LogStatusNotification
// and NotifyMonitoringReport (answers to requests the gateway does not send yet). Answered
// `{}` and logged, not stored (NotifyReport is stored: device-model.ts). SecurityEventNotification is stored: security.ts. Answering
// NotImplemented instead makes some stations retry or raise a fault for routine messages.
// Notifications that ask the CSMS to act on them are not here: in their block's file
// (ReservationStatusUpdate: reservations.ts; NotifyEVChargingNeeds and
// NotifyEVChargingSchedule: charging-needs.ts), or NotImplemented until their block is done
// (NotifyChargingLimit, ...).
import { registeredOnly, type Connection201 } from './connection.js';

export function registerNotifications(c: Connection201): void {
  const { log } = c.tools;
  const on = registeredOnly(c);
  on('NotifyEvent', (p: { seqNo: number; tbc?: boolean; eventData: unknown[] }) => {
    log.debug({ seq_no: p.seqNo, events: p.eventData.length }, 'NotifyEvent acknowledged (not stored yet)');
    return {};
  }, { store: false });
  for (const action of ['FirmwareStatusNotification', 'LogStatusNotification', 'NotifyMonitoringReport']) {
    on(action, () => {
      log.info({ action }, 'notification acknowledged (not stored yet)');
      return {};
    }, { store: false });
  }
}
