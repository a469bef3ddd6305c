// Package benchmark (issue 12): the size of each .deb and of what it installs, against the
// source install's runtime tree measured in the same run (`npm ci --omit=dev` as
// scripts/install.sh did before the package: demo packages, every platform's serialport
// prebuilds, better-sqlite3's sources); and the daemon's start to first stored poll with
// the shipped node flags, arm64 and armhf under qemu-user-static against amd64 natively
// (context only: qemu emulates the instructions on a loaded x86 machine, not a Pi's speed).
//
//   bash scripts/package --all && npx tsx scripts/bench/package.ts [--runs N]
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { startSim } from '../../test/helpers/sim-process.js';
import { removeDir, startPtyPair } from '../../test/helpers/socat.js';
import { ARCHES, debPath, packageNode, unpack, type DebArch } from '../../test/package/deb.js';
import { shippedNodeFlags } from './shipped-node.js';

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 3;
const kb = (bytes: number) => Math.round(bytes / 1024);
const duKb = (dir: string) => Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]);

for (const arch of ARCHES) {
  if (!existsSync(debPath(arch))) throw new Error(`${debPath(arch)} missing: bash scripts/package --all`);
}

// --- Sizes -------------------------------------------------------------------------
const baselineDir = mkdtempSync(join(tmpdir(), 'mg-bench-src-install-'));
execFileSync('cp', ['package.json', 'package-lock.json', baselineDir]);
// The pre-package runtime install, with the lockfile of today: optional (demo) packages included.
execFileSync('npm', ['ci', '--omit=dev', '--include=optional', '--ignore-scripts', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: baselineDir, stdio: 'ignore' });
execFileSync('cp', ['-R', resolve('dist'), join(baselineDir, 'dist')]);
const baselineKb = duKb(baselineDir);
rmSync(baselineDir, { recursive: true, force: true });

console.log(`source install runtime tree (npm ci --omit=dev, dist/, no native build): ${baselineKb} KB (baseline)`);
console.log('arch    .deb KB   installed KB   installed / baseline');
for (const arch of ARCHES) {
  const root = unpack(arch);
  const installed = duKb(root);
  rmSync(root, { recursive: true, force: true });
  console.log(`${arch.padEnd(7)} ${String(kb(statSync(debPath(arch)).size)).padStart(7)}   ${String(installed).padStart(12)}   ${(installed / baselineKb).toFixed(2)}`);
}

// --- Start to first poll -------------------------------------------------------------
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const METER = '4a6c8e0a-2b3c-4d5e-8f6a-7b8c9d0e1f2a';

async function startToFirstPollMs(arch: DebArch, app: string, node: string[]): Promise<number> {
  const pty = await startPtyPair();
  const sim = await startSim(['--serial', pty.b, '--unit', '1']);
  const dir = mkdtempSync(join(tmpdir(), `mg-bench-start-${arch}-`));
  const config = join(dir, 'config.yaml');
  // No broker: the first poll is the first reading committed to the database.
  writeFileSync(
    config,
    `organization_id: ${ORG}\ndata_dir: ${dir}/data\nlog_level: warn\npoll: { interval_ms: 1000 }\nbuses:\n  - { name: a, type: rtu, port: ${pty.a}, baud_rate: 9600, parity: even, timeout_ms: 1000 }\nmeters:\n  - { resource_id: ${METER}, bus: a, unit_id: 1, profile: sdm630 }\nmqtt: { url: 'mqtts://127.0.0.1:9' }\nclock: { trust: system }\nhttp: { enabled: false }\nprices: { source: none }\nforecast: { enabled: false }\n`,
  );
  const db = join(dir, 'data/metergate.db');
  const t0 = performance.now();
  const daemon = spawn(node[0], [...node.slice(1), ...shippedNodeFlags(), join(app, 'dist/cli.js'), 'run', '--config', config], { stdio: 'ignore' });
  try {
    for (;;) {
      if (daemon.exitCode !== null) throw new Error(`${arch} daemon exited ${daemon.exitCode}`);
      if (existsSync(db)) {
        const conn = new Database(db, { readonly: true, fileMustExist: true });
        try {
          const tables = conn.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'readings'").pluck().get() as number;
          if (tables > 0 && (conn.prepare('SELECT count(*) FROM readings').pluck().get() as number) > 0) return performance.now() - t0;
        } catch {
          /* mid-migration: look again */
        } finally {
          conn.close();
        }
      }
      if (performance.now() - t0 > 600_000) throw new Error(`${arch}: no reading within 600 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    daemon.kill('SIGKILL');
    await sim.stop();
    await pty.stop();
    removeDir(pty.dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results: Partial<Record<DebArch, number>> = {};
for (const arch of ARCHES) {
  const root = unpack(arch);
  const node = packageNode(arch, root);
  const times: number[] = [];
  try {
    for (let i = 0; i < runs; i++) times.push(await startToFirstPollMs(arch, join(root, 'opt/metergate'), node));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  results[arch] = median(times);
  console.log(`start to first stored poll, ${arch}${arch === 'amd64' ? ' (native, baseline)' : ' (qemu-user-static)'}: median ${(results[arch]! / 1000).toFixed(1)} s of ${runs} (${times.map((t) => (t / 1000).toFixed(1)).join(', ')})`);
}
for (const arch of ['arm64', 'armhf'] as const) {
  console.log(`  ${arch} / amd64: ${(results[arch]! / results.amd64!).toFixed(1)}x`);
}
console.log(`load average at the end: ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}`);
