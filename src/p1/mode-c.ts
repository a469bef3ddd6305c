// IEC 62056-21 protocol mode C, data readout (pure): a meter that only answers when asked.
// The gateway sends the sign-on request `/?!` CR LF at 300 baud 7E1; the meter answers with its
// identification `/XXXZ<ident>` CR LF, Z its fastest rate; the gateway acknowledges with the
// option select ACK `0` Z `0` CR LF (data readout at Z), both switch to Z's rate, and the meter
// sends the data block: STX, the objects as in mode D, `!` CR LF, ETX, then the block check
// character (BCC: XOR of every byte after the STX up to and including the ETX).
// This file knows the bytes; mode-c-session.ts does the writing, baud switching and timeouts.
/** The sign-on request without a device address: any meter on the optical head answers. */
export const SIGN_ON = '/?!\r\n';

/** Every mode C exchange starts at 300 baud, 7 data bits, even parity, one stop bit. */
export const MODE_C_START = { baudRate: 300, dataBits: 7, parity: 'even', stopBits: 1 } as const;

/** Mode C's baud characters (IEC 62056-21 6.3.14): Z in the identification, and in the option select. */
const BAUD_BY_CHAR: Readonly<Record<string, number>> = { '0': 300, '1': 600, '2': 1200, '3': 2400, '4': 4800, '5': 9600, '6': 19200 };

const STX = '\x02';
const ETX = '\x03';
const ACK = '\x06';

/** The rate a mode C baud character stands for; null for a mode A or B meter's character. */
export function modeCBaudRate(z: string): number | null {
  return BAUD_BY_CHAR[z] ?? null;
}

/** The acknowledgement with option select: protocol control 0 (normal), rate Z, mode 0 (data readout). */
export function optionSelect(z: string): string {
  return `${ACK}0${z}0\r\n`;
}

/** XOR of the bytes (latin1, one char per byte), as the data block's BCC is computed. */
export function blockCheck(bytes: string): number {
  let bcc = 0;
  for (let i = 0; i < bytes.length; i++) bcc ^= bytes.charCodeAt(i);
  return bcc & 0x7f;
}

/** The data block as a meter sends it (for simulators and tests): STX, data, ETX, BCC. */
export function dataBlock(data: string): string {
  return `${STX}${data}${ETX}${String.fromCharCode(blockCheck(`${data}${ETX}`))}`;
}

export type ModeCStep =
  /** The meter named itself: acknowledge with optionSelect(baudChar), then read at baudRate. */
  | { readonly kind: 'identified'; readonly identification: string; readonly baudChar: string; readonly baudRate: number }
  /** A whole data block, BCC right: the identification line and the objects up to `!`, as a mode D telegram reads. */
  | { readonly kind: 'readout'; readonly telegram: string }
  | { readonly kind: 'failed'; readonly reason: 'bcc' | 'garbled' | 'overlong'; readonly detail: string };

/** Longest identification line (the standard allows 16 characters after Z) and data block accepted. */
const MAX_IDENTIFICATION = 40;
const MAX_BLOCK_BYTES = 16_384;

/**
 * One readout, fed with what came on the line after the sign-on was sent. Bytes before the
 * identification's `/` (an IR head echoing the request back, line noise) are skipped, as are
 * bytes between the identification and the STX (the echo of the option select).
 */
export class ModeCExchange {
  private buffer = '';
  private identification: string | null = null;
  private done = false;

  push(chunk: string): ModeCStep[] {
    if (this.done) return [];
    this.buffer += chunk;
    const steps: ModeCStep[] = [];
    if (this.identification === null) {
      const step = this.identify();
      if (!step) return steps;
      steps.push(step);
      if (step.kind === 'failed') return steps;
    }
    const block = this.block();
    if (block) steps.push(block);
    return steps;
  }

  private identify(): ModeCStep | null {
    for (;;) {
      const end = this.buffer.indexOf('\n');
      if (end < 0) {
        if (this.buffer.length > 2 * MAX_IDENTIFICATION) return this.fail('garbled', `no identification line, ${this.buffer.length} bytes`);
        return null;
      }
      const line = this.buffer.slice(0, end).replace(/\r$/, '');
      this.buffer = this.buffer.slice(end + 1);
      const start = line.lastIndexOf('/');
      // The request's own echo (`/?!`), or noise before the answer: not the identification.
      if (start < 0 || line.slice(start) === '/?!') continue;
      const id = /^\/([A-Za-z]{3})(.)(.*)$/.exec(line.slice(start));
      if (!id || line.length - start > MAX_IDENTIFICATION) return this.fail('garbled', `not an identification line: ${JSON.stringify(line.slice(0, MAX_IDENTIFICATION))}`);
      const baudRate = modeCBaudRate(id[2]);
      if (baudRate === null) return this.fail('garbled', `identification ${JSON.stringify(line.slice(start))} proposes no mode C rate (baud character ${JSON.stringify(id[2])}: a mode A or B meter)`);
      this.identification = line.slice(start);
      return { kind: 'identified', identification: this.identification, baudChar: id[2], baudRate };
    }
  }

  private block(): ModeCStep | null {
    const stx = this.buffer.indexOf(STX);
    if (stx < 0) {
      if (this.buffer.length > MAX_IDENTIFICATION) return this.fail('garbled', `no STX after the identification, ${this.buffer.length} bytes`);
      return null;
    }
    const etx = this.buffer.indexOf(ETX, stx + 1);
    if (etx < 0 || etx + 1 >= this.buffer.length) {
      if (this.buffer.length - stx > MAX_BLOCK_BYTES) return this.fail('overlong', `no ETX within ${MAX_BLOCK_BYTES} bytes`);
      return null;
    }
    const data = this.buffer.slice(stx + 1, etx);
    const expected = blockCheck(`${data}${ETX}`);
    const got = this.buffer.charCodeAt(etx + 1) & 0x7f;
    if (got !== expected) return this.fail('bcc', `block check ${hex(got)}, computed ${hex(expected)} over ${data.length + 1} bytes`);
    if (!/!\r?\n$/.test(data)) return this.fail('garbled', 'data block does not end with "!" CR LF');
    this.done = true;
    return { kind: 'readout', telegram: `${this.identification}\r\n${data.replace(/\r?\n$/, '')}` };
  }

  private fail(reason: 'bcc' | 'garbled' | 'overlong', detail: string): ModeCStep {
    this.done = true;
    return { kind: 'failed', reason, detail };
  }
}

function hex(byte: number): string {
  return `0x${byte.toString(16).padStart(2, '0')}`;
}
