// The type-length encoding of SML (SML 1.04, section 6.3). Pure. Each field starts with a TL
// byte: bit 7 "another TL byte follows", bits 6-4 the type (000 octet string, 100 boolean,
// 101 signed, 110 unsigned integer, 111 list), bits 3-0 the length: for a list the number of
// elements, otherwise the field's whole length in bytes including the TL bytes. Further TL
// bytes add four length bits each. 0x01 is an optional field left out; 0x00 ends a message.

export type SmlNode =
  | { readonly type: 'octets'; readonly bytes: Buffer }
  | { readonly type: 'boolean'; readonly value: boolean }
  | { readonly type: 'int'; readonly value: bigint; readonly size: number }
  | { readonly type: 'uint'; readonly value: bigint; readonly size: number }
  | { readonly type: 'list'; readonly items: readonly SmlNode[] }
  | { readonly type: 'absent' }
  | { readonly type: 'end' };

export class SmlDecodeError extends Error {}

/** Deepest list nesting accepted (real files nest 5 deep); more is garbage, not recursion. */
const MAX_DEPTH = 16;

/** One field at `offset`: the node and the offset after it. */
export function decodeNode(data: Buffer, offset: number, depth = 0): { node: SmlNode; next: number } {
  if (depth > MAX_DEPTH) throw new SmlDecodeError(`lists nested deeper than ${MAX_DEPTH} at byte ${offset}`);
  const first = byteAt(data, offset);
  if (first === 0x00) return { node: { type: 'end' }, next: offset + 1 };
  const type = (first >> 4) & 0x07;
  let length = first & 0x0f;
  let tlBytes = 1;
  let more = (first & 0x80) !== 0;
  while (more) {
    const b = byteAt(data, offset + tlBytes);
    if ((b & 0x70) !== 0) throw new SmlDecodeError(`TL continuation byte 0x${b.toString(16)} at byte ${offset + tlBytes} has type bits`);
    length = (length << 4) | (b & 0x0f);
    more = (b & 0x80) !== 0;
    tlBytes++;
    if (tlBytes > 4) throw new SmlDecodeError(`TL field longer than 4 bytes at byte ${offset}`);
  }
  if (type === 0x07) {
    const items: SmlNode[] = [];
    let next = offset + tlBytes;
    for (let i = 0; i < length; i++) {
      const item = decodeNode(data, next, depth + 1);
      items.push(item.node);
      next = item.next;
    }
    return { node: { type: 'list', items }, next };
  }
  // SML 1.04 6.3.2: a multi-byte TL field's length includes its TL bytes, as a single one's does.
  if (length < tlBytes) throw new SmlDecodeError(`length ${length} shorter than its TL field at byte ${offset}`);
  const end = offset + length;
  if (end > data.length) throw new SmlDecodeError(`field at byte ${offset} runs past the end of the file (${length} bytes)`);
  const payload = data.subarray(offset + tlBytes, end);
  if (type === 0x00) return { node: length === 1 ? { type: 'absent' } : { type: 'octets', bytes: payload }, next: end };
  if (type === 0x04) {
    if (payload.length !== 1) throw new SmlDecodeError(`boolean of ${payload.length} bytes at byte ${offset}`);
    return { node: { type: 'boolean', value: payload[0] !== 0 }, next: end };
  }
  if (type === 0x05 || type === 0x06) {
    if (payload.length < 1 || payload.length > 8) throw new SmlDecodeError(`integer of ${payload.length} bytes at byte ${offset}`);
    let value = 0n;
    for (const b of payload) value = (value << 8n) | BigInt(b);
    if (type === 0x05 && (payload[0]! & 0x80) !== 0) value -= 1n << BigInt(8 * payload.length);
    return { node: { type: type === 0x05 ? 'int' : 'uint', value, size: payload.length }, next: end };
  }
  throw new SmlDecodeError(`unknown SML type ${type} at byte ${offset}`);
}

function byteAt(data: Buffer, offset: number): number {
  const b = data[offset];
  if (b === undefined) throw new SmlDecodeError(`file ends inside a field (byte ${offset})`);
  return b;
}
