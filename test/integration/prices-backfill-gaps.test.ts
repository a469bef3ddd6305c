// Incomplete months against the local HTTP stand-in for the ENTSO-E platform: a month is
// recorded complete only when it has no hole; "no matching data" and partial answers are
// retried with backoff on later runs; the repair checks the whole stored history; `prices
// status` shows what is pending and when it is retried. Answers are the recorded DE-LU A44
// document, documents built from the real DE-LU history file, and the platform's
// acknowledgement without data.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PricePeriod } from '../../src/domain.js';
import { createLogger } from '../../src/log.js';
import { Backfill, retryDelayMs } from '../../src/prices/backfill.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { EntsoeSource } from '../../src/prices/sources/entsoe.js';
import { firstRunAtOrAfter } from '../../src/prices/sync.js';
import { localDayStartMs } from '../../src/prices/timezone.js';
import Database from 'better-sqlite3';
import { listMigrations, migrate, openDatabase, type Db } from '../../src/store/db.js';
import { PriceFetchProgress } from '../../src/store/price-fetch.js';
import { PriceStore } from '../../src/store/prices.js';
import { mergePrices, mergingPriceStore } from '../../src/prices/price-merge.js';
import { buildA44, buildAcknowledgement } from '../helpers/a44.js';
import { FakePlatform } from '../helpers/entsoe-server.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const DE = requireMarket('DE-LU');
const EIC = '10Y1001A1001A82H';
const TOKEN = 'gaps-token-9d04';
const ORG = '6f1c2b7e-3a4d-4e5f-8a9b-0c1d2e3f4a5b';
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const param = (ms: number) => iso(ms).slice(0, 16).replace(/[-:T]/g, '');
const day = (date: string) => localDayStartMs(DE.timeZone, date);

