// Benchmark: the hourly readings retention purge — the longest event-loop block while it
// runs (perf_hooks.monitorEventLoopDelay), one statement (before migration 200 a scan of the
// whole readings table; on the time-ordered meter_readings a range with a session check per
// row) next to the purge in steps through the key, as shipped.
//   npx tsx scripts/bench/readings-purge.ts [meters=4] [days=400] [rounds=2]
// The database (a real file in the temporary directory, WAL as in the daemon) holds `meters`
// meters × (`days` + 1 hour) of readings at 10 s, so the purge at a retention of `days`
// (400 is the default) removes the oldest hour of every meter — what the hourly purge removes in the
// field — plus 3 local-meter sessions a day on the first meter (kept readings, and the
// session check the statement ran per row). Each round runs both on a fresh copy of that
// file, in alternating order. Readings carry 3 metrics (~150 bytes of JSON; the daemon's
// SDM630 rows are ~4x larger, which makes the scan longer, not the steps).
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildDist, distGateway, fromDist } from './dist.js';

buildDist();
const { validateConfig, createContext, createLogger, openDatabase, buildUplink } = await distGateway();

const METERS = Number(process.argv[2] ?? 4);
const DAYS = Number(process.argv[3] ?? 400);
const ROUNDS = Number(process.argv[4] ?? 2);
const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const DAY_MS = 86_400_000;
const STEP_MS = 10_000;
/** The sessions' edge gap of the default config (sessionMaxEdgeGapMs), as the recorder uses it. */
let MARGIN_MS = 0;
const NOW = Date.parse('2026-11-23T12:00:00Z');
const FIRST = NOW - DAYS * DAY_MS - 3_600_000; // one hour past the retention
const resources = Array.from({ length: METERS }, (_, i) => `0b7e3f4c-1d2a-4e5f-8a9b-${String(i).padStart(12, '0')}`);

const dir = mkdtempSync(join(tmpdir(), 'mg-bench-purge-'));
const basePath = join(dir, 'base.db');

function build(): { rows: number; sessions: number } {
  const db = openDatabase(basePath);
  db.pragma('journal_mode = DELETE');
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  // Straight into the time-ordered table (migration 200), key sampled_at_ms * 1024 + meter.
  resources.forEach((r, k) => db.prepare('INSERT INTO reading_meters (id, resource_id) VALUES (?, ?)').run(k, r));
  const into = db.prepare('INSERT INTO meter_readings (id, meter, energy_import_wh, power_w, metrics_json) VALUES (?, ?, ?, ?, ?)');
  const insert = { run: (r: string, at: number, energy: number, power: number, json: string) => into.run(at * 1024 + resources.indexOf(r), resources.indexOf(r), energy, power, json) };
  const session = db.prepare(
    `INSERT INTO sessions (cpo_transaction_id, cdr_id, market_area, status, start_ms, end_ms, resource_id, content_sha256, created_at_ms, updated_at_ms, last_updated_ms)
     VALUES (?, ?, 'NL', 'completed', ?, ?, ?, 'x', 0, 0, 0)`,
  );
  let rows = 0;
  for (const [k, r] of resources.entries()) {
    db.transaction(() => {
      for (let t = FIRST, i = 0; t < NOW; t += STEP_MS, i++) {
        const power = 1000 + ((i * 37) % 3000);
        const energy = 5_000_000 + i * 3;
        insert.run(r, t + k, energy, power, JSON.stringify([
          { name: 'total_active_power', value: power, unit: 'W' },
          { name: 'active_energy_import', value: energy, unit: 'Wh' },
          { name: 'voltage_l1', value: 230.1, unit: 'V' },
        ]));
        rows++;
      }
    })();
  }
  let sessions = 0;
  db.transaction(() => {
    for (let d = 0; d <= DAYS; d++) {
      for (const h of [7, 13, 19]) {
        const start = FIRST + d * DAY_MS + h * 3_600_000;
        session.run(`TX-${d}-${h}`, `CDR-${d}-${h}`, start, start + 2 * 3_600_000, resources[0]);
        sessions++;
      }
    }
  })();
  db.pragma('journal_mode = WAL');
  db.close();
  return { rows, sessions };
}

