// The charging planner on REAL NL day-ahead prices (../shared/data/prices): optimality
// against an independent brute force, negative prices, a 15-minute day, the hourly/15-minute
// switch, DST days, an energy need that cannot be met, the site limit, the minimum current.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PricePeriod } from '../../src/domain.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { addLocalDays, localDayStartMs } from '../../src/prices/timezone.js';
import { planCharging, type Plan, type PlanPeriod, type PlanRequest } from '../../src/planning/plan.js';
import type { ChargerLimits } from '../../src/planning/limits.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const NL = requireMarket('NL');
const HOUR = 3_600_000;
/** 16 A, three phases, 230 V: 11.04 kW. */
const WALLBOX: ChargerLimits = { maxCurrentA: 16, minCurrentA: 6, phases: 3, voltageV: 230 };
const WALLBOX_W = 16 * 230 * 3;

const dayOf = (date: string) => {
  const fromMs = localDayStartMs(NL.timeZone, date);
  return { fromMs, toMs: addLocalDays(NL.timeZone, fromMs, 1) };
};
const published = (p: PricePeriod): PlanPeriod => ({
  startMs: p.startMs,
  durationS: p.durationS,
  pricePerMwh: p.pricePerMwh,
  lowerPerMwh: p.pricePerMwh,
  upperPerMwh: p.pricePerMwh,
  forecast: false,
});

/** Invariants every plan must keep, whatever the input. */
function checkInvariants(req: PlanRequest, plan: Plan): void {
  for (const schedule of [plan.planned, plan.immediate]) {
    let total = 0;
    for (const s of schedule.slots) {
      expect(s.startMs).toBeGreaterThanOrEqual(req.nowMs);
      expect(s.endMs).toBeLessThanOrEqual(req.departureMs);
      expect(s.endMs).toBeGreaterThan(s.startMs);
      expect(s.currentA).toBeLessThanOrEqual(plan.allowedCurrentA + 1e-9);
      expect(s.currentA).toBeGreaterThanOrEqual(req.charger.minCurrentA - 1e-9);
      // The slot's energy is its power over its length.
      expect(s.energyWh).toBeCloseTo((s.powerW * (s.endMs - s.startMs)) / HOUR, 6);
      const period = req.periods.find((p) => p.startMs <= s.startMs && s.endMs <= p.startMs + p.durationS * 1000);
      expect(period, `slot at ${new Date(s.startMs).toISOString()} lies in one priced period`).toBeDefined();
      total += s.energyWh;
    }
    expect(total).toBeCloseTo(schedule.energyWh, 6);
    expect(schedule.energyWh).toBeLessThanOrEqual(req.energyWh + 1e-6);
  }
  expect(plan.immediate.energyWh).toBeCloseTo(plan.planned.energyWh, 6);
  expect(plan.planned.cost.expected).toBeLessThanOrEqual(plan.immediate.cost.expected + 1e-9);
  expect(plan.shortfallWh).toBeCloseTo(req.energyWh - plan.planned.energyWh, 6);
}

/**
 * The cheapest cost by exhaustive dynamic programming over whole units: every way of putting
 * 0..n units into each window (a window of n units), keeping those that sum to the need. It
 * never sorts by price, so it does not share the planner's idea. With the windows and the need
 * whole multiples of the unit, the continuous optimum lies on this grid.
 */
function exhaustiveCost(prices: readonly number[], unitsPerWindow: readonly number[], needUnits: number, unitWh: number): number {
  // best[u] = cheapest cost of u units in the windows seen so far.
  let best = Array.from({ length: needUnits + 1 }, (_, u) => (u === 0 ? 0 : Infinity));
  prices.forEach((price, i) => {
    const next = best.map(() => Infinity);
    for (let u = 0; u <= needUnits; u++) {
      if (best[u] === Infinity) continue;
      for (let k = 0; k <= unitsPerWindow[i] && u + k <= needUnits; k++) next[u + k] = Math.min(next[u + k], best[u] + (k * unitWh * price) / 1e6);
    }
    best = next;
  });
  return best[needUnits];
}

