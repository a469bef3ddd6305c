import { describe, expect, it } from 'vitest';
import type { MeterStatus } from '../../src/domain.js';
import { currentHealth, currentLiveness } from '../../src/ops/observability/current-health.js';
import { assessHealth, combineHealth, healthHttpStatus, type HealthInputs } from '../../src/ops/observability/health.js';
import { Liveness } from '../../src/ops/systemd/liveness.js';
import type { Module } from '../../src/lifecycle.js';
import { Probes } from '../../src/ops/observability/probes.js';
import type { ModuleViews } from '../../src/ops/observability/views.js';

/** A module that only shows views (what the status readers see of it). */
const showing = (name: string, views: ModuleViews): Module => ({ name, start: async () => {}, stop: async () => {}, views });

const meter = (state: MeterStatus['state'], unitId = 1): MeterStatus => ({
  resourceId: `0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a${String(unitId).padStart(2, '0')}`,
  bus: 'rs485',
  unitId,
  profile: 'sdm630',
  state,
  lastAnsweredAtMs: null,
  lastSample: null,
  consecutiveMisses: state === 'offline' ? 3 : 0,
});

const healthy: HealthInputs = {
  nowMs: Date.parse('2026-11-23T10:00:00Z'),
  liveness: { alive: true, loops: [{ loop: 'poll', silentForMs: 1000, maxSilenceMs: 30_000 }], stale: [] },
  meters: [meter('online', 1), meter('online', 2)],
  uplink: { state: 'connected', broker: 'mqtts://b:8883', outboxDepth: 0, oldestAgeMs: null, lastPublishedAtMs: null, lastError: null, outboxFull: false },
  clock: { trusted: true, plausible: true, reason: 'ntp', heldSamples: 0 },
  prices: [{ region: 'NL', lastEndMs: Date.parse('2026-11-24T23:00:00Z'), coversNow: true }],
  maxOutboxAgeMs: 300_000,
};

const codes = (h: ReturnType<typeof assessHealth>) => [healthHttpStatus(h, 'combined'), healthHttpStatus(h, 'ready'), healthHttpStatus(h, 'live')];

