// The ForecastService with exogenous series, on real NL history (prices and the day-ahead
// load, solar and wind forecasts of the ENTSO-E history file) in a real SQLite file: it
// uses the series when they cover the target day and were fetched by the origin, and
// otherwise forecasts from prices only and says so in the stored run and in /healthz.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { dayFromIso, localMidnightMs } from '../../src/forecast/local-days.js';
import { ForecastService, forecastMarket } from '../../src/forecast/service.js';
import { createLogger } from '../../src/log.js';
import { exogenousFromHistory } from '../../src/prices/exogenous/csv.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { ExogenousStore } from '../../src/store/exogenous.js';
import { mergeExogenous } from '../../src/prices/exogenous/exogenous-merge.js';
import { ForecastStore } from '../../src/store/forecasts.js';
import { PriceStore } from '../../src/store/prices.js';
import { storePrices } from '../../src/prices/price-merge.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const NL = requireMarket('NL');
const DE = requireMarket('DE-LU');
const TODAY = '2022-06-15';
/** 10:00 local: today's prices known, tomorrow's not; tomorrow's load forecast is out. */
const NOW = localMidnightMs(NL.timeZone, dayFromIso(TODAY)) + 10 * 3_600_000;
const TOMORROW_START = localMidnightMs(NL.timeZone, dayFromIso(TODAY) + 1);
const TOMORROW_END = localMidnightMs(NL.timeZone, dayFromIso(TODAY) + 2);

