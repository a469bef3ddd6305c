// Cuts an SML byte stream (SML 1.04 transport protocol v1) into whole files. Pure: bytes in,
// files and drops out. A file starts with the escape sequence 1b1b1b1b 01010101 and ends with
// 1b1b1b1b 1a XX CCCC (XX: padding bytes before it, CCCC: CRC-16/X-25 of everything before
// the CRC); inside, data 1b1b1b1b is sent twice ("stuffed"). Everything runs in 4-byte groups
// from the start; a start found off that grid means bytes were lost or added. A file that is cut
// (a new start before its end), too long, carries an unknown escape, or whose CRC does not match
// is dropped whole and reported, never handed on.
import type { DropReason } from '../framer.js';
import { smlCrc16 } from './crc.js';

export type SmlTransportEvent =
  | { readonly kind: 'file'; readonly data: Buffer }
  | { readonly kind: 'dropped'; readonly reason: Exclude<DropReason, 'missing_crc'>; readonly bytes: number };

const ESCAPE = Buffer.from([0x1b, 0x1b, 0x1b, 0x1b]);
const START = Buffer.from([0x1b, 0x1b, 0x1b, 0x1b, 0x01, 0x01, 0x01, 0x01]);
/** Real files are 0.2-1 kB; a stream without an end beyond this is not SML at this speed. */
const DEFAULT_MAX_BYTES = 16_384;

export class SmlTransport {
  private buffer: Buffer = Buffer.alloc(0);
  /** True once a start was seen: bytes before the first start after connecting are a tail, not an error. */
  private synced = false;

  constructor(private readonly maxBytes = DEFAULT_MAX_BYTES) {}

  push(chunk: Buffer): SmlTransportEvent[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const events: SmlTransportEvent[] = [];
    for (;;) {
      const start = this.buffer.indexOf(START);
      if (start < 0) {
        // Keep a possible beginning of a start sequence; the rest is outside any file.
        const keep = Math.min(this.buffer.length, START.length - 1);
        const junk = this.buffer.subarray(0, this.buffer.length - keep);
        if (this.synced && junk.some((b) => b !== 0)) events.push({ kind: 'dropped', reason: 'garbled', bytes: junk.length });
        this.buffer = Buffer.from(this.buffer.subarray(this.buffer.length - keep));
        break;
      }
      if (start > 0) {
        const junk = this.buffer.subarray(0, start);
        // Some meters pad with zero bytes between files: not a loss.
        if (this.synced && junk.some((b) => b !== 0)) events.push({ kind: 'dropped', reason: 'garbled', bytes: junk.length });
        this.buffer = this.buffer.subarray(start);
      }
      this.synced = true;
      const step = this.scan();
      if (step === null) {
        if (this.buffer.length > this.maxBytes) {
          events.push({ kind: 'dropped', reason: 'overlong', bytes: this.buffer.length });
          this.buffer = Buffer.alloc(0);
          this.synced = false;
        }
        break;
      }
      events.push(step.event);
      this.buffer = this.buffer.subarray(step.consumed);
    }
    return events;
  }

  /** One file from the start at buffer[0]: the event and the bytes it took, or null while incomplete. */
  private scan(): { event: SmlTransportEvent; consumed: number } | null {
    const b = this.buffer;
    const data: Buffer[] = [];
    let i = START.length;
    // A byte lost or added inside this file puts the next file's start off the 4-byte grid, where
    // the escape check below would never see it; so also look for a start between grid positions
    // (one on the grid is handled below; stuffed data 1b1b1b1b never forms one off the grid).
    let cut = b.indexOf(START, i);
    while (i + 4 <= b.length) {
      if (cut >= 0 && cut < i) cut = b.indexOf(START, i);
      if (cut > i && cut < i + 4) return { event: { kind: 'dropped', reason: 'truncated', bytes: cut }, consumed: cut };
      if (!isEscape(b, i)) {
        data.push(b.subarray(i, i + 4));
        i += 4;
        continue;
      }
      if (i + 8 > b.length) return null;
      if (isEscape(b, i + 4)) {
        data.push(ESCAPE);
        i += 8;
        continue;
      }
      if (b[i + 4] === 0x01 && b[i + 5] === 0x01 && b[i + 6] === 0x01 && b[i + 7] === 0x01) {
        // A new file began before this one ended: this one was cut.
        return { event: { kind: 'dropped', reason: 'truncated', bytes: i }, consumed: i };
      }
      if (b[i + 4] !== 0x1a) return { event: { kind: 'dropped', reason: 'garbled', bytes: i + 8 }, consumed: i + 8 };
      const padding = b[i + 5]!;
      const sent = b[i + 6]! | (b[i + 7]! << 8);
      // A file cut inside its end sequence: the next file's start is where the rest should be; keep it.
      const nextStart = b.indexOf(START, i + 5);
      const consumed = nextStart >= 0 && nextStart < i + 8 ? nextStart : i + 8;
      if (smlCrc16(b, 0, i + 6) !== sent) return { event: { kind: 'dropped', reason: 'crc', bytes: consumed }, consumed };
      const all = Buffer.concat(data);
      if (padding > 3 || padding > all.length) return { event: { kind: 'dropped', reason: 'garbled', bytes: consumed }, consumed };
      return { event: { kind: 'file', data: all.subarray(0, all.length - padding) }, consumed };
    }
    return null;
  }
}

function isEscape(b: Buffer, i: number): boolean {
  return b[i] === 0x1b && b[i + 1] === 0x1b && b[i + 2] === 0x1b && b[i + 3] === 0x1b;
}
