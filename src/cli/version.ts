// `metergate --version`: what an installer or a bug report needs to know about this
// install: the package version, the Node running it, and the native modules (the part of
// a package built per architecture), each loaded for real so a broken build shows here.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { VERSION } from '../version.js';

const require = createRequire(import.meta.url);

/** The version in a dependency's package.json (its `exports` may hide the file from require). */
function packageVersion(name: string): string {
  let dir = dirname(require.resolve(name));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name && typeof pkg.version === 'string') return pkg.version;
    } catch {
      /* no package.json at this level: go up */
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json for ${name}`);
    dir = up;
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

function sqliteLine(): string {
  let version = '?';
  try {
    version = packageVersion('better-sqlite3');
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const db = new Database(':memory:');
    const sqlite = db.prepare('SELECT sqlite_version()').pluck().get() as string;
    db.close();
    return `sqlite ${sqlite} (better-sqlite3 ${version})`;
  } catch (err) {
    return `sqlite NOT LOADABLE (better-sqlite3 ${version}: ${firstLine(err)}; fix: npm rebuild better-sqlite3, or reinstall the package for this architecture)`;
  }
}

function serialLine(): string {
  let version = '?';
  try {
    version = packageVersion('@serialport/bindings-cpp');
    // The package loads its native binding lazily; load it the way it does.
    const { binding } = require(join(dirname(require.resolve('@serialport/bindings-cpp')), 'serialport-bindings.js')) as { binding?: { open?: unknown } };
    if (typeof binding?.open !== 'function') throw new Error('the native binding has no open()');
    return `serialport bindings ${version} (@serialport/bindings-cpp, native binding loaded)`;
  } catch (err) {
    return `serialport bindings NOT LOADABLE (@serialport/bindings-cpp ${version}: ${firstLine(err)})`;
  }
}

/** One line per component; the first is `metergate VERSION` alone, for scripts. */
export function versionReport(): string {
  return [
    `metergate ${VERSION}`,
    `node ${process.versions.node} (module ABI ${process.versions.modules}, ${process.platform}-${process.arch})`,
    sqliteLine(),
    serialLine(),
    `modbus-serial ${packageVersion('modbus-serial')}`,
  ].join('\n');
}
