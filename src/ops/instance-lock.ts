// One `metergate run` per data directory, refused up front: a second daemon on the same
// data_dir would open the database, poll the meters (a serial line has one master) and
// connect to the broker under the same client id, knocking the running daemon off, and only
// then die on EADDRINUSE. The lock is taken before anything else is touched.
//
// The lock is a kernel lock (POSIX fcntl, through SQLite's EXCLUSIVE transaction on a file
// of its own, with the better-sqlite3 we ship anyway): the kernel drops it when the process
// ends however it ends, so a daemon killed with kill -9 (or by the watchdog) never leaves a
// stale lock behind for systemd's restart 5 s later, and a pid reused after a reboot cannot
// block a start. Who holds it is written beside it, only to name that process in the refusal.
import { chownSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export const LOCK_FILE = 'metergate.lock';
export const HOLDER_FILE = 'metergate.lock.pid';

/** Who holds the lock, as the holder wrote it. */
export interface LockHolder {
  readonly pid: number;
  readonly startedAt: string;
  readonly configPath?: string;
}

export class InstanceLockedError extends Error {
  override readonly name = 'InstanceLockedError';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | null,
  ) {
    super(instanceLockedMessage(dataDir, holder));
  }
}

/** The one-line refusal: the other process and the fix. */
export function instanceLockedMessage(dataDir: string, holder: LockHolder | null): string {
  const who = holder ? `pid ${holder.pid}, started ${holder.startedAt}${holder.configPath ? ` with ${holder.configPath}` : ''}` : 'its pid is not known';
  const stop = holder ? `\`sudo systemctl stop metergate\` if it is the service, else \`kill ${holder.pid}\`` : '`sudo systemctl stop metergate` if it is the service';
  return `another metergate run already uses the data directory ${dataDir} (${who}); stop it first (${stop}), or give this one its own data_dir`;
}

/** A held lock: kept open for the life of the process (closing it releases the lock). */
export interface InstanceLock {
  release(): void;
}

// Module-level, so the connection holding the lock is never garbage-collected (and closed).
const held: Database.Database[] = [];

function readHolder(dataDir: string): LockHolder | null {
  try {
    const h = JSON.parse(readFileSync(join(dataDir, HOLDER_FILE), 'utf8')) as { pid?: unknown; started_at?: unknown; config?: unknown };
    if (typeof h.pid !== 'number' || typeof h.started_at !== 'string') return null;
    return { pid: h.pid, startedAt: h.started_at, ...(typeof h.config === 'string' ? { configPath: h.config } : {}) };
  } catch {
    return null;
  }
}

/** Run as root in a data directory owned by the service user: the files stay usable by it. */
function giveToDirectoryOwner(dataDir: string, paths: readonly string[]): void {
  if (process.getuid?.() !== 0) return;
  try {
    const dir = statSync(dataDir);
    if (dir.uid === 0) return;
    for (const p of paths) if (statSync(p).uid === 0) chownSync(p, dir.uid, dir.gid);
  } catch {
    /* best effort: the next start as the service user says what is wrong */
  }
}

/**
 * Takes the data directory's lock or throws InstanceLockedError naming the holder. Creates
 * the directory if needed (as the database would); touches nothing else in it.
 */
export function takeInstanceLock(dataDir: string, opts: { configPath?: string; nowMs?: number } = {}): InstanceLock {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = join(dataDir, LOCK_FILE);
  const db = new Database(lockPath, { timeout: 0 });
  try {
    // No journal file beside the lock file: the transaction never writes.
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new InstanceLockedError(dataDir, readHolder(dataDir));
    throw err;
  }
  held.push(db);
  const holderPath = join(dataDir, HOLDER_FILE);
  const holder = { pid: process.pid, started_at: new Date(opts.nowMs ?? Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'), ...(opts.configPath ? { config: opts.configPath } : {}) };
  // Written whole or not at all: a reader never sees half a line. Best effort: on a full
  // disk the daemon still starts (docs/uplink.md); a refused second run then cannot name the pid.
  try {
    writeFileSync(`${holderPath}.tmp`, `${JSON.stringify(holder)}\n`);
    renameSync(`${holderPath}.tmp`, holderPath);
  } catch {
    rmSync(`${holderPath}.tmp`, { force: true });
    rmSync(holderPath, { force: true });
  }
  giveToDirectoryOwner(dataDir, [lockPath, holderPath]);
  return {
    release: () => {
      const i = held.indexOf(db);
      if (i < 0) return;
      held.splice(i, 1);
      db.close();
    },
  };
}
