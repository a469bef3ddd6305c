// First boot of a flashed card, the I/O: an installer drops metergate.yaml (and the
// files it names: broker password, CA certificate) on the boot partition; at the next boot
// the metergate-firstboot unit runs `metergate firstboot`, which validates it as
// `config check` would, moves it and those files to /etc/metergate (root:metergate 0640),
// removes them from the FAT partition; the command then starts the service. A bad file stays where it
// is, next to metergate-error.txt saying what to fix; the gateway keeps its old config.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, chownSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, validateConfigWithSources } from '../config/load.js';
import { APPLIED_FILE, appliedReport, BOOT_CONFIG, CONFIG_DIR, ERROR_FILE, errorReport, planFirstBoot, type FileMove } from './plan.js';

/** Boot partitions, newest Raspberry Pi OS layout first (bookworm mounts it at /boot/firmware). */
export const BOOT_DIRS = ['/boot/firmware', '/boot'] as const;

export interface FirstBootOptions {
  /** The gateway's root file system: '/' on the gateway, a directory in tests. */
  readonly root: string;
  readonly now?: () => Date;
}

export type FirstBootResult =
  | { readonly outcome: 'nothing'; readonly message: string }
  | { readonly outcome: 'refused'; readonly bootDir: string; readonly problems: readonly string[] }
  | { readonly outcome: 'applied'; readonly bootDir: string; readonly moves: readonly FileMove[] };

/** Writes a file so that a power cut leaves the old or the new one, never half of it. */
function writeDurably(path: string, data: string | Buffer, mode: number, gid?: number): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode);
  if (gid !== undefined) chownSync(tmp, 0, gid);
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The metergate group's id in the target root (the package's postinst created it). */
function metergateGid(root: string): number | undefined {
  const line = readFileSync(join(root, 'etc/group'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('metergate:'));
  return line === undefined ? undefined : Number(line.split(':')[2]);
}

export function runFirstBoot(opts: FirstBootOptions): FirstBootResult {
  const now = opts.now ?? (() => new Date());
  const at = (p: string) => join(opts.root, p);
  const bootDir = BOOT_DIRS.map(at).find((d) => existsSync(join(d, BOOT_CONFIG)));
  if (bootDir === undefined) return { outcome: 'nothing', message: `no ${BOOT_CONFIG} in ${BOOT_DIRS.join(' or ')}` };

  const refuse = (problems: readonly string[]): FirstBootResult => {
    writeDurably(join(bootDir, ERROR_FILE), errorReport(problems, now()), 0o644);
    return { outcome: 'refused', bootDir, problems };
  };

  const text = readFileSync(join(bootDir, BOOT_CONFIG), 'utf8');
  const plan = planFirstBoot(text, new Set(readdirSync(bootDir)), (p) => (existsSync(at(p)) ? at(p) : undefined), bootDir);
  if (plan.syntaxProblems.length > 0) return refuse(plan.syntaxProblems);
  const problems = plan.missingFiles.map((m) => m.problem);
  try {
    // The environment of a boot-time unit is not the installer's: validate the file alone.
    validateConfigWithSources(plan.forValidation, BOOT_CONFIG, {});
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // A missing file is already said above, with where to put it.
    const said = plan.missingFiles.map((m) => `${m.setting}:`);
    problems.push(...err.problems.filter((p) => !said.some((s) => p.startsWith(s))));
  }
  const gid = metergateGid(opts.root);
  if (gid === undefined) problems.push(`(gateway): no metergate group in ${at('etc/group')}: install the metergate package first`);
  if (problems.length > 0) return refuse([...new Set(problems)]);

  const etc = at(CONFIG_DIR);
  mkdirSync(etc, { recursive: true, mode: 0o750 });
  chownSync(etc, 0, gid!);
  chmodSync(etc, 0o750);
  // The files the config names first, the config last: a cut in between leaves the old
  // config, which names files that still exist.
  for (const m of plan.moves) writeDurably(at(m.target), readFileSync(join(bootDir, m.name)), 0o640, gid);
  writeDurably(join(etc, 'config.yaml'), plan.configText, 0o640, gid);
  syncDir(etc);
  for (const name of [...plan.moves.map((m) => m.name), BOOT_CONFIG, ERROR_FILE]) rmSync(join(bootDir, name), { force: true });
  writeDurably(join(bootDir, APPLIED_FILE), appliedReport(plan.moves, now()), 0o644);
  syncDir(bootDir);
  return { outcome: 'applied', bootDir, moves: plan.moves };
}

/**
 * On the live system: restart the service if it runs (new config), start it otherwise.
 * Returns why that failed (systemctl's own words), or undefined when the job was queued.
 */
export function startMetergateService(): string | undefined {
  const active = spawnSync('systemctl', ['is-active', '--quiet', 'metergate.service']).status === 0;
  const verb = active ? 'restart' : 'start';
  // --no-block: this runs from a unit ordered before metergate.service; waiting would
  // deadlock. So this sees what systemctl refuses (no such unit, masked, no systemd), and
  // a daemon that then fails is metergate.service's own failure, in its journal.
  const r = spawnSync('systemctl', ['--no-block', verb, 'metergate.service'], { encoding: 'utf8', timeout: 60_000 });
  if (r.error) return `systemctl ${verb} metergate.service: ${r.error.message}`;
  if (r.status !== 0) return `systemctl ${verb} metergate.service exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().split('\n').join(' ') || 'no message'}`;
  return undefined;
}
