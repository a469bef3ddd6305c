// Cuts a P1 byte stream into whole telegrams ('/' .. '!' [CRC] CRLF). Pure: bytes in, telegrams
// and drops out. A telegram that is cut (a new '/' before its '!'), too long, or whose CRC does
// not match is dropped whole and reported, never handed on in part.
import { dsmrCrcHex } from './crc.js';

/** Why a telegram was not handed on; `bcc` and `no_answer` only on a mode C line (mode-c-session.ts), where the meter is asked (there `truncated`: it named itself, its block did not come whole in time). */
export type DropReason = 'crc' | 'missing_crc' | 'truncated' | 'overlong' | 'garbled' | 'bcc' | 'no_answer';

export type FramerEvent = { readonly kind: 'telegram'; readonly text: string; readonly crcChecked: boolean } | { readonly kind: 'dropped'; readonly reason: DropReason; readonly bytes: number };

export interface FramerOptions {
  /** DSMR 4+ lines (115200 8N1) always send a CRC: a telegram without one is dropped. */
  readonly requireCrc: boolean;
  /**
   * Lines without CRC (DSMR 2.2/3.0, IEC 62056-21 mode D): a few bytes between telegrams (an
   * ETX and its BCC, a line a reading head or gateway adds) are a trailer, not a lost telegram.
   */
  readonly trailerMaxBytes?: number;
  /** Longest telegram accepted; real ones are 0.4-2 kB (DSMR 5 allows a few kB of text messages). */
  readonly maxBytes?: number;
}

const DEFAULT_MAX_BYTES = 16_384;

/** Telegram framer over a latin1 string stream (each char one byte, as the CRC needs). */
export class TelegramFramer {
  private buffer = '';
  /** True once a telegram start was seen: bytes before the first '/' after connecting are a tail, not an error. */
  private synced = false;

  constructor(private readonly options: FramerOptions) {}

  push(chunk: string): FramerEvent[] {
    this.buffer += chunk;
    const events: FramerEvent[] = [];
    const maxBytes = this.options.maxBytes ?? DEFAULT_MAX_BYTES;
    for (;;) {
      const start = this.buffer.indexOf('/');
      if (start < 0) {
        // Bytes outside a telegram: a synced stream lost them (a telegram whose '/' was hit).
        // A trailer may still be arriving: keep a short tail until the next '/' or more bytes.
        if (this.buffer.length <= (this.options.trailerMaxBytes ?? 0)) break;
        if (this.synced && this.buffer.trim().length > 0) events.push({ kind: 'dropped', reason: 'garbled', bytes: this.buffer.length });
        this.buffer = '';
        break;
      }
      if (start > 0) {
        const junk = this.buffer.slice(0, start);
        if (this.synced && junk.trim().length > (this.options.trailerMaxBytes ?? 0)) events.push({ kind: 'dropped', reason: 'garbled', bytes: junk.length });
        this.buffer = this.buffer.slice(start);
      }
      this.synced = true;
      const end = this.buffer.indexOf('!');
      const nextStart = this.buffer.indexOf('/', 1);
      if (nextStart >= 0 && (end < 0 || nextStart < end)) {
        // A new telegram began before this one ended: this one was cut.
        events.push({ kind: 'dropped', reason: 'truncated', bytes: nextStart });
        this.buffer = this.buffer.slice(nextStart);
        continue;
      }
      if (end < 0) {
        if (this.buffer.length > maxBytes) {
          events.push({ kind: 'dropped', reason: 'overlong', bytes: this.buffer.length });
          this.buffer = '';
          this.synced = false;
        }
        break;
      }
      const lineEnd = this.buffer.indexOf('\n', end);
      if (lineEnd < 0) {
        // The CRC line is not complete yet; a lost line feed shows as a too long trailer.
        if (this.buffer.length - end > 8) {
          events.push({ kind: 'dropped', reason: 'garbled', bytes: end + 1 });
          this.buffer = this.buffer.slice(end + 1);
          continue;
        }
        break;
      }
      const body = this.buffer.slice(0, end + 1);
      const trailer = this.buffer.slice(end + 1, lineEnd).replace(/\r$/, '');
      this.buffer = this.buffer.slice(lineEnd + 1);
      events.push(this.check(body, trailer));
    }
    return events;
  }

  private check(body: string, trailer: string): FramerEvent {
    const bytes = body.length + trailer.length + 2;
    if (trailer === '') {
      return this.options.requireCrc ? { kind: 'dropped', reason: 'missing_crc', bytes } : { kind: 'telegram', text: body, crcChecked: false };
    }
    if (!/^[0-9A-Fa-f]{4}$/.test(trailer)) return { kind: 'dropped', reason: 'garbled', bytes };
    if (dsmrCrcHex(body) !== trailer.toUpperCase()) return { kind: 'dropped', reason: 'crc', bytes };
    return { kind: 'telegram', text: body, crcChecked: true };
  }
}