describe.skipIf(!hasSharedData)(`forecast with exogenous inputs${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  const dbs: Db[] = [];
  let parsed: ReturnType<typeof parsePriceCsv>;
  let deLu: ReturnType<typeof parsePriceCsv>;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-forecast-exo-'));
    parsed = parsePriceCsv(readFileSync(sharedData('prices/nl-2015-2023h1-entsoe-hourly.csv'), 'utf8'), NL);
    deLu = parsePriceCsv(readFileSync(sharedData('prices/de-lu-2018-2023h1-entsoe-hourly.csv'), 'utf8'), DE);
  });
  afterAll(() => {
    for (const db of dbs) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A gateway at NOW whose store has the prices through today and the series through tomorrow, tomorrow's fetched at `tomorrowFetchedAtMs` (and, given, DE-LU's at `neighbourTomorrowFetchedAtMs`). */
  function gateway(name: string, tomorrowFetchedAtMs: number, neighbourTomorrowFetchedAtMs?: number) {
    const db = openDatabase(join(dir, `${name}.db`));
    dbs.push(db);
    const from = NOW - 400 * 86_400_000;
    storePrices(new PriceStore(db), parsed.periods.filter((p) => p.startMs >= from && p.startMs < TOMORROW_START), { source: 'csv:test', fetchedAtMs: NOW - 3_600_000 });
    const { points } = exogenousFromHistory(parsed.history!.filter((r) => r.startMs >= from && r.startMs < TOMORROW_END), 'NL', NL.timeZone);
    const exogenous = new ExogenousStore(db);
    mergeExogenous(exogenous, points.filter((p) => p.startMs < TOMORROW_START), { source: 'csv:test', fetchedAtMs: NOW - 3_600_000 });
    mergeExogenous(exogenous, points.filter((p) => p.startMs >= TOMORROW_START), { source: 'entsoe-exogenous', fetchedAtMs: tomorrowFetchedAtMs });
    if (neighbourTomorrowFetchedAtMs !== undefined) {
      // NL's coupled neighbour (markets.json exogenous_neighbours), stored under its own area as the sync does.
      const de = exogenousFromHistory(deLu.history!.filter((r) => r.startMs >= from && r.startMs < TOMORROW_END), 'DE-LU', DE.timeZone).points;
      mergeExogenous(exogenous, de.filter((p) => p.startMs < TOMORROW_START), { source: 'csv:test', fetchedAtMs: NOW - 3_600_000 });
      mergeExogenous(exogenous, de.filter((p) => p.startMs >= TOMORROW_START), { source: 'entsoe-exogenous', fetchedAtMs: neighbourTomorrowFetchedAtMs });
    }
    const config = validateConfig(
      { organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: dir, prices: { regions: ['NL'], source: 'none' }, forecast: { training_window_days: 56, horizon_days: 2 } },
      'test',
      {},
    );
    const forecasts = new ForecastStore(db);
    const service = new ForecastService({ config, logger: createLogger('silent' as 'info'), clock: { now: () => NOW }, forecasts, prices: new PriceStore(db), exogenous, market: forecastMarket });
    return { service, forecasts };
  }

  it('uses load, solar and wind when tomorrow\'s forecasts were fetched by the origin', async () => {
    const { service, forecasts } = gateway('with', NOW - 60_000);
    expect(await service.computeRegion('NL')).toBe(true);
    const run = forecasts.latestRun('NL')!;
    expect(run.originDay).toBe(TODAY);
    expect(run.inputs).toBe('prices + load, solar, wind_onshore, wind_offshore');
    // NL hourly at 80 %: the averaged band at D+1..D+5 (band-methods.json); this horizon is 2 days.
    expect(run.method).toBe('lear-ridge+average');
    expect(service.health()).toEqual({ status: 'ok', reason: 'every day of the horizon forecast for NL (prices + load, solar, wind_onshore, wind_offshore)' });
  }, 120_000);

  it('forecasts from prices only, and says so, when tomorrow\'s forecasts were fetched after the origin', async () => {
    const late = gateway('late', NOW + 60_000);
    expect(await late.service.computeRegion('NL')).toBe(true);
    const run = late.forecasts.latestRun('NL')!;
    expect(run.inputs).toMatch(/^prices only: no load forecast for 2022-06-16 fetched by the origin/);
    // NL hourly at 80 %: the averaged band at D+1..D+5 (band-methods.json); this horizon is 2 days.
    expect(run.method).toBe('lear-ridge+average');
    expect(late.service.health().reason).toContain('NL (prices only: no load forecast for 2022-06-16 fetched by the origin');
    // The two forecasts of tomorrow differ: the inputs were really used in one of them.
    const withExo = gateway('with-again', NOW - 60_000);
    await withExo.service.computeRegion('NL');
    const a = late.forecasts.periods('NL', TOMORROW_START, TOMORROW_END).map((p) => p.forecastPerMwh);
    const b = withExo.forecasts.periods('NL', TOMORROW_START, TOMORROW_END).map((p) => p.forecastPerMwh);
    expect(a).toHaveLength(24);
    expect(b).toHaveLength(24);
    expect(a).not.toEqual(b);
  }, 180_000);

  it("adds the coupled neighbour's (DE-LU) load, solar and wind when they were fetched by the origin, and leaves them out, naming them, when not", async () => {
    const both = gateway('neighbour', NOW - 60_000, NOW - 60_000);
    expect(await both.service.computeRegion('NL')).toBe(true);
    expect(both.forecasts.latestRun('NL')!.inputs).toBe('prices + load, solar, wind_onshore, wind_offshore, DE-LU load, DE-LU solar, DE-LU wind_onshore');
    const late = gateway('neighbour-late', NOW - 60_000, NOW + 60_000);
    expect(await late.service.computeRegion('NL')).toBe(true);
    expect(late.forecasts.latestRun('NL')!.inputs).toBe(
      'prices + load, solar, wind_onshore, wind_offshore (left out: no DE-LU load forecast for 2022-06-16 fetched by the origin; no DE-LU solar forecast for 2022-06-16 fetched by the origin; no DE-LU wind_onshore forecast for 2022-06-16 fetched by the origin)',
    );
    const a = both.forecasts.periods('NL', TOMORROW_START, TOMORROW_END).map((p) => p.forecastPerMwh);
    const b = late.forecasts.periods('NL', TOMORROW_START, TOMORROW_END).map((p) => p.forecastPerMwh);
    expect(a).toHaveLength(24);
    expect(a.every(Number.isFinite)).toBe(true);
    expect(a).not.toEqual(b);
  }, 240_000);
});
