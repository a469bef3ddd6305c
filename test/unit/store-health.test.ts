import { describe, expect, it } from 'vitest';
import { assessHealth, type HealthInputs } from '../../src/ops/observability/health.js';
import { storeHealth } from '../../src/ops/observability/store-health.js';

const healthy: HealthInputs = {
  nowMs: Date.parse('2026-11-23T10:00:00Z'),
  liveness: { alive: true, loops: [], stale: [] },
  meters: null,
  uplink: null,
  clock: null,
  prices: null,
  maxOutboxAgeMs: 300_000,
};
const refusing = { writable: false, reason: 'SQLITE_FULL: database or disk is full', failingSinceMs: Date.parse('2026-11-23T09:58:00Z'), pendingWrites: 12, maxPendingWrites: 5000, pendingDroppedTotal: 0 };

describe('store health', () => {
  it('is degraded with the reason while readings wait in memory; the gateway stays ready', () => {
    expect(assessHealth({ ...healthy, contributed: { store: storeHealth(refusing) } })).toMatchObject({
      status: 'degraded',
      ready: true,
      reasons: ['store: cannot write (SQLITE_FULL: database or disk is full) since 2026-11-23T09:58:00.000Z; 12 of at most 5000 write(s) waiting in memory'],
    });
  });

  it('is down once the queue is full (every new reading drops the oldest), ok again when writes go through', () => {
    const full = storeHealth({ ...refusing, pendingWrites: 5000, pendingDroppedTotal: 7 });
    expect(full).toEqual({
      status: 'down',
      reason: 'cannot write (SQLITE_FULL: database or disk is full) since 2026-11-23T09:58:00.000Z; queue full, dropping the oldest readings; 5000 of at most 5000 write(s) waiting in memory; 7 dropped since start (queue full)',
    });
    expect(assessHealth({ ...healthy, contributed: { store: full } })).toMatchObject({ status: 'down', ready: false, live: true });
    expect(storeHealth({ ...refusing, writable: true, reason: null, failingSinceMs: null, pendingWrites: 0, pendingDroppedTotal: 7 })).toEqual({ status: 'ok', reason: 'writes ok; 7 dropped since start (queue full)' });
  });
});