/** A deterministic PRNG (mulberry32), so the sampled cases are the same on every run. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.skipIf(!hasSharedData)(`planning on real NL 2025 prices${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let native: PricePeriod[];
  let periods: PlanPeriod[];
  beforeAll(() => {
    native = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), NL).periods;
    periods = native.map(published);
  });
  const between = (fromMs: number, toMs: number) => periods.filter((p) => p.startMs < toMs && p.startMs + p.durationS * 1000 > fromMs);

  it('finds the optimum an exhaustive search finds, on 60 sampled real windows (hourly, 15-minute and the switch between)', () => {
    const random = prng(13);
    // Quarter-hour units at 8 A on one phase keep the search small; now falls on a quarter-hour inside a period.
    const charger: ChargerLimits = { maxCurrentA: 8, minCurrentA: 0, phases: 1, voltageV: 230 };
    const unitWh = (8 * 230 * 900_000) / HOUR;
    const starts = [Date.UTC(2025, 4, 10, 6), Date.UTC(2025, 8, 30, 19), Date.UTC(2025, 10, 12, 8), Date.UTC(2025, 0, 20, 12)];
    let cases = 0;
    for (let c = 0; c < 60; c++) {
      const base = starts[c % starts.length] + Math.floor(random() * 40) * HOUR;
      const nowMs = base + Math.floor(random() * 4) * 900_000;
      const departureMs = nowMs + (3 + Math.floor(random() * 3)) * HOUR + Math.floor(random() * 4) * 900_000;
      const windows = between(nowMs, departureMs);
      const units = windows.map((p) => Math.round((Math.min(p.startMs + p.durationS * 1000, departureMs) - Math.max(p.startMs, nowMs)) / 900_000));
      const capacity = units.reduce((a, b) => a + b, 0);
      const needUnits = 1 + Math.floor(random() * (capacity - 1));
      const req: PlanRequest = { nowMs, departureMs, energyWh: needUnits * unitWh, charger, periods: between(nowMs - 2 * HOUR, departureMs + 2 * HOUR) };
      const plan = planCharging(req);
      checkInvariants(req, plan);
      expect(plan.meetsTarget).toBe(true);
      const best = exhaustiveCost(windows.map((p) => p.pricePerMwh), units, needUnits, unitWh);
      expect(plan.planned.cost.expected).toBeCloseTo(best, 9);
      cases++;
    }
    expect(cases).toBe(60);
  });

  it('mixes hourly and 15-minute periods across the switch (2025-09-30 22:00Z) and still finds the optimum', () => {
    const charger: ChargerLimits = { maxCurrentA: 8, minCurrentA: 0, phases: 1, voltageV: 230 };
    const unitWh = (8 * 230 * 900_000) / HOUR;
    for (const [nowIso, hours, needUnits] of [['2025-09-30T19:30:00Z', 5, 7], ['2025-09-30T20:45:00Z', 4, 10], ['2025-09-30T21:15:00Z', 3, 3]] as const) {
      const nowMs = Date.parse(nowIso);
      const departureMs = nowMs + hours * HOUR;
      const windows = between(nowMs, departureMs);
      expect(new Set(windows.map((p) => p.durationS))).toEqual(new Set([3600, 900]));
      const units = windows.map((p) => Math.round((Math.min(p.startMs + p.durationS * 1000, departureMs) - Math.max(p.startMs, nowMs)) / 900_000));
      const req: PlanRequest = { nowMs, departureMs, energyWh: needUnits * unitWh, charger, periods: windows };
      const plan = planCharging(req);
      checkInvariants(req, plan);
      expect(plan.planned.cost.expected).toBeCloseTo(exhaustiveCost(windows.map((p) => p.pricePerMwh), units, needUnits, unitWh), 9);
    }
  });

  it('charges at the full current where prices are negative, never past the energy needed (2025-05-11)', () => {
    const d = dayOf('2025-05-11');
    const day = between(d.fromMs, d.toMs);
    const negative = day.filter((p) => p.pricePerMwh < 0);
    expect(negative.length).toBeGreaterThan(3);
    // Less than the negative hours can take: all of it goes there, and no more.
    const small = planCharging({ nowMs: d.fromMs, departureMs: d.toMs, energyWh: 20_000, charger: WALLBOX, periods: day });
    checkInvariants({ nowMs: d.fromMs, departureMs: d.toMs, energyWh: 20_000, charger: WALLBOX, periods: day }, small);
    expect(small.planned.energyWh).toBeCloseTo(20_000, 6);
    expect(small.planned.slots.every((s) => s.pricePerMwh < 0)).toBe(true);
    expect(small.planned.cost.expected).toBeLessThan(0);
    // The cheapest hour (-350 EUR/MWh at 13:00 local) is charged at the full 16 A.
    const cheapest = small.planned.slots.find((s) => s.pricePerMwh === -350);
    expect(cheapest?.currentA).toBe(16);
    // More than they can take: every negative hour at the full current, the rest in the cheapest others.
    const big = planCharging({ nowMs: d.fromMs, departureMs: d.toMs, energyWh: (negative.length + 2) * WALLBOX_W, charger: WALLBOX, periods: day });
    for (const p of negative) expect(big.planned.slots.find((s) => s.startMs === p.startMs)?.currentA).toBe(16);
    expect(big.meetsTarget).toBe(true);
    expect(big.planned.energyWh).toBeCloseTo((negative.length + 2) * WALLBOX_W, 6);
  });

  it('plans a 15-minute day: the charged quarter-hours are never dearer than an uncharged one (2025-11-12)', () => {
    const d = dayOf('2025-11-12');
    const day = between(d.fromMs, d.toMs);
    expect(day).toHaveLength(96);
    expect(day.every((p) => p.durationS === 900)).toBe(true);
    const req: PlanRequest = { nowMs: d.fromMs + 7 * HOUR + 10 * 60_000, departureMs: d.fromMs + 22 * HOUR, energyWh: 30_000, charger: WALLBOX, periods: day };
    const plan = planCharging(req);
    checkInvariants(req, plan);
    expect(plan.meetsTarget).toBe(true);
    const charged = new Set(plan.planned.slots.map((s) => Math.floor(s.startMs / 900_000)));
    const open = day.filter((p) => p.startMs + 900_000 > req.nowMs && p.startMs < req.departureMs);
    const maxCharged = Math.max(...open.filter((p) => charged.has(Math.floor(p.startMs / 900_000))).map((p) => p.pricePerMwh));
    const minUncharged = Math.min(...open.filter((p) => !charged.has(Math.floor(p.startMs / 900_000))).map((p) => p.pricePerMwh));
    expect(maxCharged).toBeLessThanOrEqual(minUncharged);
    // 30 kWh at 11.04 kW is 2.72 hours: 10 full quarter-hours and one part (or the partial first one).
    expect(plan.planned.slots.filter((s) => s.currentA === 16).length).toBeGreaterThanOrEqual(10);
  });

  it('starts inside the current period: only its remaining minutes count', () => {
    const nowMs = Date.UTC(2025, 4, 11, 11, 40); // 20 minutes left of the -350 hour
    const req: PlanRequest = { nowMs, departureMs: nowMs + 12 * HOUR, energyWh: 2_000, charger: WALLBOX, periods: between(nowMs - HOUR, nowMs + 13 * HOUR) };
    const plan = planCharging(req);
    checkInvariants(req, plan);
    const first = plan.planned.slots.find((s) => s.pricePerMwh === -350)!;
    expect(first.startMs).toBe(nowMs);
    expect(first.energyWh).toBeCloseTo(Math.min(2_000, WALLBOX_W / 3), 6);
    expect(plan.immediate.slots[0].startMs).toBe(nowMs);
  });

  it('counts 23 hours on the spring DST day and 24 priced of 25 on the autumn day (UTC instants)', () => {
    const spring = dayOf('2025-03-30');
    expect(spring.toMs - spring.fromMs).toBe(23 * HOUR);
    const springReq: PlanRequest = { nowMs: spring.fromMs, departureMs: spring.toMs, energyWh: 300_000, charger: WALLBOX, periods: between(spring.fromMs, spring.toMs) };
    const springPlan = planCharging(springReq);
    checkInvariants(springReq, springPlan);
    expect(springPlan.planned.energyWh).toBeCloseTo(23 * WALLBOX_W, 6);
    expect(springPlan.planned.slots).toHaveLength(23);

    const autumn = dayOf('2025-10-26');
    expect(autumn.toMs - autumn.fromMs).toBe(25 * HOUR);
    const autumnPeriods = between(autumn.fromMs, autumn.toMs);
    expect(autumnPeriods).toHaveLength(96); // the file has no price for 01:00-02:00Z
    const autumnReq: PlanRequest = { nowMs: autumn.fromMs, departureMs: autumn.toMs, energyWh: 300_000, charger: WALLBOX, periods: autumnPeriods };
    const autumnPlan = planCharging(autumnReq);
    checkInvariants(autumnReq, autumnPlan);
    expect(autumnPlan.planned.energyWh).toBeCloseTo(24 * WALLBOX_W, 6);
    const gap = { fromMs: Date.UTC(2025, 9, 26, 1), toMs: Date.UTC(2025, 9, 26, 2) };
    expect(autumnPlan.planned.slots.some((s) => s.startMs < gap.toMs && s.endMs > gap.fromMs)).toBe(false);
    expect(autumnPlan.meetsTarget).toBe(false);
    expect(autumnPlan.shortfallReason).toBe('not-enough-time');
  });

  it('charges as much as possible when the need cannot be met, and says why', () => {
    const nowMs = Date.UTC(2025, 10, 12, 16);
    const req: PlanRequest = { nowMs, departureMs: nowMs + 2 * HOUR, energyWh: 50_000, charger: WALLBOX, periods: between(nowMs, nowMs + 4 * HOUR) };
    const plan = planCharging(req);
    checkInvariants(req, plan);
    expect(plan.meetsTarget).toBe(false);
    expect(plan.planned.energyWh).toBeCloseTo(2 * WALLBOX_W, 6);
    expect(plan.shortfallWh).toBeCloseTo(50_000 - 2 * WALLBOX_W, 6);
    expect(plan.shortfallReason).toBe('not-enough-time');
    expect(plan.planned.slots.every((s) => s.currentA === 16)).toBe(true);
    // Everything must be charged, so the plan is charging immediately.
    expect(plan.planned.cost.expected).toBeCloseTo(plan.immediate.cost.expected, 9);

    const last = native[native.length - 1];
    const endMs = last.startMs + last.durationS * 1000;
    const beyond = planCharging({ nowMs: endMs - HOUR, departureMs: endMs + 10 * HOUR, energyWh: 50_000, charger: WALLBOX, periods: between(endMs - 2 * HOUR, endMs) });
    expect(beyond.shortfallReason).toBe('prices-end-before-departure');
    expect(beyond.planned.energyWh).toBeCloseTo(WALLBOX_W, 6);
  });

  it('keeps to the site limit less the other load, and stops below the minimum current', () => {
    const d = dayOf('2025-11-12');
    const big: ChargerLimits = { maxCurrentA: 32, minCurrentA: 6, phases: 3, voltageV: 230 };
    const req: PlanRequest = { nowMs: d.fromMs, departureMs: d.toMs, energyWh: 40_000, charger: big, site: { limitA: 25, otherLoadA: 10 }, periods: between(d.fromMs, d.toMs) };
    const plan = planCharging(req);
    checkInvariants(req, plan);
    expect(plan.allowedCurrentA).toBe(15);
    expect(Math.max(...plan.planned.slots.map((s) => s.currentA))).toBe(15);
    const unlimited = planCharging({ ...req, site: undefined });
    // Less power per quarter-hour means dearer quarter-hours are needed.
    expect(plan.planned.cost.expected).toBeGreaterThan(unlimited.planned.cost.expected);
    const blocked = planCharging({ ...req, site: { limitA: 25, otherLoadA: 21 } });
    expect(blocked.planned.slots).toHaveLength(0);
    expect(blocked.shortfallReason).toBe('no-current-available');
  });

  it('uses the minimum current for part of a period rather than less than the minimum', () => {
    const nowMs = Date.UTC(2025, 4, 11, 11);
    const req: PlanRequest = { nowMs, departureMs: nowMs + HOUR, energyWh: 1_000, charger: WALLBOX, periods: between(nowMs, nowMs + HOUR) };
    const plan = planCharging(req);
    checkInvariants(req, plan);
    const [slot] = plan.planned.slots;
    expect(slot.currentA).toBe(6);
    // 1 kWh at 6 A x 3 x 230 V = 4.14 kW takes 14.49 minutes.
    expect(slot.endMs - slot.startMs).toBeCloseTo((1_000 / (6 * 230 * 3)) * HOUR, 0);
  });

  it('prices the plan at the forecast bounds and breaks ties toward the earlier period', () => {
    const nowMs = Date.UTC(2025, 10, 12, 0);
    // The real prices as the expected values, with bounds 20 % of the price's size either side.
    const withBounds = between(nowMs, nowMs + 6 * HOUR).map((p) => ({ ...p, forecast: true, lowerPerMwh: p.pricePerMwh - Math.abs(p.pricePerMwh) * 0.2, upperPerMwh: p.pricePerMwh + Math.abs(p.pricePerMwh) * 0.2 }));
    const plan = planCharging({ nowMs, departureMs: nowMs + 6 * HOUR, energyWh: 10_000, charger: WALLBOX, periods: withBounds });
    const { expected, lower, upper } = plan.planned.cost;
    expect(lower).toBeLessThan(expected);
    expect(upper).toBeGreaterThan(expected);
    const sum = (f: (s: (typeof plan.planned.slots)[number]) => number) => plan.planned.slots.reduce((a, s) => a + (s.energyWh / 1e6) * f(s), 0);
    expect(lower).toBeCloseTo(sum((s) => s.lowerPerMwh), 9);
    expect(upper).toBeCloseTo(sum((s) => s.upperPerMwh), 9);
    // Every period at one real price: the earliest are chosen.
    const flat = withBounds.map((p) => ({ ...p, pricePerMwh: withBounds[3].pricePerMwh }));
    const tie = planCharging({ nowMs, departureMs: nowMs + 6 * HOUR, energyWh: WALLBOX_W, charger: WALLBOX, periods: flat });
    expect(tie.planned.slots.map((s) => s.startMs)).toEqual([0, 1, 2, 3].map((i) => nowMs + i * 900_000));
  });

  it('refuses overlapping periods and values that are not numbers', () => {
    const p = periods.find((x) => x.durationS === 3600)!;
    const base: PlanRequest = { nowMs: p.startMs, departureMs: p.startMs + HOUR, energyWh: 1_000, charger: WALLBOX, periods: [p, { ...p, startMs: p.startMs + 900_000 }] };
    expect(() => planCharging(base)).toThrow(/overlap/);
    expect(() => planCharging({ ...base, periods: [p], energyWh: Number.NaN })).toThrow(/energyWh/);
  });
});

