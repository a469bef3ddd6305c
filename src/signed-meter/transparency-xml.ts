// Pure: a session's signed documents in the XML the S.A.F.E. transparency software opens
// (`<values><value transactionId context><signedData format encoding="plain">…</signedData>
// <publicKey encoding="hex">…`), one `value` per document, the text exactly as signed (no
// white space around it, or the software cannot verify it). Its own file: fast-xml-parser
// is loaded only when a session's XML is asked for.
import { XMLBuilder } from 'fast-xml-parser';
import type { SignedFormat } from './formats.js';
import type { SessionVerification } from './session-verification.js';

const XML_FORMAT: Readonly<Record<SignedFormat, string>> = { OCMF: 'OCMF', EDL40: 'EDL', ALFEN: 'ALFEN', unknown: 'unknown' };

/** The transparency software's XML for the session's documents (`transactionId`: the OCPP transaction's). */
export function transparencyXml(transactionId: number, v: SessionVerification): string {
  const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, indentBy: '  ' });
  const value = v.values.map((x) => ({
    '@_transactionId': String(transactionId),
    '@_context': x.context || (x.nature === 'Start' ? 'Transaction.Begin' : x.nature === 'End' ? 'Transaction.End' : 'Sample.Periodic'),
    signedData: { '@_format': XML_FORMAT[x.format], '@_encoding': 'plain', '@_transactionId': String(transactionId), '#text': x.value.trim() },
    ...(v.publicKeyHex !== null ? { publicKey: { '@_encoding': 'hex', '#text': v.publicKeyHex } } : {}),
  }));
  return builder.build({ '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' }, values: { value } }) as string;
}
