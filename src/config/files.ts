// Files a config names (secrets, TLS certificates and keys), read at load time: a file that
// cannot be read becomes a config problem saying why, never an exception.
import { readFileSync } from 'node:fs';

/**
 * The file's text, or undefined with a problem for `setting` appended to `problems`.
 * `missingHint` says what to put in a file that does not exist.
 */
export function readConfigFile(path: string, setting: string, problems: string[], missingHint?: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? `does not exist${missingHint ? ` (${missingHint})` : ''}`
        : code === 'EACCES'
          ? 'is not readable by this user (make it root:metergate 0640; run checks with sudo)'
          : `cannot be read (${code ?? 'error'})`;
    problems.push(`${setting}: ${path} ${why}`);
    return undefined;
  }
}
