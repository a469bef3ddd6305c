// Reads an IEC 62056-21 mode C meter on a serial port (the I/O of mode-c.ts): request() sends the
// sign-on at 300 baud, acknowledges the meter's identification, switches the port to the rate it
// proposed and waits for the data block. One readout at a time; its result reaches the same
// handler as a pushing meter's telegrams (a whole readout, or a drop with its reason), so the
// P1 source's one error policy applies: a meter that does not answer in time (`no_answer`; one
// that named itself but whose block stopped coming before it was whole: `truncated`), a block whose
// BCC is wrong (`bcc`), or bytes that are no readout are counted and named, the
// readout is given up, and the next poll asks again. Nothing here throws into the daemon.
import type { P1Connection } from './connection.js';
import { interpretTelegram } from './interpret.js';
import { MODE_C_START, ModeCExchange, optionSelect, SIGN_ON } from './mode-c.js';
import type { ReaderEvent } from './reader.js';

/** After the ACK's transmit time, before the switch: well inside the meter's 200 ms reaction time. */
const ACK_MARGIN_MS = 20;

export interface ModeCSessionDeps {
  readonly connection: Pick<P1Connection, 'writable' | 'write' | 'setBaudRate'>;
  /** Told each readout's end: a whole readout, or why there was none. */
  readonly onEvent: (event: ReaderEvent) => void;
  /** Longest wait for the identification after the sign-on (default 3 s: 1.5 s reaction time allowed by the standard, plus ~20 characters at 300 baud). */
  readonly identificationTimeoutMs?: number;
  /**
   * Longest silence while the data block is awaited (default 3 s: the standard's 1.5 s reaction
   * time after the option select, and less than 1.5 s between two characters, with room for a
   * loaded gateway). Re-armed by every byte: a long block at a slow rate (a 5 kB readout takes
   * 3 minutes at 300 baud) is read as long as it keeps coming; MAX_BLOCK_BYTES bounds it.
   */
  readonly blockTimeoutMs?: number;
}

export class ModeCSession {
  private exchange: ModeCExchange | null = null;
  private timer: NodeJS.Timeout | null = null;
  private bytes = 0;
  /** The meter named itself in the readout under way. */
  private identified = false;
  /** Bumped per readout: an answer or timeout of an earlier one is ignored. */
  private readout = 0;
  /** Why the readout under way ends if its block stops coming. */
  private blockSilence = '';

  constructor(private readonly deps: ModeCSessionDeps) {}

  private get blockTimeoutMs(): number {
    return this.deps.blockTimeoutMs ?? 3_000;
  }

  /** Whether a readout is under way. */
  get busy(): boolean {
    return this.exchange !== null;
  }

  /** Asks the meter for a readout, unless one is under way or the port is not open (reopening: the slot is a miss). */
  request(): void {
    if (this.exchange || !this.deps.connection.writable) return;
    const readout = ++this.readout;
    this.exchange = new ModeCExchange();
    this.bytes = 0;
    this.identified = false;
    void this.signOn(readout);
  }

  /** Bytes from the line; outside a readout they are not asked for and are dropped. */
  data(text: string): void {
    const exchange = this.exchange;
    if (!exchange) return;
    this.bytes += text.length;
    // The block is coming: its time is counted from its last bytes, not from the option select.
    if (this.identified) this.wait(this.readout, this.blockTimeoutMs, this.blockSilence);
    for (const step of exchange.push(text)) {
      if (step.kind === 'identified') {
        this.identified = true;
        void this.acknowledge(this.readout, step.baudChar, step.baudRate);
      }
      else if (step.kind === 'readout') this.finish({ kind: 'whole', outcome: interpretTelegram(step.telegram), crcChecked: true });
      else this.finish({ kind: 'dropped', reason: step.reason, bytes: this.bytes, detail: step.detail });
    }
  }

  /** Ends a readout under way (the source stops). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.exchange = null;
    this.readout++;
  }

  private async signOn(readout: number): Promise<void> {
    try {
      // Back to 300 baud: the last readout left the port at the meter's rate.
      await this.deps.connection.setBaudRate(MODE_C_START.baudRate);
      await this.deps.connection.write(SIGN_ON);
    } catch (err) {
      return this.failed(readout, `sign-on not sent: ${(err as Error).message}`);
    }
    // A quick meter may have answered while the request was still draining.
    if (!this.identified) this.wait(readout, this.deps.identificationTimeoutMs ?? 3_000, 'no identification after the sign-on request');
  }

  private async acknowledge(readout: number, baudChar: string, baudRate: number): Promise<void> {
    if (readout !== this.readout) return;
    this.blockSilence = `the data block at ${baudRate} baud stopped before it was whole (nothing for ${this.blockTimeoutMs} ms after the option select or its last bytes)`;
    this.wait(readout, this.blockTimeoutMs, this.blockSilence);
    try {
      // The ACK goes out at 300 baud; the meter switches once it has it, and so do we. Not
      // before the ACK's own time on the line has passed (10 bits a character): serialport's
      // update() flushes both queues (tcflush TCIOFLUSH in @serialport/bindings-cpp
      // setBaudRate), and a USB adapter's drain, or a pty's, may return while bytes are still
      // on their way. The meter answers no sooner than 200 ms after the ACK (IEC 62056-21 tr).
      const ack = optionSelect(baudChar);
      const startedMs = performance.now();
      await this.deps.connection.write(ack);
      const onLineMs = (ack.length * 10 * 1000) / MODE_C_START.baudRate + ACK_MARGIN_MS;
      const waitMs = startedMs + onLineMs - performance.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      if (readout !== this.readout) return;
      await this.deps.connection.setBaudRate(baudRate);
      // Listening at the meter's rate only now: its reaction time counts from here (a slow
      // drain or a loaded gateway must not eat into it).
      this.wait(readout, this.blockTimeoutMs, this.blockSilence);
    } catch (err) {
      this.failed(readout, `option select not sent: ${(err as Error).message}`);
    }
  }

  private wait(readout: number, ms: number, why: string): void {
    if (readout !== this.readout || !this.exchange) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.failed(readout, why), ms);
  }

  private failed(readout: number, why: string): void {
    if (readout !== this.readout || !this.exchange) return;
    this.finish({ kind: 'dropped', reason: this.identified ? 'truncated' : 'no_answer', bytes: this.bytes, detail: why });
  }

  private finish(event: ReaderEvent): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.exchange = null;
    this.deps.onEvent(event);
  }
}
