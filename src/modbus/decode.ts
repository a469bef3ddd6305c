// Pure register decoding: Modbus registers are 16-bit big-endian words; multi-register
// values come high word first ("big") or low word first ("little", e.g. Carlo Gavazzi).
import type { RegisterType, WordOrder } from '../config/types.js';

export interface ValueEncoding {
  readonly type: RegisterType;
  readonly word_order: WordOrder;
  readonly scale: number;
}

const WORDS: Record<RegisterType, number> = {
  int16: 1,
  uint16: 1,
  int32: 2,
  uint32: 2,
  float32: 2,
  int64: 4,
  uint64: 4,
  float64: 4,
};

/** Number of 16-bit registers a value of this type occupies. */
export function registerCount(type: RegisterType): number {
  return WORDS[type];
}

/** The value's bytes in big-endian order (high word first), whatever the word order on the wire. */
function toBigEndianBytes(words: ArrayLike<number>, offset: number, n: number, order: WordOrder): Buffer {
  const buf = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    const word = words[offset + (order === 'big' ? i : n - 1 - i)];
    if (word === undefined) throw new RangeError(`register ${offset + i} missing (have ${words.length})`);
    buf.writeUInt16BE(word & 0xffff, i * 2);
  }
  return buf;
}

/**
 * Integer "no value" sentinels: ABB meters answer all-ones for unsigned and 0x7FFF... for
 * signed registers without data; Carlo Gavazzi uses 0x7FFFFFFF for invalid values. These
 * raw values are never plausible measurements, so they mean "no value" for every profile.
 */
function isSentinel(buf: Buffer, type: RegisterType): boolean {
  if (type.startsWith('float')) return false;
  const allOnes = buf.every((b) => b === 0xff);
  if (type.startsWith('uint')) return allOnes;
  return buf[0] === 0x7f && buf.subarray(1).every((b) => b === 0xff);
}

/**
 * Decodes one value starting at `offset` in `words` and applies the scale.
 * Returns null for the "no value" sentinel. Floats may come back NaN/±Inf; the
 * sanity checks downstream decide what to do with them.
 */
export function decodeValue(words: ArrayLike<number>, offset: number, enc: ValueEncoding): number | null {
  const n = registerCount(enc.type);
  const buf = toBigEndianBytes(words, offset, n, enc.word_order);
  if (isSentinel(buf, enc.type)) return null;
  let raw: number;
  switch (enc.type) {
    case 'int16': raw = buf.readInt16BE(0); break;
    case 'uint16': raw = buf.readUInt16BE(0); break;
    case 'int32': raw = buf.readInt32BE(0); break;
    case 'uint32': raw = buf.readUInt32BE(0); break;
    case 'float32': raw = buf.readFloatBE(0); break;
    case 'int64': raw = Number(buf.readBigInt64BE(0)); break;
    case 'uint64': raw = Number(buf.readBigUInt64BE(0)); break;
    case 'float64': raw = buf.readDoubleBE(0); break;
  }
  return raw * enc.scale;
}

/** Inverse of decodeValue (used by the simulator and tests): the registers that carry `value`. */
export function encodeValue(value: number, enc: ValueEncoding): number[] {
  const n = registerCount(enc.type);
  const raw = value / enc.scale;
  const buf = Buffer.alloc(n * 2);
  const int = Math.round(raw);
  switch (enc.type) {
    case 'int16': buf.writeInt16BE(clamp(int, -0x8000, 0x7fff), 0); break;
    case 'uint16': buf.writeUInt16BE(clamp(int, 0, 0xffff), 0); break;
    case 'int32': buf.writeInt32BE(clamp(int, -0x80000000, 0x7fffffff), 0); break;
    case 'uint32': buf.writeUInt32BE(clamp(int, 0, 0xffffffff), 0); break;
    case 'float32': buf.writeFloatBE(raw, 0); break;
    case 'int64': buf.writeBigInt64BE(BigInt(int), 0); break;
    case 'uint64': buf.writeBigUInt64BE(BigInt(Math.max(0, int)), 0); break;
    case 'float64': buf.writeDoubleBE(raw, 0); break;
  }
  const words: number[] = [];
  for (let i = 0; i < n; i++) words.push(buf.readUInt16BE(i * 2));
  return enc.word_order === 'big' ? words : words.reverse();
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}
