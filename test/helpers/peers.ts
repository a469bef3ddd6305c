// The real peers and conditions tests depend on (brokers, ptys, a browser, libfaketime,
// root, recorded data). Locally a missing one skips the tests that need it with a warning.
// With CI set a skip would hide exactly what we promise, so the test file fails at load,
// naming what is missing and how to get it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const INSTALL = 'bash scripts/install-test-deps';

/** `present` as given; throws when it is false and CI is set. */
export function peer(name: string, present: boolean, howToGet = INSTALL): boolean {
  if (present) return true;
  const what = `${name} is missing (${howToGet})`;
  if (process.env.CI) throw new Error(`${what}: with CI set, tests that need it fail instead of skipping`);
  console.warn(`${what}: skipping the tests that need it`);
  return false;
}

/** The first existing path, or undefined (after the same CI check as peer()). */
export function peerPath(name: string, candidates: readonly string[], howToGet = INSTALL): string | undefined {
  const found = candidates.find((p) => existsSync(p));
  peer(name, found !== undefined, howToGet);
  return found;
}

const runs = (command: string, args: string[]) => spawnSync(command, args).status === 0;

export const hasSocat = peer('socat', runs('socat', ['-V']));
export const isRoot = peer('root', process.getuid?.() === 0, 'run the tests as root, as CI does');

// Looked up when a test file asks (not when peers.ts loads), so a file that needs socat
// does not warn about a missing browser.
/** libfaketime's preload library, or undefined. */
export const libfaketimePath = (): string | undefined =>
  peerPath('libfaketime', ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1']);
/** Debian's Chromium, or undefined. */
export const chromiumPath = (): string | undefined => peerPath('chromium', ['/usr/bin/chromium', '/usr/bin/chromium-browser']);
export const systemdAnalyzeFound = (): boolean => peer('systemd-analyze', runs('systemd-analyze', ['--version']));

/** Why this process cannot mount a tmpfs (not root, a kernel or container that refuses), or null. */
function tmpfsMountProblem(): string | null {
  if (process.getuid?.() !== 0) return 'not root';
  const probe = mkdtempSync(join(tmpdir(), 'mg-mount-probe-'));
  try {
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { encoding: 'utf8' });
    if (r.status !== 0) return `mount -t tmpfs failed: ${r.error?.message ?? r.stderr.trim()}`;
    spawnSync('umount', [probe]);
    return null;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
/** Whether a small disk can be made (a tmpfs mount, to fill it), or false (after the CI check). */
export const canMountTmpfs = (): boolean => {
  const problem = tmpfsMountProblem();
  return peer(`a tmpfs mount (${problem})`, problem === null, 'run the tests as root, as CI does');
};
/** Debian's python3-pymodbus for the system python (the simulated §14a control box, test/helpers/control-box.py). */
export const hasPymodbus = (): boolean => peer('python3-pymodbus', runs('/usr/bin/python3', ['-c', 'import pymodbus.server']));
/** The gpiod tools (Debian package gpiod): the GPIO control signal reads the character device through them. */
export const hasGpiod = (): boolean => peer('gpiod', runs('gpioget', ['--version']));
