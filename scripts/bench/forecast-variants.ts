// Quick comparison of forecaster variants on point accuracy: forecasts from every `step`-th
// origin in [from, to] (10:00 local, only data known then), rMAE per horizon day against the
// standard naive. No bounds: coverage needs consecutive origins (metergate forecast eval).
// Run: npx tsx scripts/bench/forecast-variants.ts DB FROM TO STEP [--region NL] [--interval 900] [--exo CSV] [--only a,b]
import { readFileSync } from 'node:fs';
import { toDayMatrix, valueAt, type SeriesPoint } from '../../src/forecast/day-matrix.js';
import { exogenousSeries } from '../../src/forecast/exogenous.js';
import { forecastLear, longestWindow, type LearOptions } from '../../src/forecast/lear.js';
import { PenaltyCache } from '../../src/forecast/penalty-cache.js';
import { dayFromIso, isoDate, localMidnightMs } from '../../src/forecast/local-days.js';
import { naiveLagDays } from '../../src/forecast/metrics.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { openDatabase } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';

const [dbPath, from, to, stepRaw, ...rest] = process.argv.slice(2);
const flag = (name: string) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : undefined;
};
const slots = flag('--interval') === '900' ? 96 : 24;
const exoPath = flag('--exo');
const only = flag('--only')?.split(',');
const step = Number(stepRaw);
const nl = requireMarket(flag('--region') ?? 'NL');
const base: LearOptions = { horizonDays: 7, trainingWindowDays: 364, transform: 'asinh' };
const epf = [56, 84, 364, 728];
const variants: Record<string, LearOptions> = {
  base,
  both1: { ...base, members: ['same-slot', 'cross-hour'], crossHourDays: 1 },
  ens4: { ...base, windows: epf },
  ens4med: { ...base, windows: epf, combine: 'median' },
  cross: { ...base, members: ['cross-hour'] },
  cross4: { ...base, members: ['cross-hour'], windows: epf },
  both: { ...base, members: ['same-slot', 'cross-hour'] },
  both1w4: { ...base, members: ['same-slot', 'cross-hour'], crossHourDays: 1, windows: epf },
  both1e4: { ...base, members: ['same-slot', 'cross-hour'], crossHourDays: 1, windows: epf, ensembleWithExogenousOnly: true },
  both1c4: { ...base, members: ['same-slot', 'cross-hour'], crossHourDays: 1, crossHourWindows: epf },
  both4: { ...base, members: ['same-slot', 'cross-hour'], windows: epf },
};
const chosen = Object.entries(variants).filter(([k]) => !only || only.includes(k));
const fromDay = dayFromIso(from);
const toDay = dayFromIso(to);
const first = fromDay - Math.max(...chosen.map(([, v]) => longestWindow(v))) - 60;
const db = openDatabase(dbPath);
const points: SeriesPoint[] = new PriceStore(db)
  .native(nl.code, localMidnightMs(nl.timeZone, first), localMidnightMs(nl.timeZone, toDay + 1))
  .map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.pricePerMwh }));
const prices = toDayMatrix(nl.timeZone, points, first, toDay, slots);
const exogenous = exoPath
  ? Object.fromEntries(
      Object.entries(exogenousSeries(parsePriceCsv(readFileSync(exoPath, 'utf8'), nl).history ?? [])).map(([k, v]) => [k, toDayMatrix(nl.timeZone, v, first, toDay, slots)]),
    )
  : undefined;
for (const [name, opts] of chosen) {
  const err = new Float64Array(7);
  const nai = new Float64Array(7);
  // Day-ahead errors per calendar year of the target day.
  const years = new Map<string, { e: number; n: number }>();
  const cache = new PenaltyCache();
  const started = performance.now();
  let origins = 0;
  for (let o = fromDay - 1; o < toDay; o += step) {
    origins++;
    const out = forecastLear({ prices, exogenous, lastKnownDay: o, exogenousKnownThrough: o + 1 }, opts, cache);
    for (const d of out) {
      if (d.day > toDay) continue;
      for (let s = 0; s < slots; s++) {
        const a = valueAt(prices, d.day, s);
        const nv = valueAt(prices, d.day - naiveLagDays(d.day), s);
        if (Number.isNaN(a) || Number.isNaN(nv)) continue;
        err[d.horizon - 1] += Math.abs(a - d.values[s]);
        nai[d.horizon - 1] += Math.abs(a - nv);
        if (d.horizon === 1) {
          const y = isoDate(d.day).slice(0, 4);
          const acc = years.get(y) ?? { e: 0, n: 0 };
          acc.e += Math.abs(a - d.values[s]);
          acc.n += Math.abs(a - nv);
          years.set(y, acc);
        }
      }
    }
  }
  const secs = (performance.now() - started) / 1000;
  console.log(`${name.padEnd(9)} ${Array.from(err, (e, i) => (e / nai[i]).toFixed(3)).join(' ')}  (${origins} origins, ${(secs / origins).toFixed(2)} s/origin)`);
  if (years.size > 1) console.log(`  D+1 by year: ${[...years].map(([y, a]) => `${y} ${(a.e / a.n).toFixed(3)}`).join(", ")}`);
}
db.close();