describe.skipIf(!hasSharedData)(`incomplete months: retried with backoff, repaired over the whole history${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let platform: FakePlatform;
  let baseUrl: string;
  let history: PricePeriod[];
  /** Documents keyed by periodStart; anything else gets "no matching data". */
  const docs = new Map<string, string>();
  const recorded2021 = hasSharedData ? readFileSync(sharedData('entsoe/a44-de-lu-2021-01-01.xml'), 'utf8') : '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-prices-gaps-'));
    history = parsePriceCsv(readFileSync(sharedData('prices/de-lu-2018-2023h1-entsoe-hourly.csv'), 'utf8'), DE).periods;
    platform = new FakePlatform((req) => {
      const body = req.params.in_Domain === EIC ? docs.get(req.params.periodStart) : undefined;
      return { kind: 'xml', body: body ?? buildAcknowledgement() };
    });
    baseUrl = await platform.start();
  });
  afterAll(async () => {
    await platform?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A PT60M A01 document of the real history prices in [from, to), as the platform publishes them. */
  function historyDocument(from: number, to: number): string {
    const prices = history.filter((p) => p.startMs >= from && p.startMs < to);
    expect(prices).toHaveLength((to - from) / HOUR);
    return buildA44([{ eic: EIC, curveType: 'A01', sequence: 1, periods: [{ startMs: from, endMs: to, resolution: 'PT60M', points: prices.map((p, i) => ({ position: i + 1, price: p.pricePerMwh })) }] }]);
  }

  function backfillAt(db: Db, clock: { now: number }): Backfill {
    const logger = createLogger('silent');
    const source = new EntsoeSource({ baseUrl, securityToken: TOKEN, maxRequestsPerMinute: 600, timeoutMs: 10_000, backoffBaseMs: 5, backoffMaxMs: 20 }, { logger });
    return new Backfill({ db, store: mergingPriceStore(new PriceStore(db)), source, logger, now: () => clock.now });
  }

  const requestsSince = (n: number) => platform.requests.slice(n).map((r) => [r.params.periodStart, r.params.periodEnd]);

  it('a month is recorded complete only without holes; "no matching data" and a partial answer are retried with backoff until complete', async () => {
    const db = openDatabase(join(dir, 'run.db'));
    const progress = new PriceFetchProgress(db);
    const clock = { now: Date.parse('2021-02-10T12:00:00Z') };
    const backfill = backfillAt(db, clock);
    const [dec, jan, feb] = [day('2020-12-01'), day('2021-01-01'), day('2021-02-01')];
    const key = (fromMs: number, toMs: number) => ({ marketArea: 'DE-LU', source: 'entsoe', fromMs, toMs });
    docs.set('202012312300', recorded2021); // January: the platform has only the 1st and 2nd

    let before = platform.requests.length;
    let r = await backfill.run({ regions: ['DE-LU'], fromDate: '2020-12-01' });
    expect(r).toMatchObject({ chunks: 3, fetched: 3, skipped: 0, deferred: 0, incomplete: 2, periods: 48 });
    // December (acknowledgement), January (the recording), February so far (open month).
    expect(requestsSince(before)).toEqual([
      ['202011302300', '202012312300'],
      ['202012312300', '202101312300'],
      ['202101312300', param(day('2021-02-12'))],
    ]);
    expect(db.prepare('SELECT count(*) FROM price_fetch_chunks').pluck().get()).toBe(0);
    const decPending = progress.pending(key(dec, jan))!;
    expect(decPending).toMatchObject({ attempts: 1, missingS: 31 * 24 * 3600, problem: 'the platform answered "no matching data"', nextAttemptAtMs: clock.now + HOUR });
    expect(progress.pending(key(jan, feb))).toMatchObject({ attempts: 1, missingS: 29 * 24 * 3600, firstGapMs: day('2021-01-03'), problem: '696 h still without a price after 48 period(s) came back' });

    // The same day again: nothing is due, only the open month is asked.
    before = platform.requests.length;
    r = await backfill.run({ regions: ['DE-LU'], fromDate: '2020-12-01' });
    expect(r).toMatchObject({ fetched: 1, deferred: 2 });
    expect(requestsSince(before)).toEqual([['202101312300', param(day('2021-02-12'))]]);

    // An hour later both are due. January is asked from its first hole on, and this time the
    // platform has the rest of the month (the real prices of the history file).
    clock.now += HOUR;
    docs.set(param(day('2021-01-03')), historyDocument(day('2021-01-03'), feb));
    before = platform.requests.length;
    r = await backfill.run({ regions: ['DE-LU'], fromDate: '2020-12-01' });
    expect(r).toMatchObject({ fetched: 3, incomplete: 1, periods: 29 * 24 });
    expect(requestsSince(before).slice(0, 2)).toEqual([
      ['202011302300', '202012312300'],
      [param(day('2021-01-03')), '202101312300'],
    ]);
    expect(progress.isDone(key(jan, feb))).toBe(true);
    expect(progress.pending(key(jan, feb))).toBeNull();
    expect(new PriceStore(db).gapsIn('DE-LU', jan, feb)).toEqual([]);
    // December: second attempt, the wait doubles.
    expect(progress.pending(key(dec, jan))).toMatchObject({ attempts: 2, nextAttemptAtMs: clock.now + 2 * HOUR });
    expect([1, 2, 3, 8, 9, 20].map(retryDelayMs)).toEqual([1, 2, 4, 128, 168, 168].map((h) => h * HOUR));

    // Complete months are never asked again.
    clock.now += 2 * HOUR;
    before = platform.requests.length;
    await backfill.run({ regions: ['DE-LU'], fromDate: '2020-12-01' });
    expect(requestsSince(before).map(([s]) => s)).toEqual(['202011302300', '202101312300']);
    db.close();
  });

  it('migration 030: months an older version recorded complete with holes are done no longer; complete ones stay', () => {
    const db = new Database(join(dir, 'old.db'));
    migrate(db, listMigrations().filter((m) => m.version < 30));
    const store = new PriceStore(db);
    // January 2021 complete (the real history), December 2020 with only what an acknowledgement gave: nothing.
    const [dec, jan, feb] = [day('2020-12-01'), day('2021-01-01'), day('2021-02-01')];
    mergePrices(store, history.filter((p) => p.startMs >= jan && p.startMs < feb), { source: 'csv:de-lu-2018-2023h1-entsoe-hourly.csv', fetchedAtMs: 0 });
    const insert = db.prepare("INSERT INTO price_fetch_chunks (market_area, source, from_ms, to_ms, periods, fetched_at_ms) VALUES ('DE-LU', 'entsoe', ?, ?, ?, 0)");
    insert.run(dec, jan, 0);
    insert.run(jan, feb, 744);
    expect(migrate(db)).toContain(30);
    expect(db.prepare('SELECT from_ms FROM price_fetch_chunks').pluck().all()).toEqual([jan]);
    db.close();
  });

  it('the repair checks the whole stored history, not a recent window; prices status shows what is pending and when it is retried', async () => {
    const dataDir = join(dir, 'repair');
    mkdirSync(dataDir, { recursive: true });
    const db = openDatabase(join(dataDir, 'metergate.db'));
    const store = new PriceStore(db);
    // The real history file without 2021-01-01 and -02 (as if the first backfill had hit a platform hiccup there).
    const [hole, holeEnd] = [day('2021-01-01'), day('2021-01-03')];
    mergePrices(store, history.filter((p) => p.startMs < hole || p.startMs >= holeEnd), { source: 'csv:de-lu-2018-2023h1-entsoe-hourly.csv', fetchedAtMs: 0 });
    const clock = { now: Date.parse('2023-07-15T10:00:00Z') };
    const backfill = backfillAt(db, clock);
    docs.set('202012312300', recorded2021);

    let before = platform.requests.length;
    // backfill_from is 2023-01-01, yet the stored history from 2018 is checked.
    const r = await backfill.repair(['DE-LU'], '2023-01-01');
    // Holes: the two days, and the autumn 02:00 hours the history file cannot give (a mean of both).
    expect(requestsSince(before)).toEqual([
      [param(day('2018-10-28')), param(day('2018-10-29'))],
      [param(day('2019-10-27')), param(day('2019-10-28'))],
      [param(day('2020-10-25')), param(day('2020-10-26'))],
      ['202012312300', param(holeEnd)],
      [param(day('2021-10-31')), param(day('2021-11-01'))],
      [param(day('2022-10-30')), param(day('2022-10-31'))],
    ]);
    expect(r).toEqual({ chunksWithGaps: 6, fetched: 6, deferred: 0, completed: 1, periods: 48 });
    expect(store.gapsIn('DE-LU', hole, holeEnd)).toEqual([]);
    expect(store.native('DE-LU', hole, hole + 1)[0].pricePerMwh).toBe(50.87);
    const progress = new PriceFetchProgress(db);
    const pending = progress.pendingOf('DE-LU');
    expect(pending.map((p) => [iso(p.fromMs), p.missingS / 3600, p.attempts, p.nextAttemptAtMs - clock.now])).toEqual(
      ['2018-09-30', '2019-09-30', '2020-09-30', '2021-09-30', '2022-09-30'].map((d) => [`${d}T22:00:00.000Z`, 2, 1, HOUR]),
    );

    // The next daily repair, before the retries are due: no request at all.
    before = platform.requests.length;
    expect(await backfill.repair(['DE-LU'], '2023-01-01')).toMatchObject({ chunksWithGaps: 5, fetched: 0, deferred: 5 });
    expect(platform.requests.length).toBe(before);

    // A month recorded complete while it has a hole (as older versions recorded whatever came
    // back) is found by the repair and fetched again.
    progress.markDone({ marketArea: 'DE-LU', source: 'entsoe', fromMs: day('2019-10-01'), toMs: day('2019-11-01') }, 0, clock.now);
    expect(progress.pending({ marketArea: 'DE-LU', source: 'entsoe', fromMs: day('2019-10-01'), toMs: day('2019-11-01') })).toBeNull();
    before = platform.requests.length;
    expect(await backfill.repair(['DE-LU'], '2023-01-01')).toMatchObject({ chunksWithGaps: 5, fetched: 1, deferred: 4 });
    expect(requestsSince(before)).toEqual([[param(day('2019-10-27')), param(day('2019-10-28'))]]);
    expect(progress.isDone({ marketArea: 'DE-LU', source: 'entsoe', fromMs: day('2019-10-01'), toMs: day('2019-11-01') })).toBe(false);
    db.close();

    // prices status: each gap says whether it is pending and when it is retried.
    const config = join(dir, 'status.yaml');
    writeFileSync(
      config,
      [`organization_id: ${ORG}`, `data_dir: ${dataDir}`, 'prices:', '  regions: [DE-LU]', '  entsoe:', `    base_url: ${baseUrl}`, `    security_token: ${TOKEN}`, ''].join('\n'),
    );
    const runs = [firstRunAtOrAfter(['*/15 13-17 * * *', '30 3 * * *'], Date.now())!];
    const status = execFileSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'prices', 'status', '-c', config], { encoding: 'utf8' });
    const json = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'prices', 'status', '-c', config, '--json'], { encoding: 'utf8' }));
    // The retries were due in 2023: the first scheduled sync or repair run from now retries
    // them (computed before and after the commands, in case a run's minute passed meanwhile).
    runs.push(firstRunAtOrAfter(['*/15 13-17 * * *', '30 3 * * *'], Date.now())!);
    const runAt = json[0].pending[0].retryRunAtMs as number;
    expect(runs).toContain(runAt);
    const run = iso(runAt).replace(':00.000Z', 'Z');
    expect(status).toContain('gaps: 5 (10 h in all)');
    expect(status).toContain(`2018-10-28T00:00Z .. 2018-10-28T02:00Z  2 h  pending, next attempt not before 2023-07-15T11:00Z (the first scheduled run then: ${run})`);
    expect(status).toContain('pending: 5 month(s) incomplete after a fetch, retried with backoff');
    expect(status).toContain(`2019-10 (entsoe): 2 h without a price, 1 attempt(s), last 2023-07-15T10:00Z: the platform answered "no matching data"; next attempt not before 2023-07-15T11:00Z (the first scheduled run then: ${run})`);
    expect(json[0].pending).toHaveLength(5);
    expect(json[0].pending[0]).toMatchObject({ marketArea: 'DE-LU', source: 'entsoe', attempts: 1, problem: 'the platform answered "no matching data"', nextAttemptAtMs: clock.now + HOUR });
  }, 180_000); // two CLI processes on a loaded 2-core machine
});
