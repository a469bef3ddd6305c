import { chownSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { isRoot } from '../helpers/peers.js';


describe.skipIf(!isRoot)('database files created by root in the service\'s data directory', () => {
  const base = mkdtempSync(join(tmpdir(), 'mg-owner-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('belong to the directory\'s owner, so `sudo metergate token create` before the first start does not lock the service out', () => {
    const dataDir = join(base, 'metergate');
    mkdirSync(dataDir, { mode: 0o750 });
    chownSync(dataDir, 65534, 65534); // stands for the metergate user
    const path = join(dataDir, 'metergate.db');
    const db = openDatabase(path);
    try {
      for (const p of [path, `${path}-wal`, `${path}-shm`]) expect(statSync(p).uid, p).toBe(65534);
    } finally {
      db.close();
    }
  });

  it('leaves files in root\'s own directories alone', () => {
    const path = join(base, 'root.db');
    openDatabase(path).close();
    expect(statSync(path).uid).toBe(0);
  });
});
