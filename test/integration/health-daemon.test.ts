// /healthz, /healthz/ready, /healthz/live and /status.json of `metergate run` through a
// broker outage: a simulated Modbus TCP bus with three meters, a real mosquitto with TLS,
// password and ACL that is stopped and started again. Buffering through the outage is
// the designed mode (degraded, 200); only an outbox at its bound that drops messages is
// down (503); liveness stays 200 throughout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_USER, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { expectDocumented } from '../helpers/openapi.js';
import { METER_A, METER_B, METER_C } from '../helpers/poller-harness.js';
import { until } from '../helpers/wait.js';

if (!hasMosquitto) console.warn('health daemon test skipped: needs mosquitto (scripts/install-test-deps)');

interface HealthBody {
  status: string;
  live: boolean;
  ready: boolean;
  reasons: string[];
  components: Record<string, { status: string; reason: string }>;
}

/** outbox_max_rows at its schema minimum: three meters at 1 s fill it in about half a minute. */
const MAX_ROWS = 100;

describe.skipIf(!hasMosquitto)('health of a running daemon through a broker outage', () => {
  let rig: MeterRig;
  /** GET a health route; every answer is checked against openapi.json (code and body). */
  const get = async (path: string) => {
    const res = await fetch(`${rig.httpBase}${path}`);
    const body = (await res.json()) as HealthBody & { health?: HealthBody };
    if (path.startsWith('/healthz')) expectDocumented('GET', path, res, body);
    return { code: res.status, body };
  };

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-health-',
      meters: [{ line: 'tcp', args: ['--unit', '1,2,3'] }],
      broker: { users: [GATEWAY_USER] },
      http: true,
      config: ({ meters }) => ({
        poll: { interval_ms: 1000, offline_after_misses: 100 },
        buses: [{ name: 'tcp', type: 'tcp', host: '127.0.0.1', tcp_port: meters[0].tcpPort, timeout_ms: 1000, retries: 1 }],
        meters: [
          { resource_id: METER_A, bus: 'tcp', unit_id: 1, profile: 'sdm630' },
          { resource_id: METER_B, bus: 'tcp', unit_id: 2, profile: 'sdm630' },
          { resource_id: METER_C, bus: 'tcp', unit_id: 3, profile: 'sdm630' },
        ],
        mqtt: { reconnect_min_ms: 200, reconnect_max_ms: 1000 },
        store: { outbox_max_rows: MAX_ROWS },
        prices: { regions: [] },
      }),
    });
  }, 120_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it('is ok while everything works, degraded (200) while the stopped broker is buffered, down (503) once the outbox drops, ok again after', { timeout: 240_000 }, async () => {
    await until(async () => (await get('/healthz')).body.status === 'ok', 'healthy: meters online, broker connected', 90_000, 250);
    expect((await get('/healthz')).code).toBe(200);

    await rig.broker.pause(); // mosquitto stopped
    try {
      await until(async () => (await get('/healthz')).body.components.broker.status !== 'ok', 'the daemon to notice the broker is gone', 90_000, 100);
      const away = await get('/healthz');
      // Until the outbox is full, this is the designed mode: readings are kept and sent later.
      expect(away.code, JSON.stringify(away.body)).toBe(200);
      expect(away.body).toMatchObject({ status: 'degraded', live: true, ready: true, components: { broker: { status: 'degraded' } } });
      expect(away.body.reasons).toHaveLength(1);
      expect(away.body.reasons[0]).toMatch(/^broker: broker (disconnected|connecting)( \(.+\))?; buffering in the outbox, (\d+ message\(s\) waiting|nothing waiting yet)/);
      const ready = await get('/healthz/ready');
      expect(ready.code).toBe(200);
      expect(ready.body).toMatchObject({ status: 'degraded', ready: true });
      expect((await get('/healthz/live')).code).toBe(200);
      const status = await get('/status.json');
      expect(status.body.health).toMatchObject({ status: 'degraded', ready: true, live: true, components: { broker: { status: 'degraded' } } });

      // Three measurements a second reach the bound: from then on each one drops the oldest.
      await until(async () => (await get('/healthz')).code === 503, 'the outbox to fill and drop', 120_000, 250);
      const full = await get('/healthz');
      expect(full.body).toMatchObject({ status: 'down', live: true, ready: false, components: { broker: { status: 'down' } } });
      expect(full.body.reasons[0]).toMatch(new RegExp(`^broker: broker (disconnected|connecting).*; outbox full .*dropping the oldest messages; ${MAX_ROWS} message\\(s\\) waiting`));
      expect((await get('/healthz/ready')).code).toBe(503);
      const live = await get('/healthz/live');
      expect(live.code).toBe(200);
      expect(live.body).toEqual({ live: true, reasons: [] });
    } finally {
      await rig.broker.resume();
    }
    // The backlog drains (PUBACKs make room): ok again, no restart needed.
    await until(async () => {
      const h = await get('/healthz');
      return h.code === 200 && h.body.status === 'ok';
    }, 'healthy again after the broker is back', 120_000, 250);
  });
});
