// P1 line settings (pure): DSMR 4.x/5.x send at 115200 8N1, DSMR 2.2/3.0 at 9600 7E1; meters
// pushing IEC 62056-21 mode D (EDL21 "D0", e.g. EasyMeter Q3D, eBZ DD3) at 9600 or 2400 7E1;
// German meters pushing SML (binary: EMH eHZ, Iskra MT175/MT631, Itron, DZG, Holley, ...) at
// 9600 8N1, the only line that carries SML (so the line says the protocol).
import type { BusConfig } from '../config/types.js';

export type P1Line = '115200 8N1' | '9600 7E1' | '2400 7E1' | '9600 8N1';

export interface SerialSettings {
  readonly baudRate: 115200 | 9600 | 2400;
  readonly dataBits: 8 | 7;
  readonly parity: 'none' | 'even';
  readonly stopBits: 1;
}

export const P1_LINES: Readonly<Record<P1Line, SerialSettings>> = {
  '115200 8N1': { baudRate: 115200, dataBits: 8, parity: 'none', stopBits: 1 },
  '9600 7E1': { baudRate: 9600, dataBits: 7, parity: 'even', stopBits: 1 },
  '2400 7E1': { baudRate: 2400, dataBits: 7, parity: 'even', stopBits: 1 },
  '9600 8N1': { baudRate: 9600, dataBits: 8, parity: 'none', stopBits: 1 },
};

/** Every line setting, in the order scan tries them. */
export const P1_LINE_NAMES: readonly P1Line[] = ['115200 8N1', '9600 7E1', '2400 7E1', '9600 8N1'];

/** SML meters push binary files at 9600 8N1 (sml/transport.ts); every other line carries text telegrams. */
export function isSmlLine(line: P1Line): line is '9600 8N1' {
  return line === '9600 8N1';
}

export function isP1Line(text: string): text is P1Line {
  return (P1_LINE_NAMES as readonly string[]).includes(text);
}

/** A bus's P1 line; DSMR 4+ unless the config says otherwise; a mode C meter's readout is 7E1 text without CRC (its BCC is checked before). */
export function p1Line(bus: Pick<BusConfig, 'line' | 'mode'>): P1Line {
  return bus.line ?? (bus.mode === 'C' ? '9600 7E1' : '115200 8N1');
}

/** An IEC 62056-21 mode C meter: it is asked (sign-on at 300 7E1, mode-c.ts), it does not push. */
export function isModeC(bus: Pick<BusConfig, 'mode'>): boolean {
  return bus.mode === 'C';
}

/** DSMR 4+ always send a CRC: on their line a telegram without one is dropped. The 7E1 lines carry none (DSMR 2.2/3.0, mode D); SML files always carry theirs. */
export function crcRequired(line: P1Line): boolean {
  return line === '115200 8N1';
}

/** The framer's settings for a line: its CRC rule, and on lines without CRC a short trailer after each telegram tolerated. */
export function framerOptions(line: P1Line): { requireCrc: boolean; trailerMaxBytes: number } {
  const requireCrc = crcRequired(line);
  return { requireCrc, trailerMaxBytes: requireCrc ? 0 : 64 };
}
