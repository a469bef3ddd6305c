import Database from 'better-sqlite3';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isStorageUnavailable } from './storage-errors.js';

export type Db = Database.Database;

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Migrations are SQL files named `NNN_name.sql`, applied once each in version order. */
export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .map((file) => /^(\d{3})_([\w-]+)\.sql$/.exec(file))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ version: Number(m[1]), name: m[2], sql: readFileSync(join(dir, m[0]), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/** The database has migrations this program does not have: it was written by a newer version. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly unknownVersions: readonly number[],
    readonly newestKnown: number,
  ) {
    super(
      `the database was migrated by a newer metergate (schema migration ${unknownVersions.map((v) => String(v).padStart(3, '0')).join(', ')} unknown to this version, which knows up to ${String(newestKnown).padStart(3, '0')}); ` +
        'refusing to open it so nothing is overwritten. Install the newer metergate again, or move the database away to start with an empty one',
    );
    this.name = 'SchemaTooNewError';
  }
}

export function migrate(db: Db, migrations: Migration[] = listMigrations()): number[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
  // A database a newer metergate migrated (an older package installed over a newer one):
  // this program does not know those changes, and writing to it could break them.
  const known = new Set(migrations.map((m) => m.version));
  const unknown = [...applied].filter((v) => !known.has(v)).sort((a, b) => a - b);
  if (unknown.length > 0) throw new SchemaTooNewError(unknown, Math.max(0, ...known));
  const done: number[] = [];
  for (const m of migrations) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
    })();
    done.push(m.version);
  }
  return done;
}

/**
 * Opens (creating if needed) the gateway database: WAL so readers never block the
 * poller, synchronous=NORMAL (a WAL commit survives a process crash; a power cut can
 * lose at most the last transactions, never corrupt the file), then migrates. Commits
 * that must survive a power cut too go through `durableTransaction`.
 *
 * On a full disk SQLite cannot even read a WAL database that was closed cleanly: the
 * first connection must create the 32 KiB shared-memory index (-shm) and gets
 * SQLITE_IOERR_SHMSIZE. A small reserve file next to the database is given up for it
 * then, so the daemon starts, polls and keeps what it cannot store yet in memory
 * (docs/uplink.md); the reserve is made again at the next open with space.
 */
export function openDatabase(path: string, onMigrated?: MigratedListener, pageSizeBytes = PAGE_SIZE_BYTES): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  let db: Db;
  try {
    db = configure(path, onMigrated, pageSizeBytes);
  } catch (err) {
    if (path === ':memory:' || !isStorageUnavailable(err) || !releaseReserve(path)) throw err;
    db = configure(path, onMigrated, pageSizeBytes);
  }
  if (path !== ':memory:') keepReserve(path);
  giveToDirectoryOwner(path);
  return db;
}

/** The page size of a new database (docs/uplink.md, storage wear). */
export const PAGE_SIZE_BYTES = 1024;

/**
 * The page size for a new database of a gateway with `meterCount` meters: 512 B with at most
 * one. A tick's commit then appends two 536-byte WAL frames instead of two 1048-byte ones;
 * with one reading per tick that is what keeps it under 6 kB written per reading (the fsync of
 * each tick writes the 4 KiB file-system page the WAL ends in whatever the page size). With
 * more meters the tick's pages are shared by its readings and 512 B gains nothing measurable
 * (docs/uplink.md, Storage wear), while every other table gets deeper trees and rows over
 * ~480 bytes overflow: 1 KiB stays the default. Only a new, empty file takes it.
 */
export function pageSizeForMeters(meterCount: number): number {
  return meterCount <= 1 ? 512 : PAGE_SIZE_BYTES;
}

/** Told the migrations an open applied (in order), when it applied any. */
export type MigratedListener = (applied: readonly Migration[]) => void;

