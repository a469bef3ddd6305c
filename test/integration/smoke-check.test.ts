// The smoke check that ends every install path (npm ci's postinstall, install.sh, the
// package build and postinst) passes on a good install and fails loudly, with the fix,
// when an install script did not run (npm 12 skips those allowScripts does not list).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const smoke = (dir: string) => spawnSync(process.execPath, [join(dir, 'scripts/smoke-check.mjs')], { encoding: 'utf8', timeout: 60_000 });

describe('scripts/smoke-check.mjs', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('passes on this checkout', () => {
    const r = smoke(resolve('.'));
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/better-sqlite3 opens an in-memory database \(SQLite 3\.\d+\.\d+\)/);
    expect(r.stdout).toContain('@serialport/bindings-cpp loads its native binding');
  });

  it('fails with the fix when better-sqlite3 was installed without its install script', () => {
    // An install where better-sqlite3's native build never happened, everything else as here.
    dir = mkdtempSync(join(tmpdir(), 'mg-smoke-'));
    mkdirSync(join(dir, 'scripts'));
    cpSync('scripts/smoke-check.mjs', join(dir, 'scripts/smoke-check.mjs'));
    cpSync('package.json', join(dir, 'package.json'));
    mkdirSync(join(dir, 'node_modules'));
    for (const name of readdirSync('node_modules')) {
      if (name === 'better-sqlite3' || name.startsWith('.')) continue;
      symlinkSync(resolve('node_modules', name), join(dir, 'node_modules', name));
    }
    cpSync('node_modules/better-sqlite3', join(dir, 'node_modules/better-sqlite3'), { recursive: true, filter: (src) => !src.includes('/build') });

    const r = smoke(dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('smoke check FAILED');
    expect(r.stderr).toContain('better-sqlite3 cannot open a database');
    expect(r.stderr).toContain('allowScripts lists "better-sqlite3"; then `npm rebuild better-sqlite3`');
    // The serialport binding was fine and is not blamed.
    expect(r.stderr).not.toContain('serialport binding does not load');
  });

  it('package.json allows exactly the install scripts a gateway needs', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { allowScripts: Record<string, boolean>; scripts: Record<string, string> };
    expect(Object.entries(pkg.allowScripts).filter(([, allowed]) => allowed).map(([name]) => name).sort()).toEqual(['@serialport/bindings-cpp', 'better-sqlite3']);
    expect(pkg.scripts.postinstall).toBe('node scripts/smoke-check.mjs');
  });
});
