// CRC of an SML transport file (SML 1.04, section 6.4): CRC-16/X-25 (polynomial 0x1021
// reflected = 0x8408, initial 0xFFFF, final XOR 0xFFFF) over every byte from the start escape
// sequence to the end sequence's padding count inclusive, sent low byte first. Pure.

export function smlCrc16(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0xffff;
  for (let i = start; i < end; i++) {
    crc ^= bytes[i]!;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x8408 : crc >>> 1;
  }
  return crc ^ 0xffff;
}
