// Line settings for a simulated meter on a pty. A real meter set to 19200 8E1 hears only
// noise from a master sending at 9600 or with odd parity; a pty carries the bytes either
// way. With --line-of, the simulator reads the termios the master set on its end of the
// pty (stty -F) and stays silent when they differ from the meter's own, so a sweep over
// baud rates and parities can be tested for real.
import { execFileSync } from 'node:child_process';
import type { Parity } from '../config/types.js';

export interface LineSettings {
  readonly baudRate: number;
  readonly parity: Parity;
}

/** Parses `stty -a` output. Linux ptys clear PARENB but keep PARODD, so even and none read alike. */
export function parseStty(text: string): { baudRate: number; odd: boolean } | null {
  const speed = /speed (\d+) baud/.exec(text);
  if (!speed) return null;
  return { baudRate: Number(speed[1]), odd: /(^|\s)parodd(\s|$)/m.test(text) };
}

/** Whether the master's end of the line is set like the meter (baud; odd vs not odd on a pty). */
export function lineMatches(master: { baudRate: number; odd: boolean }, meter: LineSettings): boolean {
  return master.baudRate === meter.baudRate && master.odd === (meter.parity === 'odd');
}

export function masterLineOf(tty: string): { baudRate: number; odd: boolean } | null {
  try {
    return parseStty(execFileSync('stty', ['-F', tty, '-a'], { encoding: 'utf8', timeout: 2000 }));
  } catch {
    return null;
  }
}
