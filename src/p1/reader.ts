// What a P1 line delivers, whatever its protocol (pure): chunks of bytes (latin1 text, one char
// per byte) in; whole checked telegrams, each interpreted, or drops with their reason out. Text
// telegrams (DSMR, IEC 62056-21 mode D) on the 115200 8N1 and 7E1 lines; SML files (binary)
// on 9600 8N1. The source, scan and doctor use it alike, so each drop is named the same way.
import type { DropReason } from './framer.js';
import { TelegramFramer } from './framer.js';
import { interpretTelegram, type TelegramOutcome } from './interpret.js';
import { framerOptions, isSmlLine, type P1Line } from './line-settings.js';
import { interpretSmlFile } from './sml/interpret.js';
import { SmlTransport } from './sml/transport.js';

export type ReaderEvent =
  | { readonly kind: 'dropped'; readonly reason: DropReason; readonly bytes: number; readonly detail?: string }
  | { readonly kind: 'whole'; readonly outcome: TelegramOutcome; readonly crcChecked: boolean };

export interface TelegramReader {
  push(chunk: string): ReaderEvent[];
}

export function telegramReader(line: P1Line): TelegramReader {
  if (isSmlLine(line)) {
    const transport = new SmlTransport();
    return {
      push: (chunk) =>
        transport.push(Buffer.from(chunk, 'latin1')).map((e) => (e.kind === 'dropped' ? e : { kind: 'whole', outcome: interpretSmlFile(e.data), crcChecked: true })),
    };
  }
  const framer = new TelegramFramer(framerOptions(line));
  return {
    push: (chunk) => framer.push(chunk).map((e) => (e.kind === 'dropped' ? e : { kind: 'whole', outcome: interpretTelegram(e.text), crcChecked: e.crcChecked })),
  };
}