function configure(path: string, onMigrated: MigratedListener | undefined, pageSizeBytes: number): Db {
  const db = new Database(path);
  try {
    // Small pages (1 KiB, or 512 B: pageSizeForMeters) instead of 4 KiB: a commit writes every
    // page it touches whole, to the WAL and again at the checkpoint, and a poll tick adds a few
    // hundred bytes per meter (SD-card wear, measured in docs/uplink.md). Only a new, empty
    // database takes it (before WAL); an existing one keeps its page size until a VACUUM.
    db.pragma(`page_size = ${pageSizeBytes}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    // better-sqlite3 builds SQLite with a 16 MB page cache per connection; SQLite's own
    // default of 2 MB serves a gateway's working set (the OS caches the file anyway), and a
    // scan of a long outbox would otherwise leave 14 MB more resident. mmap stays off (the
    // default), so the file's pages never count as the daemon's memory.
    db.pragma('cache_size = -2000');
    const migrations = listMigrations();
    const done = new Set(migrate(db, migrations));
    if (done.size > 0) onMigrated?.(migrations.filter((m) => done.has(m.version)));
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Two -shm chunks of 32 KiB (one indexes 4096 WAL pages; the WAL checkpoints at 1000). */
export const RESERVE_BYTES = 64 * 1024;
export const reservePath = (dbPath: string): string => `${dbPath}-reserve`;

/** Gives the reserve up; true when there was one. */
function releaseReserve(dbPath: string): boolean {
  if (!existsSync(reservePath(dbPath))) return false;
  rmSync(reservePath(dbPath), { force: true });
  return true;
}

/** Writes the reserve when it is missing and there is room; never fails the open. */
function keepReserve(dbPath: string): void {
  const file = reservePath(dbPath);
  if (existsSync(file) && statSync(file).size === RESERVE_BYTES) return;
  try {
    const fd = openSync(file, 'w');
    try {
      writeSync(fd, Buffer.alloc(RESERVE_BYTES));
    } finally {
      closeSync(fd);
    }
  } catch {
    rmSync(file, { force: true }); // no room yet: made at a later open
  }
}

/**
 * `sudo metergate token create` (or `prices import`) before the service ever ran would
 * leave a root-owned database that the service user cannot write, and the service would
 * fail at start. Run as root, files created in a data directory that belongs to someone
 * else are handed to that owner (the WAL and shared-memory files too).
 */
function giveToDirectoryOwner(path: string): void {
  if (path === ':memory:' || process.getuid?.() !== 0) return;
  try {
    const dir = statSync(dirname(path));
    if (dir.uid === 0) return;
    for (const p of [path, `${path}-wal`, `${path}-shm`, reservePath(path)]) {
      if (existsSync(p) && statSync(p).uid === 0) chownSync(p, dir.uid, dir.gid);
    }
  } catch {
    /* best effort: doctor's database line reports what is still wrong */
  }
}

/**
 * The daemon's connection waits at most this long for a lock another process holds (the
 * CLI tools keep 5 s). better-sqlite3 waits on the event loop: 5 s per write attempt while
 * `metergate prices import` or an operator's sqlite3 holds the write lock stalled polling
 * (10 s gaps between readings, measured) and the uplink. Every writer in the daemon has a
 * later try (the recorder's queue, outbox deletes resent as duplicates, hourly jobs).
 */
export const DAEMON_BUSY_TIMEOUT_MS = 250;

/**
 * The daemon's page cache, KiB. Its working set is the last pages of a few tables (a tick's
 * commit touches a handful); the 2 MB of the CLI tools filled up with the forecaster's read of a
 * year of prices and stayed resident (1.5 MB of malloc at the RSS peak, measured with
 * heaptrack: docs/architecture.md, Memory). The file's pages stay in the OS page cache, so a
 * miss is a pread, not a disk read. A transaction dirtying more pages than this spills them to
 * the WAL before its commit; the daemon's largest (a month of backfilled prices, a forecast,
 * batched deletes) stay below it, so storage wear is unchanged (storage-wear.ts).
 */
export const DAEMON_CACHE_KIB = 512;

export function openDaemonDatabase(path: string, onMigrated?: MigratedListener, pageSizeBytes = PAGE_SIZE_BYTES): Db {
  const db = openDatabase(path, onMigrated, pageSizeBytes);
  db.pragma(`busy_timeout = ${DAEMON_BUSY_TIMEOUT_MS}`);
  db.pragma(`cache_size = -${DAEMON_CACHE_KIB}`);
  return db;
}

export function databasePath(dataDir: string): string {
  return join(dataDir, 'metergate.db');
}

/**
 * Runs `work` in a transaction whose commit is on stable storage when it returns
 * (synchronous=FULL: the WAL is fsynced at commit; that also covers every NORMAL commit
 * before it). For readings and the messages built from them: a power cut must not lose a
 * measurement (design.md). Everything else stays NORMAL — an outbox delete lost to a power
 * cut only means a duplicate publish, and one fsync per 50 ms batch would slow the drain
 * on SD cards. The pragma cannot change inside a transaction, hence around it; better-
 * sqlite3 is synchronous, so nothing else runs in between.
 */
export function durableTransaction<T>(db: Db, work: () => T): T {
  // Inside a caller's transaction (bulk loads) the level cannot change: that one commits.
  if (db.inTransaction) return db.transaction(work)();
  db.pragma('synchronous = FULL');
  try {
    return db.transaction(work)();
  } finally {
    db.pragma('synchronous = NORMAL');
  }
}
