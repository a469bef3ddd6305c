// A trusted clock that steps beyond clock.step_tolerance_s (issue 14, point 3): nothing is
// deleted; the readings it affects are flagged (real SQLite file), the step is visible in
// /healthz and /metrics, and readings stored later inside its window are flagged as stored.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { validateConfig } from '../../src/config/load.js';
import type { MeterSample } from '../../src/domain.js';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { ClockGuard } from '../../src/ops/clock/clock-guard.js';
import { assessHealth } from '../../src/ops/observability/health.js';
import { ClockStepStore, suspectReadings, suspectWindow } from '../../src/store/clock-steps.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { ReadingsStore } from '../../src/store/readings.js';

const BUILD = Date.parse('2026-01-01T00:00:00Z');
const T0 = Date.parse('2026-11-23T10:00:00Z');
const A = '0b7e3f4c-1d2a-4e5f-8a9b-0c1d2e3f4a5b';
const B = '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f';
const sample = (resourceId: string, sampledAtMs: number, wh: number): MeterSample => ({ resourceId, sampledAtMs, metrics: [{ name: 'active_energy_import', value: wh, unit: 'Wh' }] });

const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function db(): Db {
  const dir = mkdtempSync(join(tmpdir(), 'mg-steps-'));
  dirs.push(dir);
  const handle = openDatabase(join(dir, 'metergate.db'));
  dbs.push(handle);
  return handle;
}

describe('suspect window of a clock step', () => {
  it('covers the interval between the two checks, and for a step back the instants it repeats', () => {
    // Checks at 10:00:00 and (after a step back of 1 h) at 09:00:30 on the new clock.
    expect(suspectWindow(T0, T0 + 30_000 - 3_600_000, -3_600_000)).toEqual({ fromMs: T0 - 3_600_000, toMs: T0 + 30_000 });
    // A step forward of 1 h: only the interval between the checks is ambiguous.
    expect(suspectWindow(T0, T0 + 30_000 + 3_600_000, 3_600_000)).toEqual({ fromMs: T0, toMs: T0 + 3_630_000 });
  });
});

describe('clock steps on a real SQLite file', () => {
  it('flags the stored readings of every resource inside the window, and later ones as they are stored; none is deleted', () => {
    const handle = db();
    const readings = new ReadingsStore(handle);
    for (let i = 0; i < 60; i++) {
      readings.insert(sample(A, T0 + i * 10_000, i));
      readings.insert(sample(B, T0 + i * 10_000, i));
    }
    const steps = new ClockStepStore(handle);
    const flagged = steps.record({ detectedAtMs: T0 + 300_000, stepMs: -120_000, suspectFromMs: T0 + 150_000, suspectToMs: T0 + 300_000 });
    expect(flagged).toBe(2 * 16); // 150 s .. 300 s inclusive at 10 s, per resource
    expect(readings.count()).toBe(120);
    expect(suspectReadings(handle, A, T0, T0 + 600_000)).toEqual({ count: 16, firstMs: T0 + 150_000, lastMs: T0 + 300_000 });
    const a = readings.between(A, T0, T0 + 600_000);
    expect(a.filter((r) => r.clockSuspect).map((r) => r.sampledAtMs)).toEqual([...Array(16).keys()].map((i) => T0 + 150_000 + i * 10_000));
    // Stored after the step, inside its window (the clock went back: these instants repeat).
    readings.insert(sample(A, T0 + 155_000, 1000));
    readings.insert(sample(A, T0 + 305_000, 1001));
    expect(readings.between(A, T0 + 155_000, T0 + 155_000)[0].clockSuspect).toBe(true);
    expect(readings.between(A, T0 + 305_000, T0 + 305_000)[0].clockSuspect).toBe(false);
    expect(steps.flaggedCount()).toBe(33);
    expect(steps.latest()).toEqual({ detectedAtMs: T0 + 300_000, stepMs: -120_000, suspectFromMs: T0 + 150_000, suspectToMs: T0 + 300_000 });
  });
});

