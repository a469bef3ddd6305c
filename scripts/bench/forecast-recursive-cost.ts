// Benchmark (issue 15 point 3): the CPU the recursive variant and the per-horizon blend add
// to a cold start. In one process, alternating, the shipped forecaster (service.ts
// rollingOptions) steps through the cold-start origins (every second of the 56 calibration
// origins and the last 7, as market-forecast.ts does) with and without `recursiveBlend`;
// the ratio is against the forecaster without it, measured in the same run. Price only
// (NL 2025-06-15) and with the NL history file's exogenous series (NL 2023-03-15), where
// the recursion needs a price-only day-ahead fit of its own.
// Run: npx tsx scripts/bench/forecast-recursive-cost.ts   (needs ../shared/data)
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import { toDayMatrix, type DayMatrix, type SeriesPoint } from '../../src/forecast/day-matrix.js';
import { dayFromIso } from '../../src/forecast/local-days.js';
import { historyDaysNeeded } from '../../src/forecast/market-forecast.js';
import { ConformalForecaster } from '../../src/forecast/rolling.js';
import { rollingOptions } from '../../src/forecast/service.js';
import { exogenousFromHistory } from '../../src/prices/exogenous/csv.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';

const nl = requireMarket('NL');
const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/tmp/unused' }, 'bench', {});
const options = rollingOptions(config);
const data = resolve(process.cwd(), '../shared/data/prices');
const points: SeriesPoint[] = [];
for (const f of ['nl-2015-2023h1-entsoe-hourly.csv', 'nl-2024-hourly-local.csv', 'nl-2025-quarterhour-local-utc.csv'])
  for (const p of parsePriceCsv(readFileSync(resolve(data, f), 'utf8'), nl).periods) points.push({ startMs: p.startMs, durationS: p.durationS, value: p.pricePerMwh });
const history = parsePriceCsv(readFileSync(resolve(data, 'nl-2015-2023h1-entsoe-hourly.csv'), 'utf8'), nl).history ?? [];
const series: Record<string, SeriesPoint[]> = {};
for (const p of exogenousFromHistory(history, nl.code, nl.timeZone).points) (series[p.series] ??= []).push({ startMs: p.startMs, durationS: p.durationS, value: p.valueMw });

function coldCpuSeconds(origin: number, prices: DayMatrix, exogenous: Record<string, DayMatrix> | undefined, recursiveBlend: boolean): number {
  const forecaster = new ConformalForecaster({ prices, exogenous }, { ...options, recursiveBlend });
  const started = process.cpuUsage();
  for (let o = origin - options.calibrationDays - options.horizonDays; o <= origin; o++) if ((origin - o) % 2 === 0) forecaster.advance(o);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1e6;
}

for (const [label, day, withSeries, rounds] of [
  ['NL 2025-06-15, 3600 s, price only', '2025-06-15', false, 3],
  ['NL 2023-03-15, 3600 s, with load, solar and wind', '2023-03-15', true, 1],
] as const) {
  const origin = dayFromIso(day);
  const first = origin - historyDaysNeeded(options);
  const prices = toDayMatrix(nl.timeZone, points, first, origin + 8, 24);
  // Prices known through the origin only; the series through the day after it.
  prices.values.fill(NaN, (origin + 1 - first) * 24);
  const exogenous = withSeries ? Object.fromEntries(Object.entries(series).map(([k, v]) => [k, toDayMatrix(nl.timeZone, v, first, origin + 8, 24)])) : undefined;
  const without: number[] = [];
  const withBlend: number[] = [];
  for (let r = 0; r < rounds; r++) {
    without.push(coldCpuSeconds(origin, prices, exogenous, false));
    withBlend.push(coldCpuSeconds(origin, prices, exogenous, true));
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  console.log(
    `${label}: cold start ${sum(withBlend).toFixed(1)} s CPU with the recursive variant and blend vs ${sum(without).toFixed(1)} s without (${rounds} round(s) alternating): x${(sum(withBlend) / sum(without)).toFixed(2)}`,
  );
}
