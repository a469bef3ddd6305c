// A simulated meter's Modbus face: its profile's register map filled from the meter model,
// answering read requests (function 03/04) the way the real device does, including the
// exceptions for unknown functions, addresses outside the map and over-long requests.
import type { MeterProfile } from '../config/types.js';
import { encodeValue, registerCount } from '../modbus/decode.js';
import { modelCodeFor } from '../modbus/identify.js';
import type { MeterModel } from './meter-model.js';

export const EXCEPTION_ILLEGAL_FUNCTION = 1;
export const EXCEPTION_ILLEGAL_ADDRESS = 2;
export const EXCEPTION_ILLEGAL_VALUE = 3;

/** Registers between two mapped values up to this far apart read as 0 (reserved), like real meters. */
const RESERVED_SPAN = 64;

interface Range {
  start: number;
  end: number; // exclusive
}

export class SimulatedMeter {
  /** Function codes this meter serves and the address ranges valid for each. */
  private readonly ranges = new Map<number, Range[]>();
  private readonly fixed = new Map<string, number>(); // `${fc}:${address}` -> word
  /** Requests answered, for tests and the benchmark. */
  requests = 0;

  constructor(
    readonly unitId: number,
    readonly profileName: string,
    readonly profile: MeterProfile,
    private readonly model: MeterModel,
    serveModelCode = true,
  ) {
    // Carlo Gavazzi meters answer 03 and 04 alike; the others only their profile's code.
    const sameForBoth = profile.vendor === 'Carlo Gavazzi';
    const byFc = new Map<number, Range[]>();
    for (const spec of profile.registers) {
      const fcs = sameForBoth ? [3, 4] : [spec.function_code ?? profile.function_code];
      for (const fc of fcs) {
        const list = byFc.get(fc) ?? [];
        list.push({ start: spec.address, end: spec.address + registerCount(spec.type) });
        byFc.set(fc, list);
      }
    }
    const code = serveModelCode ? modelCodeFor(profileName) : null;
    if (code) {
      const fcs = sameForBoth ? [3, 4] : [code.probe.functionCode];
      for (const fc of fcs) {
        const list = byFc.get(fc) ?? [];
        list.push({ start: code.probe.address, end: code.probe.address + code.probe.count });
        byFc.set(fc, list);
        code.words.forEach((w, i) => this.fixed.set(`${fc}:${code.probe.address + i}`, w));
      }
    }
    for (const [fc, list] of byFc) {
      list.sort((a, b) => a.start - b.start);
      const merged: Range[] = [];
      for (const r of list) {
        const last = merged[merged.length - 1];
        if (last && r.start - last.end <= RESERVED_SPAN) last.end = Math.max(last.end, r.end);
        else merged.push({ ...r });
      }
      this.ranges.set(fc, merged);
    }
  }

  /** Handles a request PDU (function code + data); returns the response PDU. */
  handle(pdu: Uint8Array): Buffer {
    const fc = pdu[0];
    const ranges = this.ranges.get(fc);
    if (!ranges || pdu.length < 5) return exception(fc, EXCEPTION_ILLEGAL_FUNCTION);
    const address = (pdu[1] << 8) | pdu[2];
    const count = (pdu[3] << 8) | pdu[4];
    if (count < 1 || count > 125 || count > this.profile.max_registers_per_request) return exception(fc, EXCEPTION_ILLEGAL_VALUE);
    if (!ranges.some((r) => address >= r.start && address + count <= r.end)) return exception(fc, EXCEPTION_ILLEGAL_ADDRESS);
    this.requests++;
    const words = this.image(fc, address, count);
    const out = Buffer.alloc(2 + count * 2);
    out[0] = fc;
    out[1] = count * 2;
    words.forEach((w, i) => out.writeUInt16BE(w, 2 + i * 2));
    return out;
  }

  private image(fc: number, address: number, count: number): number[] {
    const words = new Array<number>(count).fill(0);
    const values = this.model.values();
    const sameForBoth = this.profile.vendor === 'Carlo Gavazzi';
    for (const spec of this.profile.registers) {
      const specFc = spec.function_code ?? this.profile.function_code;
      if (!sameForBoth && specFc !== fc) continue;
      const n = registerCount(spec.type);
      if (spec.address + n <= address || spec.address >= address + count) continue;
      const value = values[spec.metric];
      // A quantity the meter does not have (L2 on a single-phase meter) reads as 0.
      const encoded = encodeValue(value ?? 0, spec);
      encoded.forEach((w, i) => {
        const at = spec.address + i - address;
        if (at >= 0 && at < count) words[at] = w;
      });
    }
    for (const [key, word] of this.fixed) {
      const [kfc, kaddr] = key.split(':').map(Number);
      if (kfc === fc && kaddr >= address && kaddr < address + count) words[kaddr - address] = word;
    }
    return words;
  }
}

function exception(fc: number, code: number): Buffer {
  return Buffer.from([(fc | 0x80) & 0xff, code]);
}
