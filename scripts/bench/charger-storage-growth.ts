// Benchmark: how fast charger data grows the database, per connector-year, before and
// after retention (issue 20 point 9: "about 770 MB a year per continuously sampling
// connector"). One connector samples every 10 s around the clock, in back-to-back 4-hour
// transactions, each MeterValues with 8 values (the energy register, power, and current and
// voltage on three phases), through the central system's own code (ocpp/charger-sessions.ts)
// into a database made by the daemon's migrations. Two runs of the same messages:
//   before  no purge (what the gateway did before store.sessions_retention_days)
//   after   the retention purge (ops/retention/session-retention.ts) every simulated hour,
//           as the daemon runs it, with the default settings
// Growth is the database's live bytes ((page_count - freelist_count) x page_size) after the
// run less an empty database's, scaled from `days` to 365. With the default 400-day
// retention, the 'after' database grows at that rate for 400 days and then stays flat.
//   npx tsx scripts/bench/charger-storage-growth.ts [days=7]
import { buildDist, fromDist } from './dist.js';

buildDist();
const { validateConfig } = await fromDist<typeof import('../../src/config/load.js')>('config/load.js');
const { openDatabase } = await fromDist<typeof import('../../src/store/db.js')>('store/db.js');
const { ChargerSessions } = await fromDist<typeof import('../../src/ocpp/charger-sessions.js')>('ocpp/charger-sessions.js');
const { SessionRetention } = await fromDist<typeof import('../../src/ops/retention/session-retention.js')>('ops/retention/session-retention.js');
const { createLogger } = await fromDist<typeof import('../../src/log.js')>('log.js');
type Db = import('../../src/store/db.js').Db;
type AppContext = import('../../src/context.js').AppContext;

const DAYS = Number(process.argv[2] ?? 7);
const SAMPLE_MS = 10_000;
const SESSION_MS = 4 * 3_600_000;
const HOUR_MS = 3_600_000;
const START = Date.parse('2026-01-05T00:00:00Z');
const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/nonexistent' }, 'bench', {});

const liveBytes = (db: Db) => {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  return (pages - free) * pageSize;
};

const phases = ['L1', 'L2', 'L3'];
function values(atMs: number, wh: number) {
  const v = (measurand: string, value: number, unit: string, phase = '') => ({ sampledAtMs: atMs, measurand, phase, location: 'Outlet', context: 'Sample.Periodic', value, unit });
  return [
    v('Energy.Active.Import.Register', wh, 'Wh'),
    v('Power.Active.Import', 11_040, 'W'),
    ...phases.map((p) => v('Current.Import', 16, 'A', p)),
    ...phases.map((p) => v('Voltage', 230, 'V', p)),
  ];
}

async function run(purge: boolean): Promise<{ bytes: number; rows: Record<string, number>; seconds: number }> {
  const db = openDatabase(':memory:');
  const empty = liveBytes(db);
  const charger = new ChargerSessions(db, { marketArea: 'NL' });
  let nowMs = START;
  const ctx = { config, db, logger: createLogger('fatal') } as unknown as AppContext;
  const retention = new SessionRetention(ctx, { trustedNow: () => nowMs });
  const t0 = performance.now();
  let wh = 0;
  for (let sessionStart = START; sessionStart < START + DAYS * 86_400_000; sessionStart += SESSION_MS) {
    const { transaction } = charger.startTransaction({ chargePointId: 'CP-BENCH', connectorId: 1, idTag: 'T', meterStartWh: wh, startedAtMs: sessionStart, reservationId: null, idTagStatus: 'Accepted' }, sessionStart);
    for (let at = sessionStart + SAMPLE_MS; at < sessionStart + SESSION_MS; at += SAMPLE_MS) {
      wh += 30.67; // 11.04 kW for 10 s
      nowMs = at;
      charger.addMeterValues('CP-BENCH', 1, transaction.transactionId, values(at, Math.round(wh)), at);
      if (purge && (at - START) % HOUR_MS === 0) await retention.purge();
    }
    const stopMs = sessionStart + SESSION_MS;
    nowMs = stopMs;
    charger.stopTransaction({ chargePointId: 'CP-BENCH', transactionId: transaction.transactionId, meterStopWh: Math.round(wh), stoppedAtMs: stopMs, reason: 'EVDisconnected', idTag: null }, [], stopMs);
  }
  if (purge) {
    nowMs += HOUR_MS;
    await retention.purge();
  }
  const seconds = (performance.now() - t0) / 1000;
  const rows = Object.fromEntries(
    ['ocpp_meter_values', 'session_readings', 'sessions', 'ocpp_transactions', 'ocpp_session_outcomes'].map((t) => [t, db.prepare(`SELECT count(*) FROM ${t}`).pluck().get() as number]),
  );
  const bytes = liveBytes(db) - empty;
  db.close();
  return { bytes, rows, seconds };
}

const MB = 1_000_000;
const before = await run(false);
const after = await run(true);
const perYear = (bytes: number) => (bytes / DAYS) * 365;
console.log(`one connector sampling every 10 s (8 values), ${DAYS} days of back-to-back 4 h sessions`);
for (const [name, r] of [['before (no purge)', before], ['after (retention)', after]] as const) {
  console.log(`  ${name.padEnd(18)} ${(r.bytes / MB).toFixed(2).padStart(7)} MB in ${DAYS} d -> ${(perYear(r.bytes) / MB).toFixed(1).padStart(7)} MB per connector-year   rows ${JSON.stringify(r.rows)}   (${r.seconds.toFixed(1)} s)`);
}
console.log(`  after / before: ${(after.bytes / before.bytes).toPrecision(3)} (1 : ${Math.round(before.bytes / after.bytes)}); the 'after' database stops growing at store.sessions_retention_days = ${config.store.sessions_retention_days} d: ${((perYear(after.bytes) * config.store.sessions_retention_days) / 365 / MB).toFixed(1)} MB per connector`);
