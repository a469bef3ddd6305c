// The systemd units as files: their settings, and systemd-analyze verify of a unit whose
// ExecStart runs the package's own Node (/opt/metergate/node/bin/node), which a machine
// without the package does not have: systemd checks that the program exists, so the copy
// verified names `node` instead. Everything else is verified as shipped.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

export const PACKAGE_NODE = '/opt/metergate/node/bin/node';

/** Every value of `key` in the unit's active (uncommented) lines, in order. */
export function unitSettings(unitText: string, key: string): string[] {
  return unitText
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1).trim());
}

/** systemd-analyze verify of `unitPath`, its package Node replaced by `node`; the lines naming the unit and the exit status. */
export function verifyUnit(unitPath: string, node = process.execPath): { status: number | null; complaints: string[]; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'mg-unit-'));
  try {
    const name = basename(unitPath);
    const copy = join(dir, name);
    writeFileSync(copy, readFileSync(unitPath, 'utf8').split(`=${PACKAGE_NODE} `).join(`=${node} `));
    const r = spawnSync('systemd-analyze', ['verify', '--man=no', copy], { encoding: 'utf8' });
    const unitName = name.replace(/\.service$/, '');
    return { status: r.status, complaints: r.stderr.split('\n').filter((l) => l.includes(unitName)), stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
