// Pure: the answer to a DataTransfer a charger sends (OCPP 1.6 section 4.3). The gateway is
// vendor "metergate" and knows one message, Ping (Accepted, data "Pong": a charger or a
// test can check the path both ways); any other vendor gets UnknownVendorId and any other
// message of ours UnknownMessageId, as the protocol says.
export const GATEWAY_VENDOR_ID = 'metergate';

export interface DataTransferRequest {
  readonly vendorId: string;
  readonly messageId?: string;
  readonly data?: string;
}

export type DataTransferAnswer = { readonly status: 'Accepted'; readonly data: string } | { readonly status: 'UnknownVendorId' | 'UnknownMessageId' };

export function dataTransferAnswer(req: DataTransferRequest): DataTransferAnswer {
  if (req.vendorId !== GATEWAY_VENDOR_ID) return { status: 'UnknownVendorId' };
  if (req.messageId === 'Ping') return { status: 'Accepted', data: 'Pong' };
  return { status: 'UnknownMessageId' };
}
