// OCPP 2.0.1 DataTransfer from the station (Part 2, block P: P02): answered by the same rule
// as a 1.6 charger's (ocpp/data-transfer.ts: vendor "metergate" knows Ping, any other vendor
// is UnknownVendorId, any other message of ours UnknownMessageId). 2.0.1's `data` may be any
// JSON (1.6: a string); the gateway reads none of it, so the rule is the same.
import { dataTransferAnswer } from '../data-transfer.js';
import { registeredOnly, type Connection201 } from './connection.js';

export function registerDataTransfer(c: Connection201): void {
  const { log } = c.tools;
  registeredOnly(c)(
    'DataTransfer',
    (p: { vendorId: string; messageId?: string; data?: unknown }) => {
      const answer = dataTransferAnswer({ vendorId: p.vendorId, messageId: p.messageId });
      log.info({ vendor_id: p.vendorId.slice(0, 255), message_id: p.messageId?.slice(0, 50), status: answer.status }, 'DataTransfer from the station answered');
      return answer;
    },
    { store: false },
  );
}
