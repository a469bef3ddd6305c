import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes a filler file in `dir` until its file system refuses one more byte (64 KiB, then
 * 4 KiB, then single bytes), for tests of a full disk on a small tmpfs; returns its path.
 */
export function fillToLastByte(dir: string): string {
  const path = join(dir, `filler-${Date.now()}`);
  const fd = openSync(path, 'w');
  try {
    for (const size of [65_536, 4096, 1]) {
      const chunk = Buffer.alloc(size, 0x5a);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}
