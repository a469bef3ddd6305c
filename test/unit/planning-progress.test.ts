// Following a plan (src/planning/progress.ts): is a session behind so that the rest of its
// schedule cannot deliver what remains? On the worked example of docs/planning.md (REAL NL
// prices of Sunday 2025-05-11: plugged in at 06:20Z, leaving at 16:00Z, 30 kWh from a 16 A
// three-phase wallbox), with the schedule the charger is sent (src/ocpp/charging-profile.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chargingProfileRequest, scheduleSegments } from '../../src/ocpp/charging-profile.js';
import { planCharging, type PlanPeriod } from '../../src/planning/plan.js';
import { FOLLOW_RULE, followProgress, registerAtWh, scheduledEnergyWh, type ProgressInput } from '../../src/planning/progress.js';
import { requireMarket } from '../../src/prices/markets.js';
import { parsePriceCsv } from '../../src/prices/sources/csv.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';

const at = (iso: string) => Date.parse(iso);
const WALLBOX = { maxCurrentA: 16, minCurrentA: 6, phases: 3, voltageV: 230 };

describe('registerAtWh', () => {
  const readings = [
    { atMs: 0, wh: 1000 },
    { atMs: 3_600_000, wh: 12_040 },
    { atMs: 7_200_000, wh: 12_040 },
  ];
  it('is linear between readings and held flat beyond them', () => {
    expect(registerAtWh(readings, -5)).toBe(1000);
    expect(registerAtWh(readings, 1_800_000)).toBe(6520);
    expect(registerAtWh(readings, 3_600_000)).toBe(12_040);
    expect(registerAtWh(readings, 9_000_000)).toBe(12_040);
    expect(registerAtWh([], 0)).toBeNull();
  });
});