describe('ClockGuard: a trusted clock that steps beyond the tolerance', () => {
  function guardWith(handle: Db, toleranceS: number) {
    const wall = { now: T0 };
    const mono = { now: 1_000_000 };
    const metrics = new Registry();
    const config = validateConfig({ organization_id: '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11', data_dir: '/tmp/unused', clock: { trust: 'system', step_tolerance_s: toleranceS } }, 'test', {});
    const logger = createLogger('silent');
    const events = new EventBus(logger);
    const guard = new ClockGuard({
      config,
      logger,
      events,
      clock: { now: () => wall.now },
      metrics,
      monotonicMs: () => mono.now,
      ntpStatus: async () => 'unknown',
      buildDateMs: BUILD,
      db: handle,
    });
    const readings = new ReadingsStore(handle);
    events.on('sample.released', (s) => readings.insert(s));
    /** Time passes on both clocks; `stepMs` moves the wall clock only. */
    const advance = (ms: number, stepMs = 0) => {
      mono.now += ms;
      wall.now += ms + stepMs;
    };
    return { guard, wall, mono, metrics, readings, advance };
  }

  it('flags the readings around a step back of 1 h, keeps every one, and reports it in /healthz and /metrics', async () => {
    const handle = db();
    const g = guardWith(handle, 60);
    await g.guard.start();
    try {
      expect(g.guard.isTrusted).toBe(true);
      // Ten minutes of readings every 10 s; the clock is checked every 30 s.
      for (let i = 0; i < 60; i++) {
        g.guard.submit(sample(A, g.wall.now, i));
        g.advance(10_000);
        if (i % 3 === 2) await g.guard.check();
      }
      expect(g.readings.count()).toBe(60);
      g.readings.insert(sample(A, T0 - 7_200_000, -1)); // an older reading, outside any window
      // NTP steps the clock back by an hour between two checks.
      g.advance(15_000, -3_600_000);
      g.guard.submit(sample(A, g.wall.now, 1000));
      g.advance(15_000);
      await g.guard.check();
      expect(g.readings.count()).toBe(62); // nothing deleted
      const view = g.guard.view();
      expect(view.trusted).toBe(true);
      expect(view.stepWarning).toMatch(/^the trusted clock stepped back by 3600 s at .*; \d+ reading\(s\) flagged clock_suspect/);
      const health = assessHealth({ nowMs: g.wall.now, liveness: { alive: true, loops: [], stale: [] }, meters: null, uplink: null, clock: view, prices: null, maxOutboxAgeMs: 300_000 });
      expect(health.components.clock.status).toBe('degraded');
      // The window: from an hour before the last check before the step (instants the new
      // clock will stamp again) to an hour after its detection.
      expect(view.stepWarning).toContain('(sampled 2026-11-23T09:10:00.000Z .. 2026-11-23T10:10:30.000Z are not priced)');
      const all = g.readings.between(A, 0, Number.MAX_SAFE_INTEGER);
      expect(all.filter((r) => r.clockSuspect)).toHaveLength(61);
      expect(all.find((r) => r.sampledAtMs === T0 - 7_200_000)?.clockSuspect).toBe(false); // older than the window
      // Readings taken in the hour after the step repeat those instants: flagged as stored.
      g.advance(10_000);
      g.guard.submit(sample(A, g.wall.now, 1001));
      expect(g.readings.between(A, g.wall.now, g.wall.now)[0].clockSuspect).toBe(true);
      const m = await g.metrics.metrics();
      expect(m).toMatch(/metergate_clock_steps_beyond_tolerance_total 1/);
      expect(m).toMatch(/metergate_readings_clock_suspect 62/);
    } finally {
      await g.guard.stop();
    }
  });

  it('lets a step within the tolerance pass without flags', async () => {
    const handle = db();
    const g = guardWith(handle, 60);
    await g.guard.start();
    try {
      g.guard.submit(sample(B, g.wall.now, 1));
      g.advance(30_000, -20_000);
      await g.guard.check();
      g.guard.submit(sample(B, g.wall.now, 2));
      expect(g.guard.view().stepWarning).toBeNull();
      expect(g.readings.between(B, 0, Number.MAX_SAFE_INTEGER).map((r) => r.clockSuspect)).toEqual([false, false]);
      expect(await g.metrics.getSingleMetricAsString('metergate_clock_steps_beyond_tolerance_total')).toMatch(/ 0$/m);
    } finally {
      await g.guard.stop();
    }
  });
});
