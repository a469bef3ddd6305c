// The amd64 package installed on this machine itself with apt, as an installer does (no
// terminal, stdin closed): apt resolves its Depends (the C and C++ libraries; Node is in
// the package) from what is installed, the maintainer scripts run without DPKG_ROOT
// (useradd, chown by name, the config from the example, the smoke check with the package's
// Node), then purge removes it all. Only with CI set (CI machines are
// disposable) or METERGATE_TEST_LIVE_INSTALL=1: it changes the machine. PID 1 is not
// systemd here, so the scripts skip starting the service (docs/install.md says so).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isRoot } from '../helpers/peers.js';
import { BUNDLED_NODE, debPath, hasDeb, VERSION } from './deb.js';

const wanted = Boolean(process.env.CI) || process.env.METERGATE_TEST_LIVE_INSTALL === '1';
if (!wanted) console.warn('dpkg-live: installs on this machine, so only with CI set or METERGATE_TEST_LIVE_INSTALL=1: skipped');
const ready = wanted && hasDeb('amd64') && isRoot;

const run = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 300_000, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return { status: r.status, stdout: r.stdout, output: `${r.stdout}${r.stderr}` };
};

describe.skipIf(!ready)('the amd64 package installed on this machine with apt', () => {
  it('installs with its dependencies resolved, runs as /usr/bin/metergate, and purges clean', () => {
    const hadUser = run('id', ['metergate']).status === 0;
    const installed = run('apt-get', ['install', '-y', '--no-install-recommends', debPath('amd64')]);
    try {
      expect(installed.status, installed.output).toBe(0);
      expect(run('dpkg-query', ['-W', '-f', '${Status} ${Version}', 'metergate']).stdout).toBe(`install ok installed ${VERSION}`);
      const version = run('/usr/bin/metergate', ['--version']);
      expect(version.status, version.output).toBe(0);
      expect(version.stdout.split('\n')[0]).toBe(`metergate ${VERSION}`);
      expect(version.stdout.split('\n')[1]).toMatch(new RegExp(`^node ${BUNDLED_NODE.replace(/\./g, '\\.')} `));
      expect(run('dpkg-query', ['-W', '-f', '${Conffiles}', 'metergate']).stdout.trim()).toBe('');
      expect(run('id', ['-nG', 'metergate']).stdout.trim().split(' ')).toContain('dialout');
      expect((statSync('/etc/metergate/config.yaml').mode & 0o777).toString(8)).toBe('640');
      expect(readFileSync('/etc/metergate/config.yaml', 'utf8')).toBe(readFileSync('config/example.yaml', 'utf8'));
      expect(existsSync('/var/lib/metergate')).toBe(true);
    } finally {
      const purged = run('apt-get', ['purge', '-y', 'metergate']);
      // Purge keeps the system user (Debian's practice); the machine gets back as it was.
      if (!hadUser) run('userdel', ['metergate']);
      expect(purged.status, purged.output).toBe(0);
    }
    expect(existsSync('/opt/metergate')).toBe(false);
    expect(existsSync('/etc/metergate')).toBe(false);
    expect(existsSync('/var/lib/metergate')).toBe(false);
    expect(existsSync('/usr/bin/metergate')).toBe(false);
  });
});