describe('health', () => {
  it('is ok, live and ready when every part works', () => {
    const h = assessHealth(healthy);
    expect(h).toMatchObject({ status: 'ok', live: true, ready: true, reasons: [] });
    expect(codes(h)).toEqual([200, 200, 200]);
  });

  it('stays ready but degraded with one of two meters offline or a backlog', () => {
    const h = assessHealth({ ...healthy, meters: [meter('online', 1), meter('offline', 2)] });
    expect(h).toMatchObject({ status: 'degraded', ready: true });
    expect(h.reasons).toEqual(['meters: 1 of 2 meter(s) offline: rs485/2']);
    const b = assessHealth({ ...healthy, uplink: { ...healthy.uplink!, outboxDepth: 90, oldestAgeMs: 900_000 } });
    expect(b.reasons).toEqual(['broker: connected but backed up, 90 message(s) waiting, oldest 900 s']);
    expect(codes(b)).toEqual([200, 200, 200]);
  });

  it('is degraded, live and ready while the broker is away and the outbox buffers (the designed mode)', () => {
    const h = assessHealth({ ...healthy, uplink: { ...healthy.uplink!, state: 'disconnected', lastError: 'ECONNREFUSED', outboxDepth: 12, oldestAgeMs: 60_000 } });
    expect(h).toMatchObject({
      status: 'degraded',
      live: true,
      ready: true,
      reasons: ['broker: broker disconnected (ECONNREFUSED); buffering in the outbox, 12 message(s) waiting, oldest 60 s'],
      components: { broker: { status: 'degraded' } },
    });
    expect(codes(h)).toEqual([200, 200, 200]);
  });

  it('is down (503, still live) once the full outbox drops messages', () => {
    const h = assessHealth({ ...healthy, uplink: { ...healthy.uplink!, state: 'connecting', outboxDepth: 100_000, oldestAgeMs: 7_200_000, outboxFull: true } });
    expect(h).toMatchObject({ status: 'down', live: true, ready: false });
    expect(h.reasons[0]).toMatch(/^broker: broker connecting; outbox full .*dropping the oldest messages; 100000 message\(s\) waiting, oldest 7200 s$/);
    expect(codes(h)).toEqual([503, 503, 200]);
  });

  it('is down with all meters offline or an implausible clock; degraded while a plausible clock waits or with no current price', () => {
    expect(assessHealth({ ...healthy, meters: [meter('offline')] })).toMatchObject({ status: 'down', ready: false, live: true });
    const before = assessHealth({ ...healthy, clock: { trusted: false, plausible: false, reason: 'wall clock 2020-01-01T00:00:00.000Z is before the build date', heldSamples: 6, fix: 'set the right time' } });
    expect(before).toMatchObject({ ready: false, reasons: ['clock: clock not trusted: wall clock 2020-01-01T00:00:00.000Z is before the build date; 6 sample(s) held, nothing is published until then; to end it: set the right time'] });
    // plausible but not confirmed by NTP yet: readings are held, the rest works
    expect(assessHealth({ ...healthy, clock: { trusted: false, plausible: true, reason: 'waiting for NTP synchronization', heldSamples: 6 } })).toMatchObject({ ready: true, status: 'degraded' });
    expect(assessHealth({ ...healthy, prices: [{ region: 'NL', lastEndMs: Date.parse('2025-12-31T23:00:00Z'), coversNow: false }] })).toMatchObject({
      status: 'degraded',
      ready: true,
      reasons: ['prices: no current price for NL (stored until 2025-12-31T23:00:00.000Z)'],
    });
  });

  it('is not live when a loop stalls', () => {
    const h = assessHealth({ ...healthy, liveness: { alive: false, loops: [], stale: [{ loop: 'publish', silentForMs: 95_000, maxSilenceMs: 60_000 }] } });
    expect(h).toMatchObject({ live: false, ready: false, status: 'down' });
    expect(h.reasons).toEqual(['loops: publish loop silent for 95 s']);
    expect(codes(h)).toEqual([503, 503, 503]);
  });

  it('treats parts that are not running as disabled, not as failures', () => {
    expect(assessHealth({ ...healthy, meters: null, uplink: null, clock: null, prices: null, liveness: { alive: true, loops: [], stale: [] } })).toMatchObject({ status: 'ok', ready: true });
  });

  it('combines contributed components by the same rule, down reasons first', () => {
    const h = assessHealth({
      ...healthy,
      meters: [meter('online', 1), meter('offline', 2)],
      contributed: { store: { status: 'down', reason: 'disk full' }, forecast: { status: 'ok', reason: 'forecast until D+7' } },
    });
    expect(h).toMatchObject({ status: 'down', ready: false, live: true });
    expect(h.reasons).toEqual(['store: disk full', 'meters: 1 of 2 meter(s) offline: rs485/2']);
    expect(combineHealth({ a: { status: 'disabled', reason: 'off' }, b: { status: 'ok', reason: 'fine' } })).toMatchObject({ status: 'ok', live: true, ready: true, reasons: [] });
  });
});

describe('current health from the module views', () => {
  const deps = () => {
    const probes = new Probes();
    const liveness = new Liveness(() => 0);
    return { probes, liveness, clock: { now: () => Date.parse('2026-11-23T10:00:00Z') } };
  };

  it("takes the components modules judge themselves (Module.views.health) and combines them by the same rule", () => {
    const d = deps();
    const store = showing('recorder', { health: { store: () => ({ status: 'degraded', reason: 'cannot write (SQLITE_FULL)' }) } });
    d.probes.observe([store]);
    expect(currentHealth(d)).toMatchObject({ status: 'degraded', ready: true, reasons: ['store: cannot write (SQLITE_FULL)'] });
    d.probes.observe([store, showing('forecast', { health: { forecast: () => ({ status: 'down', reason: 'no forecast for 2026-11-24' }) } })]);
    expect(currentHealth(d)).toMatchObject({ status: 'down', ready: false, live: true, reasons: ['forecast: no forecast for 2026-11-24', 'store: cannot write (SQLITE_FULL)'] });
  });

  it('reports a view that throws as degraded with the error; liveness reads no view at all', () => {
    const d = deps();
    d.probes.observe([
      showing('uplink', {
        uplink: () => {
          throw new Error('SQLITE_IOERR: disk I/O error');
        },
      }),
      showing('recorder', {
        health: {
          store: () => {
            throw new Error('boom');
          },
        },
      }),
    ]);
    expect(currentHealth(d)).toMatchObject({
      status: 'degraded',
      components: { broker: { status: 'degraded', reason: 'cannot be assessed: SQLITE_IOERR: disk I/O error' }, store: { status: 'degraded', reason: 'cannot be assessed: boom' } },
    });
    expect(currentLiveness(d)).toMatchObject({ live: true, status: 'ok', reasons: [] });
  });
});
