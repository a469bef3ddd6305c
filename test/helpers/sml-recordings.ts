// The real SML recordings in test/data/sml/ (sources and licences in its README): hex text,
// `#` comments and white space ignored, as the bytes the meter sent.
import { readFileSync } from 'node:fs';
import { smlRecordedFiles, smlRecordingBytes } from '../../src/sim/sml-recording.js';

export const SML_DATA_DIR = new URL('../data/sml/', import.meta.url);

export function smlRecording(name: string): Buffer {
  return smlRecordingBytes(readFileSync(new URL(name, SML_DATA_DIR), 'utf8'));
}

/** The recordings' files as the meter sent them, each from its start sequence to its CRC. */
export const smlFiles = smlRecordedFiles;