describe.skipIf(!hasSharedData)(`following the worked example's plan${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  const nowMs = at('2025-05-11T06:20:00Z');
  const departureMs = at('2025-05-11T16:00:00Z');
  const periods: PlanPeriod[] = parsePriceCsv(readFileSync(sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'utf8'), requireMarket('NL'))
    .periods.filter((p) => p.startMs >= nowMs - 3_600_000 && p.startMs < departureMs)
    .map((p) => ({ startMs: p.startMs, durationS: p.durationS, pricePerMwh: p.pricePerMwh, lowerPerMwh: p.pricePerMwh, upperPerMwh: p.pricePerMwh, forecast: false }));
  const plan = planCharging({ nowMs, departureMs, energyWh: 30_000, charger: WALLBOX, periods });
  const segments = scheduleSegments(chargingProfileRequest(plan, { connectorId: 1, transactionId: 7, plannedAtMs: nowMs, departureMs }), WALLBOX);
  const base: Omit<ProgressInput, 'deliveredWh' | 'measuredAtMs' | 'nowMs'> = { plannedAtMs: nowMs, segments, departureMs, energyNeededWh: 30_000, deliveredAtPlanWh: 0 };
  /** What the schedule lets the charger deliver by a time: a car that draws all it may. */
  const allowedBy = (iso: string) => scheduledEnergyWh(segments, nowMs, at(iso));

  it('the schedule sent is the plan: 16 A 10:00-12:00, 11.4 A 12:00-13:00 (rounded down from 11.48 A)', () => {
    expect(allowedBy('2025-05-11T10:00:00Z')).toBe(0);
    expect(allowedBy('2025-05-11T12:00:00Z')).toBeCloseTo(22_080, 6);
    expect(scheduledEnergyWh(segments, nowMs, departureMs)).toBeCloseTo(22_080 + 11.4 * 690, 6);
  });

  it('on plan: a car that draws what it may is never behind (except by the rounding, which is below the hysteresis)', () => {
    for (const iso of ['2025-05-11T09:00:00Z', '2025-05-11T10:30:00Z', '2025-05-11T12:00:00Z', '2025-05-11T12:45:00Z']) {
      const p = followProgress({ ...base, deliveredWh: allowedBy(iso), measuredAtMs: at(iso), nowMs: at(iso) });
      expect(p.verdict, iso).toBe('on-plan');
      expect(p.behindWh).toBeCloseTo(0, 6);
    }
    // Rounding 11.48 A down to 11.4 A costs 54 Wh over the 12:00 hour: far less than the 600 Wh threshold (2 % of 30 kWh).
    expect(followProgress({ ...base, deliveredWh: allowedBy('2025-05-11T13:00:00Z'), measuredAtMs: at('2025-05-11T13:00:00Z'), nowMs: at('2025-05-11T13:00:00Z') })).toMatchObject({ verdict: 'on-plan', thresholdWh: 600 });
    expect(30_000 - allowedBy('2025-05-11T13:00:00Z')).toBeCloseTo(54, 6);
  });

  it('a charger that was unavailable 10:00-11:00 is 11.04 kWh behind: the rest cannot deliver it, plan again', () => {
    const p = followProgress({ ...base, deliveredWh: 0, measuredAtMs: at('2025-05-11T11:00:00Z'), nowMs: at('2025-05-11T11:00:00Z') });
    expect(p).toMatchObject({ verdict: 'replan', deliveredWh: 0, remainingWh: 30_000 });
    expect(p.expectedWh).toBeCloseTo(11_040, 6);
    expect(p.behindWh).toBeCloseTo(11_040, 6);
    expect(p.restPlannedWh).toBeCloseTo(11_040 + 7866, 6);
    expect(p.shortfallWh).toBeCloseTo(30_000 - 11_040 - 7866, 6);
    // The rest planned again from 11:00 on the same prices: 13:00 (−109.96) and 09:00 have passed, so
    // 11:00 and 12:00 at 16 A, then 13:00 at the rest — the 30 kWh are still met.
    const again = planCharging({ nowMs: at('2025-05-11T11:00:00Z'), departureMs, energyWh: p.remainingWh, charger: WALLBOX, periods });
    expect(again.meetsTarget).toBe(true);
    expect(again.planned.slots.map((s) => new Date(s.startMs).toISOString().slice(11, 16))).toEqual(['11:00', '12:00', '13:00']);
  });

  it('a car that draws 70 % of its limit falls behind by more than the threshold within the first hour', () => {
    const half = followProgress({ ...base, deliveredWh: 0.7 * allowedBy('2025-05-11T10:15:00Z'), measuredAtMs: at('2025-05-11T10:15:00Z'), nowMs: at('2025-05-11T10:15:00Z') });
    // 15 minutes at 70 %: 828 Wh behind, above the 600 Wh threshold.
    expect(half.behindWh).toBeCloseTo(0.3 * 2760, 6);
    expect(half.verdict).toBe('replan');
    const early = followProgress({ ...base, deliveredWh: 0.7 * allowedBy('2025-05-11T10:05:00Z'), measuredAtMs: at('2025-05-11T10:05:00Z'), nowMs: at('2025-05-11T10:05:00Z') });
    expect(early.behindWh).toBeCloseTo(276, 6);
    expect(early.verdict).toBe('on-plan');
  });

  it('does not plan again sooner than the minimum interval after the plan, unless the charger came back', () => {
    const plannedAtMs = at('2025-05-11T10:00:00Z');
    const input = { ...base, plannedAtMs, deliveredAtPlanWh: 0, deliveredWh: 0, measuredAtMs: at('2025-05-11T10:10:00Z'), nowMs: at('2025-05-11T10:10:00Z') };
    expect(followProgress(input).verdict).toBe('behind-wait');
    expect(followProgress({ ...input, ignoreInterval: true }).verdict).toBe('replan');
    expect(followProgress({ ...input, measuredAtMs: plannedAtMs + FOLLOW_RULE.minReplanIntervalMs, nowMs: plannedAtMs + FOLLOW_RULE.minReplanIntervalMs }).verdict).toBe('replan');
  });

  it('a plan that could not meet the need is behind only by what comes on top of its own shortfall', () => {
    // From 12:00 the rest of the day at 16 A is 4 h × 11.04 kWh = 44 kWh; ask for 50 kWh.
    const from = at('2025-05-11T12:00:00Z');
    const short = planCharging({ nowMs: from, departureMs, energyWh: 50_000, charger: WALLBOX, periods });
    expect(short.meetsTarget).toBe(false);
    const segs = scheduleSegments(chargingProfileRequest(short, { connectorId: 1, transactionId: 7, plannedAtMs: from, departureMs }), WALLBOX);
    const input = { plannedAtMs: from, segments: segs, departureMs, energyNeededWh: 50_000, deliveredAtPlanWh: 0 };
    const full = scheduledEnergyWh(segs, from, at('2025-05-11T13:00:00Z'));
    expect(followProgress({ ...input, deliveredWh: full, measuredAtMs: at('2025-05-11T13:00:00Z'), nowMs: at('2025-05-11T13:00:00Z') }).verdict).toBe('on-plan');
    expect(followProgress({ ...input, deliveredWh: full - 2000, measuredAtMs: at('2025-05-11T13:00:00Z'), nowMs: at('2025-05-11T13:00:00Z') }).verdict).toBe('replan');
  });

  it('nothing to follow once the need is delivered, after departure, or for a reading older than the plan', () => {
    expect(followProgress({ ...base, deliveredWh: 30_000, measuredAtMs: at('2025-05-11T12:30:00Z'), nowMs: at('2025-05-11T12:30:00Z') }).verdict).toBe('done');
    expect(followProgress({ ...base, deliveredWh: 0, measuredAtMs: departureMs, nowMs: departureMs }).verdict).toBe('done');
    expect(followProgress({ ...base, plannedAtMs: at('2025-05-11T11:00:00Z'), deliveredWh: 0, measuredAtMs: at('2025-05-11T10:59:00Z'), nowMs: at('2025-05-11T11:30:00Z') }).verdict).toBe('done');
  });
});
