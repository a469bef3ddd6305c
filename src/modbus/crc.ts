/** Modbus RTU CRC-16 (polynomial 0xA001, initial 0xFFFF); sent low byte first. */
export function crc16(data: Uint8Array): number {
  let crc = 0xffff;
  for (const byte of data) {
    crc ^= byte;
    for (let i = 0; i < 8; i++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
  }
  return crc;
}

/** Appends the CRC to a frame body. */
export function withCrc(body: Uint8Array): Buffer {
  const out = Buffer.alloc(body.length + 2);
  out.set(body, 0);
  out.writeUInt16LE(crc16(body), body.length);
  return out;
}

export function hasValidCrc(frame: Uint8Array): boolean {
  if (frame.length < 4) return false;
  const body = frame.subarray(0, frame.length - 2);
  return crc16(body) === (frame[frame.length - 2] | (frame[frame.length - 1] << 8));
}
