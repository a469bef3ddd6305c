// One `metergate run` per data directory (issue 31 point 5): a second one is refused before
// it opens the database, polls or listens, in one line naming the first one's pid and the
// fix; a daemon killed with kill -9 leaves no lock behind; a start-up failure (a port in
// use) is one human line on stderr, not a stack trace. Real processes, real files.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';

const root = resolve('.');

/** `metergate run` to its end: exit code, stdout and stderr. */
function runToExit(configPath: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'run', '--config', configPath], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolveExit) =>
    // 'close', not 'exit': stdout and stderr read to their end.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolveExit({ code, stdout, stderr });
    }),
  );
}

describe('metergate run: one daemon per data directory', () => {
  let dir: string;
  const running: DaemonProcess[] = [];

  function writeConfig(name: string, httpPort: number): string {
    const path = join(dir, name);
    writeFileSync(path, `organization_id: 3f2504e0-4f89-41d3-9a0c-0305e82c3301\ndata_dir: ${dir}/data\nlog_level: info\nhttp:\n  port: ${httpPort}\nprices:\n  source: none\nforecast:\n  enabled: false\n`);
    return path;
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-single-'));
  });
  afterAll(async () => {
    for (const d of running) await d.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second run on the same data directory up front, naming the first one and the fix', { timeout: 180_000 }, async () => {
    const first = await startDaemon(writeConfig('first.yaml', await freePort()));
    running.push(first);
    // Another config (another HTTP port, so only the lock can refuse it) on the same data_dir.
    const second = await runToExit(writeConfig('second.yaml', await freePort()));
    expect(second.code, second.stderr).toBe(75);
    const lines = second.stderr.trimEnd().split('\n');
    expect(lines, second.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`another metergate run already uses the data directory ${dir}/data (pid ${first.process.pid}, started `);
    expect(lines[0]).toContain(`with ${join(dir, 'first.yaml')}`);
    expect(lines[0]).toContain(`\`kill ${first.process.pid}\``);
    expect(lines[0]).toContain('sudo systemctl stop metergate');
    // It touched nothing: not one log line (no database opened, no listener, no meter, no broker).
    expect(second.stdout).toBe('');
    // The first one still runs and serves.
    expect(first.process.exitCode).toBeNull();
    expect(first.output()).not.toContain('EADDRINUSE');
  });

  it('a daemon killed with kill -9 leaves no lock behind: the next start (as systemd restarts it) runs', { timeout: 180_000 }, async () => {
    const first = running.pop()!;
    await first.kill9();
    // The killed daemon's holder file is still there, naming a pid that is gone.
    expect(JSON.parse(readFileSync(join(dir, 'data', 'metergate.lock.pid'), 'utf8'))).toMatchObject({ pid: first.process.pid });
    const next = await startDaemon(writeConfig('third.yaml', await freePort()));
    running.push(next);
    expect(JSON.parse(readFileSync(join(dir, 'data', 'metergate.lock.pid'), 'utf8'))).toMatchObject({ pid: next.process.pid });
    // Stopped cleanly, the lock goes with the process too.
    expect(await next.stop()).toBe(0);
    running.pop();
    const after = await startDaemon(writeConfig('fourth.yaml', await freePort()));
    running.push(after);
    expect(await after.stop()).toBe(0);
    running.pop();
  });

  it('a port in use is one human line on stderr (and the structured log), not a stack trace', { timeout: 120_000 }, async () => {
    const taken: Server = createServer();
    const port = await freePort();
    await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
    try {
      const r = await runToExit(writeConfig('busy.yaml', port));
      expect(r.code).toBe(1);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toBe(
        `metergate: cannot start: 127.0.0.1:${port} (http.port) is already in use by another program (\`sudo ss -ltnp 'sport = :${port}'\` names it); stop that program or set http.port to a free port`,
      );
      // The journal still gets the structured record with the error.
      const fatal = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: string; msg: string; err?: { code?: string } }).find((l) => l.level === 'fatal');
      expect(fatal).toMatchObject({ msg: 'start-up failed', err: { code: 'EADDRINUSE' } });
    } finally {
      taken.close();
    }
  });
});
