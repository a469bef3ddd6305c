// Exogenous series synced from a stand-in ENTSO-E platform over real HTTP into a real
// SQLite file: the A65 request (processType A01, outBiddingZone_Domain) answered with the
// real recorded NL load forecast, the A69 request (in_Domain) with the platform's "no
// matching data"; resumable like the price backfill, and run by the daemon's PriceSync
// after the prices, telling the forecaster with exogenous.updated.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { EventBus, type Events } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { Backfill } from '../../src/prices/backfill.js';
import { EntsoeExogenousSource } from '../../src/prices/exogenous/entsoe.js';
import { exogenousProviderTypes } from '../../src/prices/exogenous/index.js';
import type { ExogenousPoint } from '../../src/prices/exogenous/series.js';
import { EntsoeSource } from '../../src/prices/sources/entsoe.js';
import { PriceSync } from '../../src/prices/sync.js';
import { openDatabase } from '../../src/store/db.js';
import { ExogenousStore } from '../../src/store/exogenous.js';
import { exogenousBackfillStore } from '../../src/prices/exogenous/exogenous-merge.js';
import { PriceFetchProgress } from '../../src/store/price-fetch.js';
import { buildAcknowledgement } from '../helpers/a44.js';
import { buildA69 } from '../helpers/gl.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { FakePlatform, paramMs } from '../helpers/entsoe-server.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'exogenous-token-7e1f';
const ORG = '6f1c2b7e-3a4d-4e5f-8a9b-0c1d2e3f4a5b';
const NL = '10YNL----------L';
const RECORDED_FROM = Date.parse('2020-11-18T23:00Z');
/** Two days after the recording, so November 2020 is a closed month. */
const NOW = Date.parse('2020-12-02T12:00Z');

