// How doctor checks read the gateway's database: read-only (safe while the daemon runs;
// WAL readers never block the writer), waiting up to 5 s for a lock, closed afterwards.
import Database from 'better-sqlite3';

export interface ReadOnlyDb {
  readonly db: Database.Database;
  /** Whether the table exists (a database the daemon has not migrated to this version lacks it). */
  hasTable(name: string): boolean;
}

/** Opens `path` read-only, runs `read` on it and closes it, also when `read` throws. */
export async function withReadOnlyDb<T>(path: string, read: (ro: ReadOnlyDb) => T | Promise<T>): Promise<T> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const hasTable = (name: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
    return await read({ db, hasTable });
  } finally {
    db.close();
  }
}
