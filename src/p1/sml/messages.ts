// The messages of an SML file (SML 1.04, section 7) as far as a meter's push needs them: each
// message is a list of six (transactionId, groupNo, abortOnError, messageBody, crc16, end);
// the body is a list of two (tag, content). SML_GetList.Res (tag 0x0701) carries the values:
// content (clientId, serverId, listName, actSensorTime, valList, listSignature,
// actGatewayTime), each valList entry (objName, status, valTime, unit, scaler, value,
// valueSignature). Open and close responses carry no values and are skipped. Pure.
import { decodeNode, SmlDecodeError, type SmlNode } from './tl.js';

const GET_LIST_RES = 0x0701n;

/** One value-list entry, decoded. */
export interface SmlEntry {
  /** The 6-byte OBIS code as `A-B:C.D.E*F`, e.g. `1-0:1.8.0*255`. */
  readonly obis: string;
  /** DLMS unit code (IEC 62056-62): 27 W, 30 Wh, 33 A, 35 V, ...; null when left out. */
  readonly unit: number | null;
  /** Power of ten the value is scaled by (signed int8); 0 when left out. */
  readonly scaler: number;
  readonly value: { readonly kind: 'number'; readonly value: bigint } | { readonly kind: 'octets'; readonly bytes: Buffer } | { readonly kind: 'boolean'; readonly value: boolean } | { readonly kind: 'absent' };
}

export interface SmlList {
  /** The server id of the GetList.Res (the meter's id, e.g. 09 01 45 4D 48 ...), null when left out. */
  readonly serverId: Buffer | null;
  readonly entries: readonly SmlEntry[];
}

/** The value lists of an SML file's messages (in order); a structure other than SML's is an SmlDecodeError. */
export function smlLists(data: Buffer): SmlList[] {
  const lists: SmlList[] = [];
  let offset = 0;
  while (offset < data.length) {
    // Zero bytes after the last message (padding a meter did not count) are not a message.
    if (data.subarray(offset).every((b) => b === 0)) break;
    const { node, next } = decodeNode(data, offset);
    offset = next;
    const message = listOf(node, 6, 'message');
    if (message[5]!.type !== 'end') throw new SmlDecodeError('message does not end with 0x00');
    const [tag, content] = listOf(message[3]!, 2, 'message body');
    if (tag!.type !== 'uint') throw new SmlDecodeError('message body tag is not an unsigned integer');
    if (tag!.value !== GET_LIST_RES) continue;
    const [, serverId, , , valList] = listOf(content!, 7, 'SML_GetList.Res');
    const entries = valList!.type === 'absent' ? [] : listOf(valList!, null, 'valList').map(entry);
    lists.push({ serverId: serverId!.type === 'octets' ? serverId!.bytes : null, entries });
  }
  return lists;
}

function entry(node: SmlNode): SmlEntry {
  const [objName, , , unit, scaler, value] = listOf(node, 7, 'valList entry');
  if (objName!.type !== 'octets' || objName!.bytes.length !== 6) throw new SmlDecodeError('valList entry objName is not a 6-byte OBIS code');
  const o = objName!.bytes;
  const obis = `${o[0]}-${o[1]}:${o[2]}.${o[3]}.${o[4]}*${o[5]}`;
  if (unit!.type !== 'absent' && (unit!.type !== 'uint' || unit!.size !== 1)) throw new SmlDecodeError(`${obis}: unit is not an unsigned 8-bit code`);
  if (scaler!.type !== 'absent' && (scaler!.type !== 'int' || scaler!.size !== 1)) throw new SmlDecodeError(`${obis}: scaler is not a signed 8-bit integer`);
  const v = value!;
  return {
    obis,
    unit: unit!.type === 'uint' ? Number(unit!.value) : null,
    scaler: scaler!.type === 'int' ? Number(scaler!.value) : 0,
    value:
      v.type === 'int' || v.type === 'uint'
        ? { kind: 'number', value: v.value }
        : v.type === 'octets'
          ? { kind: 'octets', bytes: v.bytes }
          : v.type === 'boolean'
            ? { kind: 'boolean', value: v.value }
            : v.type === 'absent'
              ? { kind: 'absent' }
              : fail(`${obis}: value is a ${v.type}`),
  };
}

function listOf(node: SmlNode, length: number | null, what: string): readonly SmlNode[] {
  if (node.type !== 'list') throw new SmlDecodeError(`${what} is not a list`);
  if (length !== null && node.items.length !== length) throw new SmlDecodeError(`${what} has ${node.items.length} elements, not ${length}`);
  return node.items;
}

function fail(message: string): never {
  throw new SmlDecodeError(message);
}
