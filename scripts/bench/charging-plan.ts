// Benchmark: one charging plan over 7 days of real 15-minute NL prices (672 periods,
// 2025-11-10 .. 2025-11-17 from ../shared/data), as GET .../plan computes it (the cheapest
// schedule, its cost range and the immediate-charging comparison), against a baseline
// measured in the same run: the naive greedy that sorts the periods by price and takes
// whole periods until the energy is met (no clipping to now/departure, no limits, no
// immediate comparison). Both get the same periods; the median of many runs is printed.
// Run: npx tsx scripts/bench/charging-plan.ts [runs]   (needs ../shared/data)
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { planPeriods } from '../../src/planning/periods.js';
import { planCharging, type PlanPeriod } from '../../src/planning/plan.js';

const runs = Number(process.argv[2] ?? 2000);
const NL = requireMarket('NL');
const file = resolve(process.cwd(), '../shared/data/prices/nl-2025-quarterhour-local-utc.csv');
const fromMs = Date.parse('2025-11-10T00:00:00Z');
const toMs = fromMs + 7 * 86_400_000;
const native = parsePriceCsv(readFileSync(file, 'utf8'), NL).periods.filter((p) => p.startMs >= fromMs && p.startMs < toMs);
const periods = planPeriods(native, []);
if (periods.length !== 672 || periods.some((p) => p.durationS !== 900)) throw new Error(`expected 672 quarter-hours, got ${periods.length}`);

const request = {
  nowMs: fromMs + 10 * 60_000, // inside the first quarter-hour
  departureMs: toMs - 3_600_000,
  energyWh: 400_000, // 36 hours at 11 kW: a large share of the periods is charged
  charger: { maxCurrentA: 16, minCurrentA: 6, phases: 3, voltageV: 230 },
  site: { limitA: 25, otherLoadA: 5 },
  periods,
};

function naiveGreedy(ps: readonly PlanPeriod[], energyWh: number, powerW: number): number {
  const sorted = [...ps].sort((a, b) => a.pricePerMwh - b.pricePerMwh);
  let left = energyWh;
  let cost = 0;
  for (const p of sorted) {
    if (left <= 0) break;
    const wh = Math.min(left, (powerW * p.durationS) / 3600);
    cost += (wh / 1e6) * p.pricePerMwh;
    left -= wh;
  }
  return cost;
}

function medianMs(fn: () => unknown): number {
  for (let i = 0; i < Math.min(200, runs); i++) fn(); // warm up the JIT
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}

const plan = planCharging(request);
const baselineMs = medianMs(() => naiveGreedy(periods, request.energyWh, 16 * 230 * 3));
const planMs = medianMs(() => planCharging(request));
console.log(`periods: ${periods.length} quarter-hours (7 days), energy ${request.energyWh / 1000} kWh, ${plan.planned.slots.length} charging slots, meets target: ${plan.meetsTarget}`);
console.log(`planned cost ${plan.planned.cost.expected.toFixed(2)} EUR, immediately ${plan.immediate.cost.expected.toFixed(2)} EUR`);
console.log(`baseline (naive sort-by-price greedy): median ${(baselineMs * 1000).toFixed(1)} µs over ${runs} runs`);
console.log(`planCharging (clipping, limits, cost range, immediate):  median ${(planMs * 1000).toFixed(1)} µs over ${runs} runs`);
console.log(`ratio planCharging / baseline: ${(planMs / baselineMs).toFixed(2)}`);
