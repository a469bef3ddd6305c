// Benchmarks measure what ships: the compiled modules in dist/ (built first), typed as their source.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root (where `npm run build` runs and dist/ lands). */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** `npm run build`, so dist/ is the code of this checkout. */
export function buildDist(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: repoRoot, stdio: 'inherit' });
}

/** A compiled module, e.g. `fromDist<typeof import('../../src/config/derived.js')>('config/derived.js')`. */
export async function fromDist<T>(path: string): Promise<T> {
  return (await import(new URL(`../../dist/${path}`, import.meta.url).href)) as T;
}

/** What a store or uplink benchmark builds a gateway from: config, context, logger, database and uplink (recorder, publisher). */
export async function distGateway() {
  const { validateConfig } = await fromDist<typeof import('../../src/config/load.js')>('config/load.js');
  const { createContext, buildUplink } = await fromDist<typeof import('../../src/daemon.js')>('daemon.js');
  const { createLogger } = await fromDist<typeof import('../../src/log.js')>('log.js');
  const { openDatabase } = await fromDist<typeof import('../../src/store/db.js')>('store/db.js');
  return { validateConfig, createContext, createLogger, openDatabase, buildUplink };
}

/**
 * The dist/ of an earlier commit, to measure next to this checkout in the same run: `git
 * archive` of `ref` into the temporary directory, compiled there against this checkout's
 * node_modules (once per commit and checkout; reused while it is there), and bundled as that commit's build
 * did. Returns its dist/ directory.
 */
export function buildBaselineDist(ref: string): string {
  const sha = execFileSync('git', ['rev-parse', '--short', `${ref}^{commit}`], { cwd: repoRoot, encoding: 'utf8' }).trim();
  // One per commit and checkout: the build links this checkout's node_modules, whose native
  // modules are built for one Node (scripts/on-bundled-node's copy has its own).
  const checkout = createHash('sha256').update(repoRoot).digest('hex').slice(0, 8);
  const dir = join(tmpdir(), `mg-bench-baseline-${sha}-${checkout}`);
  if (existsSync(join(dir, 'dist', 'cli.js'))) return join(dir, 'dist');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // From the work tree's top: in scripts/on-bundled-node's copy (inside .tmp, untracked) git
  // archive refuses to run ("current working directory is untracked").
  const top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C '${dir}'`], { cwd: top });
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: dir, stdio: 'inherit' });
  execFileSync('node', ['scripts/copy-assets.mjs'], { cwd: dir, stdio: 'inherit' });
  // As its `npm run build` did: the bundle, from when there is one.
  if (existsSync(join(dir, 'scripts', 'bundle.mjs'))) execFileSync('node', ['scripts/bundle.mjs'], { cwd: dir, stdio: 'inherit' });
  return join(dir, 'dist');
}
