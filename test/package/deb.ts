// The .deb packages under test (built by `bash scripts/package --all`) and how to run what
// is inside one on this machine: amd64 and arm64 with the Node they bundle
// (/opt/metergate/node/bin/node; arm64 under qemu-user-static), armhf, which runs on the
// distribution's nodejs 20, with npm's last armv7l Node 20 under qemu (scripts/target-node).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { peer } from '../helpers/peers.js';

export const ARCHES = ['amd64', 'arm64', 'armhf'] as const;
export type DebArch = (typeof ARCHES)[number];

export const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
/** The Node release the amd64 and arm64 packages bundle. */
export const BUNDLED_NODE = readFileSync('packaging/node-version', 'utf8').trim();
/** Where the units and /usr/bin/metergate find the package's Node. */
export const PACKAGE_NODE = 'opt/metergate/node/bin/node';
export const bundlesNode = (arch: DebArch) => arch !== 'armhf';
export const DEB_DIR = process.env.METERGATE_DEB_DIR ?? resolve('.tmp/deb');
const BUILD = 'bash scripts/package --all';

export function debPath(arch: DebArch, version = VERSION): string {
  return join(DEB_DIR, `metergate_${version}_${arch}.deb`);
}

/** Whether the package for `arch` is there (with CI set: the test file fails if not). */
export function hasDeb(arch: DebArch): boolean {
  return peer(`metergate_${VERSION}_${arch}.deb in ${DEB_DIR}`, existsSync(debPath(arch)), BUILD);
}

const QEMU: Record<DebArch, { qemu?: string; libRoot?: string; nodeArch: string }> = {
  amd64: { nodeArch: 'x64' },
  arm64: { qemu: 'qemu-aarch64-static', libRoot: '/usr/aarch64-linux-gnu', nodeArch: 'arm64' },
  armhf: { qemu: 'qemu-arm-static', libRoot: '/usr/arm-linux-gnueabihf', nodeArch: 'arm' },
};
export const nodeArchOf = (arch: DebArch) => QEMU[arch].nodeArch;

/** Whether this machine can run `arch` (qemu-user-static and the cross C library; CI: fails if not). */
export function canRun(arch: DebArch): boolean {
  const q = QEMU[arch];
  if (!q.qemu) return true;
  const ok = spawnSync(q.qemu, ['--version']).status === 0 && existsSync(join(q.libRoot!, 'lib'));
  return peer(`${q.qemu} and ${q.libRoot} (qemu-user-static, libc6-${arch}-cross)`, ok, 'bash scripts/install-package-deps');
}

/** The command prefix that runs `node` (a binary of `arch`): [program, ...args]. */
export function onArch(arch: DebArch, node: string): string[] {
  const q = QEMU[arch];
  return q.qemu ? [q.qemu, '-L', q.libRoot!, node] : [node];
}

/**
 * The command prefix that runs the Node of an unpacked package in `root`: its own
 * (amd64, arm64), or for armhf the stand-in for Debian's nodejs 20 (fetched once).
 */
export function packageNode(arch: DebArch, root: string): string[] {
  if (bundlesNode(arch)) return onArch(arch, join(root, PACKAGE_NODE));
  return onArch(arch, execFileSync('bash', ['scripts/target-node', arch], { encoding: 'utf8' }).trim());
}

/** Unpacks the package's files (no maintainer scripts) into a new directory. */
export function unpack(arch: DebArch, version = VERSION): string {
  const dir = mkdtempSync(join(tmpdir(), `mg-deb-${arch}-`));
  execFileSync('dpkg-deb', ['-x', debPath(arch, version), dir]);
  return dir;
}

/** A control field of the package (dpkg-deb -f). */
export function controlField(arch: DebArch, field: string): string {
  return execFileSync('dpkg-deb', ['-f', debPath(arch), field], { encoding: 'utf8' }).trim();
}
