// The ForecastService with the week-ahead load forecast (issue 24 point 4), on real NL
// history in a real SQLite file. ../shared/data holds no week-ahead forecast (ENTSO-E A65
// processType A31); the history file's day-ahead load forecast of each day after tomorrow,
// reduced to the day's minimum and maximum (what A31 publishes: A60/A61 at P1D), stands in
// for it. Fetched by the origin it is used for D+2.. and the stored run says through which
// day; fetched later it is not; D+1 is the same either way (the day-ahead inputs serve it).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { dayFromIso, localMidnightMs } from '../../src/forecast/local-days.js';
import { ForecastService, forecastMarket } from '../../src/forecast/service.js';
import { createLogger } from '../../src/log.js';
import { exogenousFromHistory } from '../../src/prices/exogenous/csv.js';
import type { ExogenousPoint } from '../../src/prices/exogenous/series.js';
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
const TODAY = '2022-06-15';
const DAY = dayFromIso(TODAY);
/** 10:00 local: today's prices known, tomorrow's not; tomorrow's load forecast is out. */
const NOW = localMidnightMs(NL.timeZone, DAY) + 10 * 3_600_000;
const dayStart = (d: number) => localMidnightMs(NL.timeZone, d);

describe.skipIf(!hasSharedData)(`forecast with the week-ahead load forecast${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  const dbs: Db[] = [];
  let parsed: ReturnType<typeof parsePriceCsv>;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mg-forecast-week-'));
    parsed = parsePriceCsv(readFileSync(sharedData('prices/nl-2015-2023h1-entsoe-hourly.csv'), 'utf8'), NL);
  });
  afterAll(() => {
    for (const db of dbs) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Prices through today, the day-ahead series through tomorrow (fetched before NOW), and given, the week-ahead min/max of D+2, D+3 fetched at `weekAheadFetchedAtMs`. */
  function gateway(name: string, weekAheadFetchedAtMs?: number) {
    const db = openDatabase(join(dir, `${name}.db`));
    dbs.push(db);
    const from = NOW - 400 * 86_400_000;
    storePrices(new PriceStore(db), parsed.periods.filter((p) => p.startMs >= from && p.startMs < dayStart(DAY + 1)), { source: 'csv:test', fetchedAtMs: NOW - 3_600_000 });
    const exogenous = new ExogenousStore(db);
    const { points } = exogenousFromHistory(parsed.history!.filter((r) => r.startMs >= from && r.startMs < dayStart(DAY + 2)), 'NL', NL.timeZone);
    mergeExogenous(exogenous, points, { source: 'csv:test', fetchedAtMs: NOW - 3_600_000 });
    if (weekAheadFetchedAtMs !== undefined) {
      const weekAhead: ExogenousPoint[] = [];
      for (const d of [DAY + 2, DAY + 3]) {
        const load = parsed.history!.filter((r) => r.startMs >= dayStart(d) && r.startMs < dayStart(d + 1)).map((r) => r.series.Load_DA!);
        expect(load).toHaveLength(24);
        weekAhead.push({ marketArea: 'NL', series: 'load_week_ahead_min', startMs: dayStart(d), durationS: 86_400, valueMw: Math.min(...load) });
        weekAhead.push({ marketArea: 'NL', series: 'load_week_ahead_max', startMs: dayStart(d), durationS: 86_400, valueMw: Math.max(...load) });
      }
      mergeExogenous(exogenous, weekAhead, { source: 'entsoe-exogenous', fetchedAtMs: weekAheadFetchedAtMs });
    }
    const config = validateConfig(
      { organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: dir, prices: { regions: ['NL'], source: 'none' }, forecast: { training_window_days: 56, horizon_days: 3 } },
      'test',
      {},
    );
    const forecasts = new ForecastStore(db);
    const service = new ForecastService({ config, logger: createLogger('silent' as 'info'), clock: { now: () => NOW }, forecasts, prices: new PriceStore(db), exogenous, market: forecastMarket });
    return { service, forecasts };
  }
  const values = (g: ReturnType<typeof gateway>, d: number) => g.forecasts.periods('NL', dayStart(d), dayStart(d + 1)).map((p) => p.forecastPerMwh);

  it('uses the week-ahead load for D+2.. when fetched by the origin, names the horizons it entered in the stored run, and leaves D+1 as it was', async () => {
    // Fetched after the origin: as if there were none (the day-ahead inputs only; forecast-exogenous.test.ts covers those).
    const without = gateway('late', NOW + 60_000);
    const withWeek = gateway('with', NOW - 60_000);
    for (const g of [without, withWeek]) expect(await g.service.computeRegion('NL')).toBe(true);
    const dayAhead = 'prices + load, solar, wind_onshore, wind_offshore';
    expect(without.forecasts.latestRun('NL')!.inputs).toBe(dayAhead);
    // The stored run names the horizons the week-ahead load entered (a horizon whose blend
    // took the recursive day-ahead model wholly did not): exactly those differ from the run
    // without it; D+1 never does.
    const inputs = withWeek.forecasts.latestRun('NL')!.inputs ?? '';
    const m = /^prices \+ load, solar, wind_onshore, wind_offshore; load week-ahead min\/max in (D\+\d(?:, D\+\d)*)$/.exec(inputs);
    expect(m, inputs).not.toBeNull();
    const used = m![1].split(', ').map((h) => Number(h.slice(2)));
    expect(used.length).toBeGreaterThan(0);
    expect(values(withWeek, DAY + 1)).toEqual(values(without, DAY + 1));
    for (const h of [2, 3]) {
      const a = values(withWeek, DAY + h);
      expect(a).toHaveLength(24);
      expect(a.every(Number.isFinite)).toBe(true);
      if (used.includes(h)) expect(a, `D+${h}`).not.toEqual(values(without, DAY + h));
      else expect(a, `D+${h}`).toEqual(values(without, DAY + h));
    }
  }, 240_000);
});
