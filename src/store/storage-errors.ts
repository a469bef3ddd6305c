// Which SQLite failures mean "the store cannot take writes right now" (retry later with the
// same data) rather than "this write is wrong" (retrying the same data would fail again).
import Database from 'better-sqlite3';

/**
 * Primary result codes (the extended ones start with them: SQLITE_IOERR_SHMSIZE,
 * SQLITE_BUSY_SNAPSHOT, SQLITE_READONLY_DBMOVED ...) that come from the storage or from
 * another process, never from the data: disk full, I/O error, locked by another process
 * past the busy timeout, file system remounted read-only, file not openable, file too big
 * for the file system.
 */
const TRANSIENT = ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_READONLY', 'SQLITE_CANTOPEN', 'SQLITE_PROTOCOL', 'SQLITE_NOLFS'];

export type StorageError = InstanceType<typeof Database.SqliteError>;

export function isStorageUnavailable(err: unknown): err is StorageError {
  if (!(err instanceof Database.SqliteError)) return false;
  return TRANSIENT.some((code) => err.code === code || err.code.startsWith(`${code}_`));
}

/** `SQLITE_FULL: database or disk is full` — the reason shown in /healthz and the log. */
export function storageErrorReason(err: unknown): string {
  if (err instanceof Database.SqliteError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** While the store refuses writes, what waits for it is tried again this often (the recorder's queue, the charger writes' queue). */
export const STORE_RETRY_EVERY_MS = 1_000;

/**
 * SQLite's busy timeout for writes that have a later try (the daemon's connection has
 * 250 ms, a CLI's or a test's 5 s). better-sqlite3 waits for a lock on the event loop:
 * seconds per attempt while another process holds the database would stall polling, the
 * uplink and the chargers' answers. A locked store is retried instead, from a queue.
 */
export const STORE_WRITE_BUSY_TIMEOUT_MS = 100;

/** Runs `work` with the short busy timeout for writes that are retried (STORE_WRITE_BUSY_TIMEOUT_MS). */
export function withWriteBusyTimeout<T>(db: Database.Database, work: () => T): T {
  const busyTimeoutMs = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma(`busy_timeout = ${STORE_WRITE_BUSY_TIMEOUT_MS}`);
  try {
    return work();
  } finally {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
}

/** SQLITE_IOERR_SHMSIZE → SQLITE_IOERR: the label metrics count failures by. */
export const primaryCode = (code: string): string => code.split('_').slice(0, 2).join('_');
