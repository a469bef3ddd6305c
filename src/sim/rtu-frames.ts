// Splits a byte stream into Modbus RTU request frames. A real slave delimits frames by
// 3.5 characters of silence; over ptys and sockets chunks arrive arbitrarily, so frames are
// found by their length and CRC, and bytes that start no valid frame are skipped (garbage
// on the line). A partial frame left alone for `staleMs` is discarded.
import { hasValidCrc } from '../modbus/crc.js';

export class RtuFrameReader {
  private buf = Buffer.alloc(0);
  private lastDataMs = 0;

  constructor(private readonly staleMs = 50) {}

  /** Feeds received bytes; returns the complete, CRC-valid frames found. */
  push(chunk: Buffer, nowMs = Date.now()): Buffer[] {
    if (this.buf.length > 0 && nowMs - this.lastDataMs > this.staleMs) this.buf = Buffer.alloc(0);
    this.lastDataMs = nowMs;
    this.buf = Buffer.concat([this.buf, chunk]);
    const frames: Buffer[] = [];
    while (this.buf.length >= 4) {
      const len = this.frameLength();
      if (len === null) break; // need more bytes to decide
      if (len > 0 && this.buf.length >= len && hasValidCrc(this.buf.subarray(0, len))) {
        frames.push(Buffer.from(this.buf.subarray(0, len)));
        this.buf = this.buf.subarray(len);
        continue;
      }
      if (len > 0 && this.buf.length < len) break;
      this.buf = this.buf.subarray(1); // not a frame start: resynchronise
    }
    if (this.buf.length > 512) this.buf = this.buf.subarray(this.buf.length - 256);
    return frames;
  }

  /** Length of the request frame starting at offset 0; 0 when no known request starts here; null when undecidable yet. */
  private frameLength(): number | null {
    const fc = this.buf[1];
    if (fc >= 1 && fc <= 6) return 8;
    if (fc === 15 || fc === 16) return this.buf.length < 7 ? null : 9 + this.buf[6];
    return 0;
  }
}
