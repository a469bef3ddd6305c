// P1 line settings (pure): DSMR 4.x/5.x send at 115200 8N1, DSMR 2.2/3.0 at 9600 7E1.
import type { BusConfig } from '../config/types.js';

export type P1Line = '115200 8N1' | '9600 7E1';

export interface SerialSettings {
  readonly baudRate: 115200 | 9600;
  readonly dataBits: 8 | 7;
  readonly parity: 'none' | 'even';
  readonly stopBits: 1;
}

export const P1_LINES: Readonly<Record<P1Line, SerialSettings>> = {
  '115200 8N1': { baudRate: 115200, dataBits: 8, parity: 'none', stopBits: 1 },
  '9600 7E1': { baudRate: 9600, dataBits: 7, parity: 'even', stopBits: 1 },
};

/** A bus's P1 line; DSMR 4+ unless the config says 9600 7E1. */
export function p1Line(bus: Pick<BusConfig, 'line'>): P1Line {
  return bus.line ?? '115200 8N1';
}

/** DSMR 4+ always send a CRC: on their line a telegram without one is dropped. */
export function crcRequired(line: P1Line): boolean {
  return line === '115200 8N1';
}
