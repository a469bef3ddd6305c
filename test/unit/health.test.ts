import { describe, expect, it } from 'vitest';
import type { MeterStatus } from '../../src/domain.js';
import { assessHealth, type HealthInputs } from '../../src/ops/health.js';

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
  uplink: { state: 'connected', broker: 'mqtts://b:8883', outboxDepth: 0, oldestAgeMs: null, lastPublishedAtMs: null, lastError: null },
  clock: { trusted: true, plausible: true, reason: 'ntp', heldSamples: 0 },
  prices: [{ region: 'NL', lastEndMs: Date.parse('2026-11-24T23:00:00Z'), coversNow: true }],
  maxOutboxAgeMs: 300_000,
};

describe('health', () => {
  it('is ok, live and ready when every part works', () => {
    expect(assessHealth(healthy)).toMatchObject({ status: 'ok', live: true, ready: true, reasons: [] });
  });

  it('stays ready but degraded with one of two meters offline or a backlog', () => {
    const h = assessHealth({ ...healthy, meters: [meter('online', 1), meter('offline', 2)] });
    expect(h).toMatchObject({ status: 'degraded', ready: true });
    expect(h.reasons).toEqual(['meters: 1 of 2 meter(s) offline: rs485/2']);
    const b = assessHealth({ ...healthy, uplink: { ...healthy.uplink!, outboxDepth: 90, oldestAgeMs: 900_000 } });
    expect(b.reasons).toEqual(['broker: connected but backed up, 90 message(s) waiting, oldest 900 s']);
  });

  it('is not ready with the broker down, all meters offline, the clock untrusted or no current price', () => {
    expect(assessHealth({ ...healthy, uplink: { ...healthy.uplink!, state: 'disconnected', lastError: 'ECONNREFUSED', outboxDepth: 12, oldestAgeMs: 60_000 } })).toMatchObject({
      ready: false,
      reasons: ['broker: broker disconnected (ECONNREFUSED), 12 message(s) waiting, oldest 60 s'],
    });
    expect(assessHealth({ ...healthy, meters: [meter('offline')] }).ready).toBe(false);
    const before = assessHealth({ ...healthy, clock: { trusted: false, plausible: false, reason: 'wall clock 2020-01-01T00:00:00.000Z is before the build date', heldSamples: 6 } });
    expect(before).toMatchObject({ ready: false, reasons: ['clock: clock not trusted: wall clock 2020-01-01T00:00:00.000Z is before the build date; 6 sample(s) held'] });
    // plausible but not confirmed by NTP yet: readings are held, the rest works
    expect(assessHealth({ ...healthy, clock: { trusted: false, plausible: true, reason: 'waiting for NTP synchronization', heldSamples: 6 } })).toMatchObject({ ready: true, status: 'degraded' });
    expect(assessHealth({ ...healthy, prices: [{ region: 'NL', lastEndMs: null, coversNow: false }] }).ready).toBe(false);
  });

  it('is not live when a loop stalls', () => {
    const h = assessHealth({ ...healthy, liveness: { alive: false, loops: [], stale: [{ loop: 'publish', silentForMs: 95_000, maxSilenceMs: 60_000 }] } });
    expect(h).toMatchObject({ live: false, ready: false, status: 'down' });
    expect(h.reasons).toEqual(['loops: publish loop silent for 95 s']);
  });

  it('treats parts that are not running as disabled, not as failures', () => {
    expect(assessHealth({ ...healthy, meters: null, uplink: null, clock: null, prices: null, liveness: { alive: true, loops: [], stale: [] } })).toMatchObject({ status: 'ok', ready: true });
  });
});
