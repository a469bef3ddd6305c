// Listens on a P1 line for one whole telegram (for `metergate scan` and `doctor`): opens the
// port or bridge at the given line settings, frames what comes, and ends at the first whole
// telegram, the timeout, or a line that cannot be opened.
import type { BusConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import { P1Connection } from './connection.js';
import type { DropReason } from './framer.js';
import { isSmlLine, type P1Line } from './line-settings.js';
import { MODE_C_START } from './mode-c.js';
import { ModeCSession } from './mode-c-session.js';
import { telegramReader } from './reader.js';
import type { P1Identity, P1Reading } from './measurements.js';
import { mbusChannels, type MbusChannel } from './mbus.js';

/** What a listen dropped, by reason: the framer's and the parser's. */
export type TelegramDrops = Partial<Record<DropReason | 'invalid' | 'unknown_layout' | 'no_electricity', number>>;

export interface HeardTelegram {
  readonly identity: P1Identity;
  readonly reading: P1Reading;
  readonly crcChecked: boolean;
  /** The M-Bus devices the meter relays (gas, water, heat: 0-n:24.x), each a resource of its own once configured (meters[].channels). */
  readonly channels: readonly MbusChannel[];
}

export interface ListenResult {
  readonly line: P1Line;
  readonly telegram: HeardTelegram | null;
  /** Bytes received at all: a Modbus line is silent until asked, a P1 meter talks by itself. */
  readonly bytes: number;
  readonly drops: Readonly<TelegramDrops>;
  /** Why the line could not be used, when it could not. */
  readonly unavailable: string | null;
  /**
   * Four ESC bytes in a row came (SML's escape sequence, never in a text telegram; it survives
   * being read at 9600 7E1): an SML meter, to be read at 9600 8N1. A text line ends its listen then.
   */
  readonly smlSeen: boolean;
  /** The meter was asked (IEC 62056-21 mode C), not listened to. */
  readonly modeC?: boolean;
}

export interface ListenOptions {
  readonly type: 'p1' | 'p1-tcp';
  readonly port?: string;
  readonly host?: string;
  readonly tcpPort?: number;
  readonly line: P1Line;
  /** Longest wait for a whole telegram (DSMR 4 sends every 10 s). */
  readonly timeoutMs: number;
  /** Give up early when not one byte came within this long (no talking device there). */
  readonly quietMs?: number;
  readonly logger: Logger;
}

const SML_ESCAPE = '\x1b\x1b\x1b\x1b';

export function listenForTelegram(opts: ListenOptions): Promise<ListenResult> {
  const bus: BusConfig = {
    name: 'listen',
    type: opts.type,
    port: opts.port,
    host: opts.host,
    tcp_port: opts.tcpPort ?? 0,
    line: opts.line,
    baud_rate: 9600,
    parity: 'none',
    data_bits: 8,
    stop_bits: 1,
    timeout_ms: opts.timeoutMs,
    retries: 0,
  };
  const reader = telegramReader(opts.line);
  const drops: TelegramDrops = {};
  let bytes = 0;
  let smlSeen = false;
  let tail = '';
  return new Promise((resolve) => {
    let settled = false;
    const finish = (telegram: HeardTelegram | null, unavailable: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(quiet);
      void connection.close().then(() => resolve({ line: opts.line, telegram, bytes, drops, unavailable, smlSeen }));
    };
    const connection = new P1Connection({
      bus,
      logger: opts.logger,
      reopenMaxMs: 1_000,
      onUnavailable: (why) => finish(null, why),
      onData: (text) => {
        bytes += text.length;
        if (!smlSeen && (tail + text).includes(SML_ESCAPE)) {
          smlSeen = true;
          if (!isSmlLine(opts.line)) return finish(null, null);
        }
        tail = text.slice(-3);
        for (const event of reader.push(text)) {
          if (event.kind === 'dropped') {
            drops[event.reason] = (drops[event.reason] ?? 0) + 1;
            continue;
          }
          const outcome = event.outcome;
          if (outcome.kind === 'ok') finish({ identity: outcome.identity, reading: outcome.reading, crcChecked: event.crcChecked, channels: mbusChannels(outcome.telegram, Date.now()) }, null);
          else drops[outcome.kind] = (drops[outcome.kind] ?? 0) + 1;
        }
      },
    });
    const timer = setTimeout(() => finish(null, null), opts.timeoutMs);
    const quiet = setTimeout(() => {
      if (bytes === 0) finish(null, null);
    }, opts.quietMs ?? opts.timeoutMs);
    connection.open();
  });
}

/**
 * Asks an IEC 62056-21 mode C meter once (for `doctor`): opens the port at 300 7E1, sends the
 * sign-on as the daemon does (mode-c-session.ts) and ends at the readout, its failure (no
 * answer, BCC, ...), or a port that cannot be opened.
 */
export function askModeCMeter(opts: { readonly port: string; readonly logger: Logger }): Promise<ListenResult> {
  const bus: BusConfig = { name: 'ask', type: 'p1', port: opts.port, mode: 'C', tcp_port: 0, baud_rate: MODE_C_START.baudRate, parity: 'even', data_bits: 7, stop_bits: 1, timeout_ms: 1000, retries: 0 };
  const drops: TelegramDrops = {};
  let bytes = 0;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (telegram: HeardTelegram | null, unavailable: string | null) => {
      if (settled) return;
      settled = true;
      session.stop();
      void connection.close().then(() => resolve({ line: '9600 7E1', telegram, bytes, drops, unavailable, smlSeen: false, modeC: true }));
    };
    const connection = new P1Connection({
      bus,
      logger: opts.logger,
      reopenMaxMs: 1_000,
      onUnavailable: (why) => finish(null, why),
      onOpen: () => session.request(),
      onData: (text) => {
        bytes += text.length;
        session.data(text);
      },
    });
    const session = new ModeCSession({
      connection,
      onEvent: (event) => {
        if (event.kind === 'dropped') {
          drops[event.reason] = (drops[event.reason] ?? 0) + 1;
          return finish(null, null);
        }
        const outcome = event.outcome;
        if (outcome.kind === 'ok') return finish({ identity: { ...outcome.identity, layout: 'IEC 62056-21 mode C' }, reading: outcome.reading, crcChecked: true, channels: mbusChannels(outcome.telegram, Date.now()) }, null);
        drops[outcome.kind] = (drops[outcome.kind] ?? 0) + 1;
        finish(null, null);
      },
    });
    connection.open();
  });
}
