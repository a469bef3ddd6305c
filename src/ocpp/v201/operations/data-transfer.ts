// DataTransfer to the station (OCPP 2.0.1 P01): the same fields as 1.6 (vendorId up to 255,
// messageId up to 50, data). 2.0.1's `data` may be any JSON: a string comes in the 1.6-shaped
// request, anything else beside it (FormContext.only201; the HTTP route refuses it for a 1.6
// charger). The station's answer (status Accepted/Rejected/UnknownMessageId/UnknownVendorId as
// in 1.6, its `data` any JSON, and a statusInfo 1.6 lacks) is returned as it came: 1.6's answer
// with 2.0.1's fields beside it.
import { registerOperationForm201 } from '../operation-forms.js';

registerOperationForm201('DataTransfer', {
  toCall: (r, ctx) => {
    const data = ctx.only201?.data ?? r.data;
    return { action: 'DataTransfer', request: { vendorId: r.vendorId, ...(r.messageId === undefined ? {} : { messageId: r.messageId }), ...(data === undefined ? {} : { data }) } };
  },
  toAnswer: (answer) => answer,
});
