import { describe, expect, it } from 'vitest';
import { compareSchedules } from '../../src/ocpp/composite-schedule.js';

const planned = { startSchedule: '2025-11-12T12:00:00Z', duration: 7200, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 0 }, { startPeriod: 1800, limit: 16 }, { startPeriod: 3600, limit: 8.5 }] };
const t0 = Date.parse('2025-11-12T12:00:00Z');

describe('a composite schedule against the plan sent', () => {
  it('is equal when the limits agree (within 0.1) at every instant either changes, over the time both cover', () => {
    // The charger reports from 12:10 for an hour, periods relative to that start, a limit rounded differently.
    const composite = { startSchedule: '2025-11-12T12:10:00Z', duration: 3600, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 0 }, { startPeriod: 1200, limit: 16 }, { startPeriod: 3000, limit: 8.45 }] };
    expect(compareSchedules(composite, t0 + 600_000, planned)).toEqual({ comparable: true, equal: true, fromMs: t0 + 600_000, toMs: t0 + 4_200_000, differences: [] });
  });

  it('names each instant where they differ, and does not compare other units', () => {
    const composite = { duration: 7200, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 0 }, { startPeriod: 2400, limit: 16 }, { startPeriod: 3600, limit: 8.5 }] };
    const r = compareSchedules(composite, t0, planned);
    expect(r).toMatchObject({ comparable: true, equal: false, differences: [{ atMs: t0 + 1_800_000, compositeLimit: 0, plannedLimit: 16 }] });
    expect(compareSchedules({ ...composite, chargingRateUnit: 'W' }, t0, planned)).toMatchObject({ comparable: false });
  });
});
