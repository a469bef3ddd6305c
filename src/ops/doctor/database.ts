// doctor: the SQLite database passes a quick integrity check.
import { existsSync } from 'node:fs';
import { databasePath } from '../../store/db.js';
import { withReadOnlyDb } from './read-only-db.js';
import { errorCode, errorMessage, fail, pass, warn, type DoctorCheck } from './types.js';

const RECOVER_FIX = (path: string) =>
  `sudo systemctl stop metergate; keep a copy; \`sqlite3 ${path} ".recover" | sqlite3 ${path}.recovered\` and move it in place, or move the file aside (unsent readings are lost); then start again`;

/**
 * SQLite integrity with PRAGMA quick_check (O(N), skips the index-vs-table cross check
 * that integrity_check does, so it finishes in seconds on an SD card). Read-only: safe
 * while the daemon runs (WAL readers never block the writer).
 */
export const databaseCheck: DoctorCheck = {
  name: 'database',
  needsConfig: true,
  async run(env) {
    const path = databasePath(env.config!.data_dir);
    if (!existsSync(path)) return [warn('database', `${path} does not exist yet (created when the daemon first starts)`, 'sudo systemctl start metergate')];
    try {
      return await withReadOnlyDb(path, ({ db, hasTable }) => {
        const rows = db.pragma('quick_check') as Array<{ quick_check: string }>;
        const problems = rows.map((r) => r.quick_check.replace(/\s+/g, ' ').trim()).filter((r) => r !== 'ok');
        if (problems.length > 0) {
          return [
            fail(
              'database',
              `${path}: corrupt, quick_check found ${problems.length} problem(s): ${problems.slice(0, 3).join('; ')}`,
              RECOVER_FIX(path),
            ),
          ];
        }
        const outbox = hasTable('outbox') ? (db.prepare('SELECT COUNT(*) FROM outbox').pluck().get() as number) : 0;
        const version = hasTable('schema_migrations') ? (db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get() as number | null) : null;
        return [pass('database', `${path}: quick_check ok, schema ${version ?? 'none'}, ${outbox} message(s) waiting in the outbox`)];
      });
    } catch (err) {
      const code = errorCode(err);
      if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') return [fail('database', `${path}: corrupt (${errorMessage(err)})`, RECOVER_FIX(path))];
      return [fail('database', `${path}: ${errorMessage(err)}`, `check ownership (\`sudo chown -R metergate: ${env.config!.data_dir}\`) and that the file is a metergate database`)];
    }
  },
};
