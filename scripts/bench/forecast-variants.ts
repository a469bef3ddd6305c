// Quick comparison of forecaster variants on point accuracy: forecasts from every `step`-th
// origin in [from, to] (10:00 local, only data known then), rMAE per horizon day against the
// standard naive. No bounds: coverage needs consecutive origins (metergate forecast eval).
// Run: npx tsx scripts/bench/forecast-variants.ts DB FROM TO STEP [--region NL] [--interval 900] [--exo CSV]
//        [--neighbour CSV --neighbour-region DE-LU] [--only a,b] [--recursive]
// [--recursive]: each variant's recursive forecast too (its day-ahead model fed its own forecasts, recursive.ts).
// With --exo, a variant reads the file's Load_DA, Sol_DA, Won_DA, Woff_DA (or the series it
// names in `exo`: also Gen_SC, the day-ahead generation forecast, and derived ones); with
// --neighbour, a coupled zone's history file adds its day-ahead series as `nb:Load_DA` etc.
// (zero load and all-zero days missing, as `prices import --exogenous` reads them).
import { readFileSync } from 'node:fs';
import { toDayMatrix, valueAt, type DayMatrix, type SeriesPoint } from '../../src/forecast/day-matrix.js';
import { exogenousSeries } from '../../src/forecast/exogenous.js';
import { exogenousFromHistory } from '../../src/prices/exogenous/csv.js';
import { HISTORY_COLUMNS } from '../../src/prices/exogenous/series.js';
import { forecastLearPaths, longestWindow, type LearOptions } from '../../src/forecast/lear.js';
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
const neighbourPath = flag('--neighbour');
const only = flag('--only')?.split(',');
const withRecursive = rest.includes('--recursive');
const step = Number(stepRaw);
const nl = requireMarket(flag('--region') ?? 'NL');
type Variant = LearOptions & { readonly exo?: readonly string[] };
const base: Variant = { horizonDays: 7, trainingWindowDays: 364, transform: 'asinh' };
const epf = [56, 84, 364, 728];
const adopted: Variant = { ...base, members: ['same-slot', 'cross-hour'], crossHourDays: 1, windows: epf, ensembleWithExogenousOnly: true };
const own = ['Load_DA', 'Sol_DA', 'Won_DA', 'Woff_DA'];
const nb = ['nb:Load_DA', 'nb:Sol_DA', 'nb:Won_DA'];
const variants: Record<string, Variant> = {
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
  // Exogenous inputs (adopted model, D+1 only): which series.
  nbAll: { ...adopted, exo: [...own, ...nb] },
  nbLoad: { ...adopted, exo: [...own, 'nb:Load_DA'] },
  nbWind: { ...adopted, exo: [...own, 'nb:Won_DA'] },
  nbLW: { ...adopted, exo: [...own, 'nb:Load_DA', 'nb:Won_DA'] },
  nbRes: { ...adopted, exo: [...own, 'nb:residual'] },
  gen: { ...adopted, exo: [...own, 'Gen_SC'] },
  imp: { ...adopted, exo: [...own, 'import'] },
  nbGen: { ...adopted, exo: [...own, ...nb, 'Gen_SC'] },
  nbImp: { ...adopted, exo: [...own, ...nb, 'import'] },
  res: { ...adopted, exo: ['Load_DA', 'residual'] },
  resAll: { ...adopted, exo: ['Load_DA', 'Sol_DA', 'Won_DA', 'residual'] },
  resNb: { ...adopted, exo: [...own, 'residual', 'nb:residual'] },
  // As shipped (service.ts): the region's series, its and each neighbour's residual load.
  shipped: { ...adopted, residualLoad: true, exo: [...own, ...nb] },
  resNbImp: { ...adopted, exo: [...own, 'residual', 'nb:residual', 'import'] },
  resNbGen: { ...adopted, exo: [...own, 'residual', 'nb:residual', 'Gen_SC'] },
  resNbAll: { ...adopted, exo: [...own, 'residual', ...nb] },
  resNbLW: { ...adopted, exo: [...own, 'residual', 'nb:Load_DA', 'nb:Won_DA', 'nb:residual'] },
  resW: { ...adopted, exo: ['Load_DA', 'Won_DA', 'residual'] },
  w5: { ...adopted, windows: [56, 84, 182, 364, 728] },
  med4: { ...adopted, combine: 'median' },
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
const allExo: Record<string, DayMatrix> = {};
if (exoPath) {
  const own = exogenousSeries(parsePriceCsv(readFileSync(exoPath, 'utf8'), nl).history ?? [], ['Load_DA', 'Sol_DA', 'Won_DA', 'Woff_DA', 'Gen_SC']);
  for (const [k, v] of Object.entries(own)) allExo[k] = toDayMatrix(nl.timeZone, v, first, toDay, slots);
}
if (neighbourPath) {
  const nbMarket = requireMarket(flag('--neighbour-region') ?? 'DE-LU');
  const { points } = exogenousFromHistory(parsePriceCsv(readFileSync(neighbourPath, 'utf8'), nbMarket).history ?? [], nbMarket.code, nbMarket.timeZone);
  for (const [name, column] of Object.entries(HISTORY_COLUMNS)) {
    const v = points.filter((p) => p.series === name).map((p) => ({ startMs: p.startMs, durationS: p.durationS, value: p.valueMw }));
    if (v.length > 0) allExo[`nb:${column}`] = toDayMatrix(nl.timeZone, v, first, toDay, slots);
  }
}
// Derived series: expected import (load minus the generation forecast) and residual load.
const combined = (terms: readonly [string, number][]): DayMatrix | undefined => {
  if (!terms.every(([k]) => allExo[k])) return undefined;
  const m0 = allExo[terms[0][0]];
  const values = new Float64Array(m0.values.length);
  for (let i = 0; i < values.length; i++) values[i] = terms.reduce((a, [k, c]) => a + c * allExo[k].values[i], 0);
  return { ...m0, values };
};
for (const [name, terms] of Object.entries({
  import: [['Load_DA', 1], ['Gen_SC', -1]],
  residual: [['Load_DA', 1], ['Sol_DA', -1], ['Won_DA', -1], ...(allExo.Woff_DA ? [['Woff_DA', -1] as [string, number]] : [])],
  'nb:residual': [['nb:Load_DA', 1], ['nb:Sol_DA', -1], ['nb:Won_DA', -1]],
} as Record<string, [string, number][]>)) {
  const m = combined(terms);
  if (m) allExo[name] = m;
}
const exogenousOf = (v: Variant): Record<string, DayMatrix> | undefined => {
  if (!exoPath) return undefined;
  const names = v.exo ?? own.filter((k) => allExo[k]);
  const missing = names.filter((k) => !allExo[k]);
  if (missing.length > 0) throw new Error(`no series ${missing.join(', ')} (give --exo / --neighbour)`);
  return Object.fromEntries(names.map((k) => [k, allExo[k]]));
};
for (const [name, opts] of chosen) {
  const exogenous = exogenousOf(opts);
  const err = new Float64Array(7);
  const recErr = new Float64Array(7);
  const nai = new Float64Array(7);
  // Day-ahead errors per calendar year of the target day.
  const years = new Map<string, { e: number; n: number }>();
  const cache = new PenaltyCache();
  const started = performance.now();
  let origins = 0;
  for (let o = fromDay - 1; o < toDay; o += step) {
    origins++;
    const paths = forecastLearPaths({ prices, exogenous, lastKnownDay: o, exogenousKnownThrough: o + 1 }, opts, cache, withRecursive);
    for (const d of paths.direct) {
      const rec = paths.recursive?.[d.horizon - 1] ?? d.values;
      if (d.day > toDay) continue;
      for (let s = 0; s < slots; s++) {
        const a = valueAt(prices, d.day, s);
        const nv = valueAt(prices, d.day - naiveLagDays(d.day), s);
        if (Number.isNaN(a) || Number.isNaN(nv)) continue;
        err[d.horizon - 1] += Math.abs(a - d.values[s]);
        recErr[d.horizon - 1] += Math.abs(a - rec[s]);
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
  console.log(`${name.padEnd(9)} ${Array.from(err, (e, i) => (e / nai[i]).toFixed(3)).join(' ')}  (${origins} origins, ${(secs / origins).toFixed(2)} s/origin; D+1 absolute errors ${err[0].toFixed(1)})`);
  if (withRecursive) console.log(`${`${name} rec`.padEnd(9)} ${Array.from(recErr, (e, i) => (e / nai[i]).toFixed(3)).join(' ')}`);
  if (years.size > 1) console.log(`  D+1 by year: ${[...years].map(([y, a]) => `${y} ${(a.e / a.n).toFixed(3)}`).join(", ")}`);
}
db.close();
