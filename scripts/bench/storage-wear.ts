// Benchmark: storage wear of storing readings (SD cards) — bytes written to storage per
// reading (/proc/self/io write_bytes) and fsync/fdatasync calls per poll tick (strace -c),
// for 1, 10 and 50 meters: one durable transaction per reading (how the daemon stored
// readings before) next to one per tick (MeasurementRecorder.recordInTick + tickDone, as
// the daemon does now), both measured in the same run.
//   npx tsx scripts/bench/storage-wear.ts [ticks=120] [meters=1,10,50]
// Each case is its own node process (the compiled recorder from dist/, a real SQLite file
// on the disk of the temporary directory, mqtt configured so every reading also writes its
// outbox row), which warms up for 5 ticks (WAL and outbox exist) and then stores `ticks`
// ticks of SDM630 samples (11 values each) as fast as it can. fsyncs are counted by running
// each case twice under strace, with and without the measured ticks, and taking the
// difference (so the open, the migrations and the warm-up do not count). The temporary
// directory must be on a real disk: tmpfs sends nothing to storage.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDist, distGateway, fromDist, repoRoot as root } from './dist.js';

const self = fileURLToPath(import.meta.url);
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
type Mode = 'per-reading' | 'per-tick';

if (process.argv[2] === 'child') {
  const [mode, meters, ticks] = [process.argv[3] as Mode, Number(process.argv[4]), Number(process.argv[5])];
  const { validateConfig, createContext, createLogger, openDatabase, buildUplink } = await distGateway();
  const { resolveProfile } = await fromDist<typeof import('../../src/modbus/profiles/index.js')>('modbus/profiles/index.js');
  const dir = process.argv[6];
  const config = validateConfig({ organization_id: ORG, data_dir: dir, mqtt: { url: 'mqtts://broker.invalid:8883' } }, 'bench', {});
  const ctx = createContext(config, { db: openDatabase(join(dir, 'metergate.db')), logger: createLogger('warn') });
  const { recorder } = buildUplink(ctx);
  const profile = resolveProfile('sdm630', {})!;
  const units = new Map(profile.registers.map((r) => [r.metric, r.unit]));
  const resources = Array.from({ length: meters }, (_, i) => `0b7e3f4c-1d2a-4e5f-8a9b-${String(i).padStart(12, '0')}`);
  const t0 = Date.now() - (ticks + 10) * 10_000;
  let slot = 0;
  const tick = () => {
    const at = t0 + slot++ * 10_000;
    resources.forEach((resourceId, k) => {
      const metrics = [...units].map(([name, unit], j) => ({ name, value: Number((230 + slot * 0.37 + k + j * 11.3).toFixed(3)), unit }));
      const sample = { resourceId, sampledAtMs: at + k, metrics };
      if (mode === 'per-reading') recorder.record(sample);
      else recorder.recordInTick(sample);
    });
    if (mode === 'per-tick') recorder.tickDone();
  };
  const writeBytes = () => Number(/^write_bytes: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
  for (let i = 0; i < 5; i++) tick();
  const before = writeBytes();
  for (let i = 0; i < ticks; i++) tick();
  const after = writeBytes();
  await recorder.stop();
  ctx.db.close();
  console.log(JSON.stringify({ writeBytes: after - before }));
  process.exit(0);
}

buildDist();
const TICKS = Number(process.argv[2] ?? 120);
const METERS = (process.argv[3] ?? '1,10,50').split(',').map(Number);
const hasStrace = spawnSync('strace', ['-V']).status === 0;
if (!hasStrace) console.log('strace not found: fsyncs not counted (apt-get install strace)');

/** Runs one case in its own process (under strace -c when there); write bytes and fsync + fdatasync calls. */
function runCase(mode: Mode, meters: number, ticks: number): { writeBytes: number; fsyncs: number | null } {
  const dir = mkdtempSync(join(tmpdir(), 'mg-bench-wear-'));
  const straceOut = join(dir, 'strace.txt');
  const node = [process.execPath, '--import', 'tsx', self, 'child', mode, String(meters), String(ticks), dir];
  const cmd = hasStrace ? ['strace', '-f', '-c', '-e', 'trace=fsync,fdatasync', '-o', straceOut, ...node] : node;
  const r = spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8', cwd: root });
  if (r.status !== 0) throw new Error(`case ${mode} ${meters} failed: ${r.stderr}`);
  const { writeBytes } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { writeBytes: number };
  let fsyncs: number | null = null;
  if (hasStrace) {
    // strace -c table: "% time  seconds  usecs/call  calls  errors syscall"
    fsyncs = 0;
    for (const line of readFileSync(straceOut, 'utf8').split('\n')) {
      const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)$/.exec(line);
      if (m) fsyncs += Number(m[1]);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return { writeBytes, fsyncs };
}

console.log(`${TICKS} ticks per case, SDM630 samples (11 values), reading + outbox row per sample, SQLite WAL on ${tmpdir()}`);
console.log('meters | stored           | bytes written per reading | fsyncs per tick');
const rows: Array<{ meters: number; mode: Mode; perReading: number; perTick: number | null }> = [];
for (const meters of METERS) {
  for (const mode of ['per-reading', 'per-tick'] as const) {
    const measured = runCase(mode, meters, TICKS);
    const warmOnly = hasStrace ? runCase(mode, meters, 0) : null;
    const perReading = measured.writeBytes / (TICKS * meters);
    const perTick = measured.fsyncs !== null && warmOnly?.fsyncs != null ? (measured.fsyncs - warmOnly.fsyncs) / TICKS : null;
    rows.push({ meters, mode, perReading, perTick });
    console.log(`${String(meters).padStart(6)} | ${mode === 'per-reading' ? 'one commit per reading' : 'one commit per tick  '} | ${perReading.toFixed(0).padStart(25)} | ${perTick === null ? 'n/a' : perTick.toFixed(2)}`);
  }
}
console.log('\nratio per tick / per reading:');
for (const meters of METERS) {
  const [a, b] = [rows.find((r) => r.meters === meters && r.mode === 'per-reading')!, rows.find((r) => r.meters === meters && r.mode === 'per-tick')!];
  const fs = a.perTick && b.perTick !== null ? `, fsyncs ${(b.perTick / a.perTick).toFixed(3)}x` : '';
  console.log(`  ${meters} meter(s): bytes ${(b.perReading / a.perReading).toFixed(3)}x${fs}`);
}
