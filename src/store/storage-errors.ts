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
