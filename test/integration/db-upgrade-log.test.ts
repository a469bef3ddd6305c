// After an upgrade the new program migrates the database at start and says so in its log
// (issue 21): the migrations it applied, by number and name, and its version. A database
// left by the previous release is stood in for by one migrated up to the newest migration
// but one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { databasePath, listMigrations, migrate } from '../../src/store/db.js';
import { VERSION } from '../../src/version.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

describe('the daemon on the database of the release before', () => {
  let dir = '';
  let daemon: DaemonProcess | undefined;
  afterEach(async () => {
    await daemon?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('applies the missing migration and logs it with its own version; a second start logs none', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-upgrade-log-'));
    const all = listMigrations();
    const newest = all[all.length - 1];
    const path = databasePath(join(dir, 'data'));
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(dir, 'data'));
    const old = new Database(path);
    migrate(old, all.slice(0, -1));
    old.close();
    const config = join(dir, 'config.yaml');
    writeFileSync(config, `organization_id: ${ORG}\ndata_dir: ${join(dir, 'data')}\nlog_level: info\nclock: { trust: system }\nhttp: { enabled: false }\nprices: { source: none }\nforecast: { enabled: false }\n`);

    daemon = await startDaemon(config, { startTimeoutMs: 120_000 });
    const lines = daemon
      .output()
      .split('\n')
      .filter((l) => l.includes('database migrated'))
      .map((l) => JSON.parse(l) as { msg: string; migrations: string[]; software_version: string });
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'database migrated: 1 schema migration(s) applied', migrations: [`${String(newest.version).padStart(3, '0')}_${newest.name}`], software_version: VERSION }),
    ]);
    await daemon.stop();

    daemon = await startDaemon(config, { startTimeoutMs: 120_000 });
    expect(daemon.output()).not.toContain('database migrated');
  });
});
