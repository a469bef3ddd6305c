// A recorded SML byte stream kept as hex text (test/data/sml/*.hex: two hex digits per byte,
// `#` comments and white space ignored) and the whole files in it, each from its start
// sequence to its CRC, as the meter sent them (pure). The simulator replays them unchanged.

const START = Buffer.from('1b1b1b1b01010101', 'hex');
const END = Buffer.from('1b1b1b1b1a', 'hex');

export function smlRecordingBytes(hexText: string): Buffer {
  const hex = hexText.replace(/#.*$/gm, '').replace(/\s+/g, '');
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) throw new Error('not an SML recording: expected hex text (two digits per byte)');
  return Buffer.from(hex, 'hex');
}

/** The whole files of a recording in order; a cut one (a new start before its end, or the recording's end) is left out. */
export function smlRecordedFiles(recording: Buffer): Buffer[] {
  const files: Buffer[] = [];
  for (let at = recording.indexOf(START); at >= 0; ) {
    const next = recording.indexOf(START, at + START.length);
    const end = recording.indexOf(END, at + START.length);
    if (end < 0 || end + 8 > recording.length) break;
    if (next < 0 || end < next) files.push(recording.subarray(at, end + 8));
    at = next;
  }
  return files;
}
