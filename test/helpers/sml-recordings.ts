// The real SML recordings in test/data/sml/ (sources and licences in its README): hex text,
// `#` comments and white space ignored, as the bytes the meter sent.
import { readFileSync } from 'node:fs';

export const SML_DATA_DIR = new URL('../data/sml/', import.meta.url);

export function smlRecording(name: string): Buffer {
  const text = readFileSync(new URL(name, SML_DATA_DIR), 'utf8');
  return Buffer.from(text.replace(/#.*$/gm, '').replace(/\s+/g, ''), 'hex');
}

/** The recordings' files as the meter sent them, each from its start sequence to its CRC. */
export function smlFiles(recording: Buffer): Buffer[] {
  const start = Buffer.from('1b1b1b1b01010101', 'hex');
  const files: Buffer[] = [];
  for (let at = recording.indexOf(start); at >= 0; ) {
    const next = recording.indexOf(start, at + 8);
    const end = recording.indexOf(Buffer.from('1b1b1b1b1a', 'hex'), at + 8);
    if (end < 0 || end + 8 > recording.length) break;
    if (next < 0 || end < next) files.push(recording.subarray(at, end + 8));
    at = next;
  }
  return files;
}
