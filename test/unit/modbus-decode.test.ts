import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue, registerCount } from '../../src/modbus/decode.js';
import type { RegisterType, WordOrder } from '../../src/config/types.js';

const enc = (type: RegisterType, word_order: WordOrder = 'big', scale = 1) => ({ type, word_order, scale });

describe('register decoding', () => {
  it('reads float32 high word first (Eastron) and low word first', () => {
    // 230.5 V as IEEE 754 single: 0x43668000
    expect(decodeValue([0x4366, 0x8000], 0, enc('float32'))).toBe(230.5);
    expect(decodeValue([0x8000, 0x4366], 0, enc('float32', 'little'))).toBe(230.5);
    // bytes inside a register are always big-endian: 0x6643 is a different number
    expect(decodeValue([0x6643, 0x0080], 0, enc('float32'))).not.toBe(230.5);
  });

  it('reads Carlo Gavazzi INT32 with the low word first and a scale', () => {
    // 123456.7 W sent as W*10 = 1234567 = 0x0012D687 -> words [0xD687, 0x0012]
    expect(decodeValue([0xd687, 0x0012], 0, enc('int32', 'little', 0.1))).toBeCloseTo(123456.7, 6);
    // -1500.0 W = -15000 = 0xFFFFC568 -> [0xC568, 0xFFFF]
    expect(decodeValue([0xc568, 0xffff], 0, enc('int32', 'little', 0.1))).toBeCloseTo(-1500, 6);
    expect(decodeValue([0xffff, 0xc568], 0, enc('int32', 'big', 0.1))).toBeCloseTo(-1500, 6);
  });

  it('reads 16-bit, 32-bit and 64-bit integers at an offset', () => {
    const words = [0x0000, 0xfffe, 0x1388, 0x0001, 0x0002, 0x0003, 0x0004];
    expect(decodeValue(words, 1, enc('int16'))).toBe(-2);
    expect(decodeValue(words, 1, enc('uint16'))).toBe(0xfffe);
    expect(decodeValue(words, 2, enc('uint16', 'big', 0.01))).toBeCloseTo(50, 10);
    expect(decodeValue(words, 3, enc('uint32'))).toBe(0x00010002);
    expect(decodeValue(words, 3, enc('uint32', 'little'))).toBe(0x00020001);
    // ABB active import: uint64 0x000000000D1290 * 0.01 kWh -> Wh (scale 10)
    expect(decodeValue([0x0000, 0x0000, 0x000d, 0x1290], 0, enc('uint64', 'big', 10))).toBe(0x0d1290 * 10);
    expect(decodeValue([0x1290, 0x000d, 0x0000, 0x0000], 0, enc('uint64', 'little', 10))).toBe(0x0d1290 * 10);
    expect(decodeValue([0xffff, 0xffff, 0xffff, 0xfffe], 0, enc('int64'))).toBe(-2);
  });

  it('reads float64 in both word orders', () => {
    const words = encodeValue(1234.5678, enc('float64'));
    expect(words).toHaveLength(4);
    expect(decodeValue(words, 0, enc('float64'))).toBe(1234.5678);
    expect(decodeValue([...words].reverse(), 0, enc('float64', 'little'))).toBe(1234.5678);
  });

  it('treats the ABB and Carlo Gavazzi "no value" sentinels as missing', () => {
    expect(decodeValue([0xffff, 0xffff, 0xffff, 0xffff], 0, enc('uint64', 'big', 10))).toBeNull();
    expect(decodeValue([0xffff, 0xffff], 0, enc('uint32'))).toBeNull();
    expect(decodeValue([0x7fff, 0xffff], 0, enc('int32', 'big', 0.01))).toBeNull();
    expect(decodeValue([0xffff, 0x7fff], 0, enc('int32', 'little', 0.1))).toBeNull();
    expect(decodeValue([0x7fff], 0, enc('int16'))).toBeNull();
    expect(decodeValue([0xffff], 0, enc('uint16'))).toBeNull();
    // -1 is a legitimate signed value, not a sentinel
    expect(decodeValue([0xffff, 0xffff], 0, enc('int32'))).toBe(-1);
  });

  it('passes NaN and infinities through for the sanity checks to drop', () => {
    expect(decodeValue([0x7fc0, 0x0000], 0, enc('float32'))).toBeNaN();
    expect(decodeValue([0x7f80, 0x0000], 0, enc('float32'))).toBe(Infinity);
    expect(decodeValue([0xff80, 0x0000], 0, enc('float32'))).toBe(-Infinity);
  });

  it('round-trips every type and word order through encodeValue', () => {
    const types: RegisterType[] = ['int16', 'uint16', 'int32', 'uint32', 'float32', 'int64', 'uint64', 'float64'];
    for (const type of types) {
      for (const order of ['big', 'little'] as const) {
        const e = enc(type, order, type.startsWith('float') ? 1 : 0.1);
        const value = type.startsWith('u') ? 1234.5 : -1234.5;
        const words = encodeValue(value, e);
        expect(words).toHaveLength(registerCount(type));
        expect(decodeValue(words, 0, e)).toBeCloseTo(value, 3);
      }
    }
  });

  it('refuses to read past the answer', () => {
    expect(() => decodeValue([0x4366], 0, enc('float32'))).toThrow(RangeError);
  });
});