interface Result {
  readonly blockMs: number;
  readonly totalMs: number;
  readonly deleted: number;
}

/** Runs `purge` on a fresh copy of the base file with the event-loop delay monitor on. */
async function measure(purge: (db: ReturnType<typeof openDatabase>, ctxPath: string) => Promise<number>): Promise<Result> {
  const path = join(dir, 'work.db');
  for (const suffix of ['', '-wal', '-shm', '-reserve']) rmSync(path + suffix, { force: true });
  copyFileSync(basePath, path);
  const db = openDatabase(path);
  db.prepare('SELECT COUNT(*) FROM sessions').get(); // schema read, not measured
  const h = monitorEventLoopDelay({ resolution: 1 });
  await new Promise((r) => setTimeout(r, 50));
  h.enable();
  const t0 = performance.now();
  const deleted = await purge(db, path);
  const totalMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 20)); // the monitor samples the last block too
  h.disable();
  db.close();
  return { blockMs: h.max / 1e6, totalMs, deleted };
}

/** What ran before: one statement on the event loop. */
const statement = (db: ReturnType<typeof openDatabase>) =>
  new Promise<number>((resolve) =>
    setTimeout(() => {
      const cutoff = NOW - DAYS * DAY_MS;
      const n = db
        .prepare(
          `DELETE FROM meter_readings WHERE id < @cutoff * 1024 AND NOT EXISTS (
             SELECT 1 FROM sessions s JOIN reading_meters m ON m.resource_id = s.resource_id WHERE m.id = meter_readings.meter
               AND (meter_readings.id >> 10) >= s.start_ms - @margin AND (s.end_ms IS NULL OR (meter_readings.id >> 10) <= s.end_ms + @margin))`,
        )
        .run({ cutoff, margin: MARGIN_MS }).changes;
      resolve(n);
    }, 5),
  );

/** As shipped: MeasurementRecorder.purge() with a retention of `days` (400 is the default), in steps. */
const steps = async (db: ReturnType<typeof openDatabase>) => {
  const config = validateConfig({ organization_id: ORG, data_dir: dir, store: { readings_retention_days: DAYS } }, 'bench', {});
  const ctx = createContext(config, { db, logger: createLogger('warn'), clock: { now: () => NOW } });
  return buildUplink(ctx).recorder.purge();
};

{
  const { sessionMaxEdgeGapMs } = await fromDist<typeof import('../../src/config/derived.js')>('config/derived.js');
  MARGIN_MS = sessionMaxEdgeGapMs(validateConfig({ organization_id: ORG, data_dir: dir }, 'bench', {}));
}
const t0 = performance.now();
const built = build();
console.log(
  `${METERS} meters x ${DAYS} days + 1 h at 10 s: ${built.rows.toLocaleString('en')} readings, ${built.sessions} sessions, ` +
    `${(statSync(basePath).size / 2 ** 30).toFixed(2)} GiB, built in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
const results: Record<'statement' | 'steps', Result[]> = { statement: [], steps: [] };
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? (['statement', 'steps'] as const) : (['steps', 'statement'] as const);
  for (const name of order) {
    const r = await measure(name === 'statement' ? statement : steps);
    results[name].push(r);
    console.log(`round ${round + 1} ${name.padEnd(9)} longest event-loop block ${r.blockMs.toFixed(1).padStart(7)} ms, purge ${r.totalMs.toFixed(0).padStart(6)} ms, ${r.deleted} readings deleted`);
  }
}
const range = (xs: number[]) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)} ms`;
const worst = { statement: Math.max(...results.statement.map((r) => r.blockMs)), steps: Math.max(...results.steps.map((r) => r.blockMs)) };
console.log(
  `\nlongest event-loop block over ${ROUNDS} round(s): statement ${range(results.statement.map((r) => r.blockMs))}, steps ${range(results.steps.map((r) => r.blockMs))}; ` +
    `worst steps / worst statement ${(worst.steps / worst.statement).toFixed(4)}x (target: steps <= 50 ms)`,
);
if (results.statement.some((r) => r.deleted !== results.steps[0].deleted) || results.steps.some((r) => r.deleted !== results.steps[0].deleted)) {
  console.log('WARNING: the two purges deleted different counts');
}
rmSync(dir, { recursive: true, force: true });