describe.skipIf(!hasSharedData)(`exogenous sync${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let platform: FakePlatform;
  let baseUrl: string;
  let column: (name: string) => number[];
  const logger = createLogger('silent' as 'info');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-exogenous-sync-'));
    const recorded = readFileSync(sharedData('entsoe/a65-nl-2020-11-19-load-forecast.xml'), 'utf8');
    // No A69 response is recorded: one is built in the platform's layout from the history
    // file's real solar and wind forecasts of the same day (hourly there).
    const day = parsePriceCsv(readFileSync(sharedData('prices/nl-2015-2023h1-entsoe-hourly.csv'), 'utf8'), requireMarket('NL'))
      .history!.filter((r) => r.startMs >= RECORDED_FROM && r.startMs < RECORDED_FROM + 86_400_000);
    column = (name) => day.map((r) => r.series[name]!);
    const a69 = buildA69(NL, [
      { psrType: 'B16', startMs: RECORDED_FROM, resolution: 'PT60M', values: column('Sol_DA') },
      { psrType: 'B18', startMs: RECORDED_FROM, resolution: 'PT60M', values: column('Woff_DA') },
      { psrType: 'B19', startMs: RECORDED_FROM, resolution: 'PT60M', values: column('Won_DA') },
    ]);
    platform = new FakePlatform((req) => {
      const p = req.params;
      const covers = paramMs(p.periodStart) <= RECORDED_FROM && paramMs(p.periodEnd) > RECORDED_FROM;
      // The recording answers an A65 request that covers its day, the built A69 an A69 one; "no data" for anything else.
      if (p.documentType === 'A65' && p.outBiddingZone_Domain === NL && covers) return { kind: 'xml', body: recorded };
      if (p.documentType === 'A69' && p.in_Domain === NL && covers) return { kind: 'xml', body: a69 };
      return { kind: 'xml', body: buildAcknowledgement() };
    });
    baseUrl = await platform.start();
  });
  afterAll(async () => {
    await platform?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks for A65 and A69 per month, stores the real load forecast in UTC at 15 min, keeps the month pending and does not ask again before its retry', async () => {
    const db = openDatabase(join(dir, 'backfill.db'));
    try {
      const client = new EntsoeSource({ baseUrl, securityToken: TOKEN, maxRequestsPerMinute: 400, timeoutMs: 5_000 }, { logger });
      const store = new ExogenousStore(db);
      const backfill = new Backfill<ExogenousPoint>({ db, store: exogenousBackfillStore(store), source: new EntsoeExogenousSource(client), what: 'exogenous', logger, now: () => NOW });
      const before = platform.requests.length;
      const first = await backfill.run({ regions: ['NL'], fromDate: '2020-11-19' });
      const all = platform.requests.slice(before).map((r) => r.params);
      // The week-ahead load forecast (A65, processType A31) is asked over each fetched range
      // and the seven days after it; the stand-in answers it with the day-ahead recording,
      // which must not extend `load` (the 96 points below stay 96).
      const weekAhead = all.filter((p) => p.processType === 'A31');
      expect(weekAhead.length).toBeGreaterThanOrEqual(2);
      expect(weekAhead[0]).toMatchObject({ documentType: 'A65', outBiddingZone_Domain: NL, periodStart: '202011182300', periodEnd: '202012072300' });
      const asked = all.filter((p) => p.processType !== 'A31');
      // November (closed, from the 19th) and December through tomorrow (open): A65 then A69 each.
      expect(asked.map((p) => p.documentType)).toEqual(['A65', 'A69', 'A65', 'A69']);
      expect(asked[0]).toMatchObject({ processType: 'A01', outBiddingZone_Domain: NL, periodStart: '202011182300', periodEnd: '202011302300', securityToken: TOKEN });
      expect(asked[0].in_Domain).toBeUndefined();
      expect(asked[1]).toMatchObject({ processType: 'A01', in_Domain: NL });
      expect(first).toMatchObject({ chunks: 2, fetched: 2, incomplete: 1, periods: 96 + 3 * 24 });

      const load = store.points('NL', 'load', RECORDED_FROM, RECORDED_FROM + 86_400_000);
      expect(load).toHaveLength(96);
      expect(load[0]).toMatchObject({ durationS: 900, valueMw: 12322, source: 'entsoe-exogenous', fetchedAtMs: NOW });
      // A69: one series per psrType (B16 solar, B18 offshore, B19 onshore wind), hourly as sent.
      for (const [series, name] of [['solar', 'Sol_DA'], ['wind_offshore', 'Woff_DA'], ['wind_onshore', 'Won_DA']] as const) {
        const got = store.points('NL', series, RECORDED_FROM, RECORDED_FROM + 86_400_000);
        expect(got.map((p) => p.durationS)).toEqual(Array(24).fill(3600));
        expect(got.map((p) => p.valueMw)).toEqual(column(name));
      }
      // The month is incomplete (the platform had the 19th only): pending, retried later.
      const [pending] = new PriceFetchProgress(db).pendingOf('NL');
      expect(pending).toMatchObject({ source: 'entsoe-exogenous', attempts: 1, missingS: 11 * 86_400 });

      const again = await backfill.run({ regions: ['NL'], fromDate: '2020-11-19' });
      expect(again).toMatchObject({ deferred: 1, fetched: 1 });
      // Only the open month was asked again.
      expect(platform.requests.slice(before + all.length).filter((r) => r.params.processType !== 'A31').map((r) => r.params.periodStart)).toEqual(['202011302300', '202011302300']);
    } finally {
      db.close();
    }
  });

  it('the daemon module syncs prices, then exogenous series from the registry, and emits exogenous.updated', async () => {
    const config = validateConfig(
      { organization_id: ORG, data_dir: join(dir, 'sync'), prices: { regions: ['NL'], backfill_from: '2020-11-19', entsoe: { base_url: baseUrl, security_token: TOKEN } } },
      'test',
      {},
    );
    const db = openDatabase(join(dir, 'sync', 'metergate.db'));
    const bus = new EventBus(logger);
    const updates: Array<Events['exogenous.updated']> = [];
    bus.on('exogenous.updated', (e) => void updates.push(e));
    const providers = exogenousProviderTypes().build({ config, logger });
    expect(providers.map((p) => p.name)).toEqual(['entsoe-exogenous']);
    const sync = new PriceSync({ config, logger, db, clock: { now: () => NOW }, events: bus, exogenous: providers });
    const before = platform.requests.length;
    try {
      await sync.start();
      await until(() => updates.length > 0, 'exogenous.updated', 30_000);
      await sync.idle();
      expect(updates[0]).toMatchObject({ marketArea: 'NL', periods: 96 + 3 * 24, source: 'entsoe-exogenous' });
      expect(new ExogenousStore(db).coverage('NL').map((c) => [c.series, c.points, c.firstStartMs, c.gaps.length])).toEqual([
        ['load', 96, RECORDED_FROM, 0],
        ['solar', 24, RECORDED_FROM, 0],
        ['wind_offshore', 24, RECORDED_FROM, 0],
        ['wind_onshore', 24, RECORDED_FROM, 0],
      ]);
      // NL's coupled neighbour (markets.json exogenous_neighbours): DE-LU's load and wind/solar forecasts are asked for too, prices are not.
      const asked = platform.requests.slice(before).map((r) => r.params);
      expect(asked.filter((p) => p.documentType === 'A65' && p.processType === 'A01' && p.outBiddingZone_Domain === '10Y1001A1001A82H')).toHaveLength(2);
      expect(asked.filter((p) => p.documentType === 'A65' && p.processType === 'A31' && p.outBiddingZone_Domain === '10Y1001A1001A82H').length).toBeGreaterThanOrEqual(2);
      expect(asked.filter((p) => p.documentType === 'A69' && p.in_Domain === '10Y1001A1001A82H')).toHaveLength(2);
      expect(asked.filter((p) => p.documentType === 'A44' && p.in_Domain === '10Y1001A1001A82H')).toHaveLength(0);
      // Tomorrow's load forecast is looked for from 10:00 Brussels time, before the auction
      // result (the prices' own 13:00-17:45 schedule would fetch it only with the prices).
      const brussels = (d: Date | null) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Brussels', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(d!);
      expect(sync.nextRuns().exogenousSync).toBeInstanceOf(Date);
      const [h, m] = brussels(sync.nextRuns().exogenousSync).split(':').map(Number);
      expect(h >= 10 && h <= 12 && m % 15 === 0).toBe(true);
    } finally {
      await sync.stop();
      db.close();
    }
  });

  it('no provider is on without an ENTSO-E token', () => {
    const config = validateConfig({ organization_id: ORG, data_dir: join(dir, 'off'), prices: { regions: ['NL'] } }, 'test', {});
    expect(exogenousProviderTypes().kinds()).toEqual(['entsoe']);
    expect(exogenousProviderTypes().build({ config, logger })).toEqual([]);
  });
});
