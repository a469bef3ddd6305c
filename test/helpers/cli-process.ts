// `metergate <args>` as a child process for tests, without blocking this one (a charger or
// daemon in the same test keeps answering meanwhile): its exit code and output.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * From the build (`dist/cli.js`; scripts/test builds first), or from the sources through tsx
 * (no build needed, but each process costs seconds on a loaded machine).
 */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, from: 'build' | 'source' = 'build'): Promise<CliResult> {
  if (from === 'build' && !existsSync(join(root, 'dist/cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
  const entry = from === 'build' ? ['dist/cli.js'] : ['--import', 'tsx', 'src/cli.ts'];
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [...entry, ...args], { cwd: root, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
