// A config file that is not there: the commonest first mistake (every command reads
// /etc/metergate/config.yaml unless told otherwise, and a clone has no such file), so it
// gets its own words and the way out instead of "cannot read (ENOENT)".

/** Where every command looks without -c / --config (the package and scripts/install.sh put it there). */
export const DEFAULT_CONFIG_PATH = '/etc/metergate/config.yaml';

/** The problem line the loader reports for a path with no file. */
export const NO_SUCH_FILE = '(file): no such file';

/** What to do about a missing config file at `path`. */
export function missingConfigFix(path: string): string {
  const start = 'to start one: copy config/example.yaml (in a clone) or /opt/metergate/config/example.yaml, or try `metergate demo`';
  if (path === DEFAULT_CONFIG_PATH) return `without -c every command reads ${DEFAULT_CONFIG_PATH}: give your config file with -c FILE (--config FILE); ${start}`;
  return `check the path given with -c (a relative path is read from the current directory; without -c the default is ${DEFAULT_CONFIG_PATH}); ${start}`;
}
