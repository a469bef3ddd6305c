#!/usr/bin/env node
// Smoke check at the end of every install path (npm ci's postinstall, scripts/install.sh,
// scripts/package, the package's postinst): the two native modules the daemon cannot run
// without must load here, with this Node. npm 12 skips install scripts that package.json's
// allowScripts does not list, and `npm ci` still succeeds: without this check the first
// sign would be a daemon that cannot open its database.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(new URL('../package.json', import.meta.url));
const failures = [];

try {
  const Database = require('better-sqlite3');
  const db = new Database(':memory:');
  const version = db.prepare('SELECT sqlite_version()').pluck().get();
  db.close();
  console.log(`smoke check: better-sqlite3 opens an in-memory database (SQLite ${version})`);
} catch (err) {
  failures.push(
    `better-sqlite3 cannot open a database: ${err.message.split('\n')[0]}\n` +
      '  fix: its install script must run: package.json allowScripts lists "better-sqlite3"; then `npm rebuild better-sqlite3`\n' +
      '       (a compiler is needed where no prebuilt binary fits: apt install build-essential python3)',
  );
}

try {
  // The package loads its native binding lazily; load it the way it does, now.
  const main = require.resolve('@serialport/bindings-cpp');
  const { binding } = require(join(dirname(main), 'serialport-bindings.js'));
  if (typeof binding?.open !== 'function') throw new Error('the native binding has no open()');
  console.log('smoke check: @serialport/bindings-cpp loads its native binding');
} catch (err) {
  failures.push(
    `the serialport binding does not load: ${err.message.split('\n')[0]}\n` +
      '  fix: package.json allowScripts lists "@serialport/bindings-cpp"; then `npm rebuild @serialport/bindings-cpp`',
  );
}

if (failures.length > 0) {
  console.error(`smoke check FAILED (Node ${process.version}, ${process.platform}-${process.arch}):\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
