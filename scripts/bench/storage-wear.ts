// Benchmark: storage wear of storing and delivering readings (SD cards) — bytes written to
// storage per reading (/proc/self/io write_bytes) and fsync/fdatasync calls per poll tick
// (strace -c), for 1 and 10 meters (default), the baseline's code and this checkout's in the
// same run.
//   npx tsx scripts/bench/storage-wear.ts [ticks=120] [meters=1,10]   (BASELINE=<git ref>)
// The baseline is BASELINE (default 4ca041a, main before the storage-wear changes: 4 KiB
// pages, whole measurements repeated in the outbox, AUTOINCREMENT), taken with `git archive`
// into a temporary directory and compiled there against this checkout's node_modules.
// Each case is its own node process (the compiled recorder, a real SQLite file on the disk
// of the temporary directory, mqtt configured so every reading also writes its outbox row),
// which warms up for 5 ticks and then stores `ticks` ticks of SDM630 samples (11 values each)
// as fast as it can, one durable commit per tick (MeasurementRecorder.recordInTick +
// tickDone, as the daemon does). "stored" leaves the outbox rows in place (a broker outage);
// "delivered" acknowledges each tick's rows after its commit the way the publisher does
// (Outbox.page, then Outbox.deferAcked, whose deletes go with the next tick's commit; the
// baseline's Outbox.deleteAcked committed them on their own: its 50 ms batch holds one
// tick's rows at 10 s polls) — the steady state of a connected gateway. The database is
// opened as the daemon opens it (openDaemonDatabase, where the variant has it), with the page
// size the daemon picks for the number of meters (pageSizeForMeters).
// fsyncs are counted by running each case twice under strace, with and without the measured
// ticks, and taking the difference (so the open, the migrations and the warm-up do not
// count). The temporary directory must be on a real disk: tmpfs sends nothing to storage.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildBaselineDist, buildDist, repoRoot as root } from './dist.js';

const self = fileURLToPath(import.meta.url);
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
type Mode = 'stored' | 'delivered';

if (process.argv[2] === 'child') {
  const [mode, meters, ticks, dir, dist] = [process.argv[3] as Mode, Number(process.argv[4]), Number(process.argv[5]), process.argv[6], process.argv[7]];
  const from = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(dist, path)).href)) as T;
  const { validateConfig } = await from<typeof import('../../src/config/load.js')>('config/load.js');
  const { createContext, buildUplink } = await from<typeof import('../../src/daemon.js')>('daemon.js');
  const { createLogger } = await from<typeof import('../../src/log.js')>('log.js');
  const store = await from<Partial<typeof import('../../src/store/db.js')> & Pick<typeof import('../../src/store/db.js'), 'openDatabase'>>('store/db.js');
  // As the daemon opens it (its page cache), where the variant has that.
  const openDatabase = store.openDaemonDatabase ?? store.openDatabase;
  const { resolveProfile } = await from<typeof import('../../src/modbus/profiles/index.js')>('modbus/profiles/index.js');
  const config = validateConfig({ organization_id: ORG, data_dir: dir, mqtt: { url: 'mqtts://broker.invalid:8883' } }, 'bench', {});
  // As the daemon opens it: the page size it picks for this many meters, where the version has that choice.
  const db = await from<typeof import('../../src/store/db.js')>('store/db.js');
  const pageSize = 'pageSizeForMeters' in db ? db.pageSizeForMeters(meters) : undefined;
  const ctx = createContext(config, { db: openDatabase(join(dir, 'metergate.db'), undefined, pageSize), logger: createLogger('warn') });
  const { recorder, outbox } = buildUplink(ctx);
  const profile = resolveProfile('sdm630', {})!;
  const units = new Map(profile.registers.map((r) => [r.metric, r.unit]));
  const resources = Array.from({ length: meters }, (_, i) => `0b7e3f4c-1d2a-4e5f-8a9b-${String(i).padStart(12, '0')}`);
  const t0 = Date.now() - (ticks + 10) * 10_000;
  let slot = 0;
  const tick = () => {
    const at = t0 + slot++ * 10_000;
    resources.forEach((resourceId, k) => {
      const metrics = [...units].map(([name, unit], j) => ({ name, value: Number((230 + slot * 0.37 + k + j * 11.3).toFixed(3)), unit }));
      recorder.recordInTick({ resourceId, sampledAtMs: at + k, metrics });
    });
    recorder.tickDone();
    if (mode === 'delivered') {
      // As the publisher hands over a tick's PUBACKs: deferred to the next tick's commit where the version does that.
      const acked = outbox.page(0, 1000).map((r) => ({ id: r.id, bytes: r.bytes }));
      if ('deferAcked' in outbox) outbox.deferAcked(acked);
      else (outbox as { deleteAcked(a: typeof acked): number }).deleteAcked(acked);
    }
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

const TICKS = Number(process.argv[2] ?? 120);
const METERS = (process.argv[3] ?? '1,10').split(',').map(Number);
const BASELINE = process.env.BASELINE ?? '4ca041a';
buildDist();
const baselineDist = buildBaselineDist(BASELINE);
const hasStrace = spawnSync('strace', ['-V']).status === 0;
if (!hasStrace) console.log('strace not found: fsyncs not counted (apt-get install strace)');

/** Runs one case in its own process (under strace -c when there); write bytes and fsync + fdatasync calls. */
function runCase(dist: string, mode: Mode, meters: number, ticks: number): { writeBytes: number; fsyncs: number | null } {
  const dir = mkdtempSync(join(tmpdir(), 'mg-bench-wear-'));
  const straceOut = join(dir, 'strace.txt');
  const node = [process.execPath, '--import', 'tsx', self, 'child', mode, String(meters), String(ticks), dir, dist];
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

function measure(dist: string, mode: Mode, meters: number): { perReading: number; perTick: number | null } {
  const measured = runCase(dist, mode, meters, TICKS);
  const warmOnly = hasStrace ? runCase(dist, mode, meters, 0) : null;
  const perTick = measured.fsyncs !== null && warmOnly?.fsyncs != null ? (measured.fsyncs - warmOnly.fsyncs) / TICKS : null;
  return { perReading: measured.writeBytes / (TICKS * meters), perTick };
}

console.log(`${TICKS} ticks per case, SDM630 samples (11 values), one durable commit per tick, SQLite WAL on ${tmpdir()}; baseline ${BASELINE}`);
console.log('meters | outbox    | bytes per reading: baseline -> now (ratio) | fsyncs per tick: baseline -> now');
for (const meters of METERS) {
  for (const mode of ['stored', 'delivered'] as const) {
    const [a, b] = [measure(baselineDist, mode, meters), measure(join(root, 'dist'), mode, meters)];
    const fs = a.perTick !== null && b.perTick !== null ? `${a.perTick.toFixed(2)} -> ${b.perTick.toFixed(2)}` : 'n/a';
    console.log(`${String(meters).padStart(6)} | ${mode.padEnd(9)} | ${a.perReading.toFixed(0).padStart(8)} -> ${b.perReading.toFixed(0).padStart(6)} (${(b.perReading / a.perReading).toFixed(3)}x) | ${fs}`);
  }
}
