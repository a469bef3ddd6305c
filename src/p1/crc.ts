// CRC of a DSMR 4+ telegram: CRC-16/ARC (polynomial 0xA001 reflected, initial value 0) over
// every byte from '/' to '!' inclusive, sent as four upper-case hex digits after the '!'.
// Same polynomial as Modbus, other initial value, so it is not shared with modbus/crc.ts.

export function dsmrCrc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let i = 0; i < 8; i++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
  }
  return crc;
}

/** The four hex digits a telegram body ('/' .. '!' inclusive, latin1) ends with. */
export function dsmrCrcHex(body: string): string {
  return dsmrCrc16(Buffer.from(body, 'latin1')).toString(16).toUpperCase().padStart(4, '0');
}
