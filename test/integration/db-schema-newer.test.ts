// A database that a newer metergate migrated (an older package installed over a newer
// one) is refused with a clear message instead of being written to (issue 12 point 6).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { databasePath, listMigrations, openDatabase, SchemaTooNewError } from '../../src/store/db.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';

describe('a database from a newer metergate', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A database migrated by this version plus one migration this version does not have. */
  function newerDatabase(): string {
    dir = mkdtempSync(join(tmpdir(), 'mg-newer-'));
    const path = databasePath(join(dir, 'data'));
    const db = openDatabase(path);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (998, 'from_the_future', '2027-01-01T00:00:00Z')").run();
    db.close();
    return path;
  }

  it('is refused by openDatabase, naming the unknown migration, and left as it was', () => {
    const path = newerDatabase();
    const newest = Math.max(...listMigrations().map((m) => m.version));
    expect(() => openDatabase(path)).toThrow(SchemaTooNewError);
    expect(() => openDatabase(path)).toThrow(new RegExp(`migration 998 unknown to this version, which knows up to ${String(newest).padStart(3, '0')}`));
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT max(version) FROM schema_migrations').pluck().get()).toBe(998);
    db.close();
  });

  it('`metergate run` exits 78 (no restart loop under systemd) with the message', () => {
    const path = newerDatabase();
    const config = join(dir, 'config.yaml');
    writeFileSync(config, `organization_id: ${ORG}\ndata_dir: ${join(dir, 'data')}\nmqtt: { url: 'mqtts://127.0.0.1:1' }\nclock: { trust: system }\nhttp: { enabled: false }\nprices: { source: none }\nforecast: { enabled: false }\n`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'run', '--config', config], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stdout + r.stderr).toBe(78);
    expect(r.stderr).toContain('migrated by a newer metergate');
    expect(r.stderr).toContain(join(dir, 'data'));
    expect(new Database(path, { readonly: true }).prepare('SELECT count(*) FROM schema_migrations WHERE version = 998').pluck().get()).toBe(1);
  });
});
