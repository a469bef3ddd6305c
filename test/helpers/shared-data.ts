import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'vitest';
import { peer } from './peers.js';

/**
 * Real recorded data lives in ../shared/data (third-party files, never copied into the
 * project). Tests that need it use `describe.skipIf(!hasSharedData)` and say why.
 */
export const SHARED_DATA_DIR = resolve(process.cwd(), '../shared/data');
export const SKIP_REASON = `real recorded data not found at ${SHARED_DATA_DIR} (../shared/data is absent): skipping`;
/** With CI set a missing data directory fails the test file that needs it (see peers.ts). */
export const hasSharedData = peer(`real recorded data at ${SHARED_DATA_DIR}`, existsSync(SHARED_DATA_DIR), 'check out ../shared beside the project');

export function sharedData(relativePath: string): string {
  return resolve(SHARED_DATA_DIR, relativePath);
}


/**
 * A suite whose body reads shared data while it is collected. `describe.skipIf` still runs
 * the body (vitest collects skipped suites), so without the data the body is not called at
 * all and a single skipped test says why.
 */
export function describeWithSharedData(name: string, body: () => void): void {
  if (hasSharedData) describe(name, body);
  else describe.skip(`${name} (${SKIP_REASON})`, () => it.skip('needs ../shared/data', () => {}));
}
