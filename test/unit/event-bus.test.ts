// The event bus (src/events.ts) and the daemon's wiring of it: listeners run synchronously in
// subscription order, a throwing listener is logged and the others still run, unsubscribing
// works; buildModules subscribes a listener to every event a module of the gateway emits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { buildModules, createContext } from '../../src/daemon.js';
import type { MeterSample } from '../../src/domain.js';
import { EventBus, type EventName } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { openDatabase } from '../../src/store/db.js';

const ORG = '3f1c1e9e-8d8a-4c43-9a55-1d2f0a7b6c11';
const sample: MeterSample = { resourceId: '0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b', sampledAtMs: Date.parse('2026-11-23T10:00:00Z'), metrics: [{ name: 'total_active_power', value: 1200, unit: 'W' }] };

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

describe('EventBus', () => {
  it('runs listeners before emit returns, in subscription order; a throwing one is logged and the rest still run', () => {
    const { logger, lines } = capturingLogger();
    const bus = new EventBus(logger);
    const heard: string[] = [];
    bus.on('sample.taken', (s) => heard.push(`first ${s.metrics[0].value}`));
    bus.on('sample.taken', () => {
      throw new Error('listener broke');
    });
    bus.on('sample.taken', () => heard.push('third'));
    bus.on('sample.stored', () => heard.push('other event'));
    bus.emit('sample.taken', sample);
    expect(heard).toEqual(['first 1200', 'third']);
    expect(lines).toMatchObject([{ level: 'error', event: 'sample.taken', msg: 'event listener failed', err: { message: 'listener broke' } }]);
  });

  it('stops calling a listener once unsubscribed; an event without listeners is a no-op', () => {
    const bus = new EventBus(createLogger('silent'));
    const counts: number[] = [];
    const off = bus.on('outbox.evicted', ({ count }) => counts.push(count));
    bus.emit('outbox.evicted', { count: 3 });
    off();
    bus.emit('outbox.evicted', { count: 4 });
    bus.emit('network.changed', { interfaces: [], modbus: [] });
    expect(counts).toEqual([3]);
    expect(bus.listenerCount('outbox.evicted')).toBe(0);
  });
});

describe('the daemon wiring (buildModules)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('subscribes a listener to every event the gateway emits, and nothing before it is built', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-bus-'));
    dirs.push(dir);
    const config = validateConfig(
      {
        organization_id: ORG,
        data_dir: dir,
        mqtt: { url: 'mqtts://broker.invalid:8883' },
        buses: [{ name: 'rs485', type: 'rtu', port: '/dev/ttyUSB-none' }],
        meters: [{ resource_id: sample.resourceId, bus: 'rs485', unit_id: 1, profile: 'sdm630' }],
        prices: { regions: ['NL'] },
      },
      'test',
      {},
    );
    const ctx = createContext(config, { db: openDatabase(join(dir, 'metergate.db')), logger: createLogger('silent') });
    const wired: EventName[] = ['sample.taken', 'sample.released', 'poll.tick-done', 'meter.state-changed', 'sample.stored', 'outbox.evicted', 'network.changed', 'prices.updated', 'exogenous.updated'];
    expect(wired.map((e) => ctx.events.listenerCount(e))).toEqual(wired.map(() => 0));
    buildModules(ctx);
    // prices.updated is heard by two halves (src/composition/): the forecaster (prices) and the replanner with the session outcomes (charging).
    expect(Object.fromEntries(wired.map((e) => [e, ctx.events.listenerCount(e)]))).toEqual(Object.fromEntries(wired.map((e) => [e, e === 'prices.updated' ? 2 : 1])));
    ctx.db.close();
  });
});
