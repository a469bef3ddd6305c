import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Real recorded data lives in ../shared/data (third-party files, never copied into the
 * project). Tests that need it use `describe.skipIf(!hasSharedData)` and say why.
 */
export const SHARED_DATA_DIR = resolve(process.cwd(), '../shared/data');
export const hasSharedData = existsSync(SHARED_DATA_DIR);
export const SKIP_REASON = `real recorded data not found at ${SHARED_DATA_DIR} (../shared/data is absent): skipping`;

export function sharedData(relativePath: string): string {
  return resolve(SHARED_DATA_DIR, relativePath);
}

if (!hasSharedData) console.warn(SKIP_REASON);
