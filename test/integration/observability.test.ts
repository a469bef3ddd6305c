import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeterPoller } from '../../src/modbus/poller.js';
import { registerOpsMetrics } from '../../src/ops/observability/metrics.js';
import { startTestHttp, type TestHttp } from '../helpers/http.js';
import { METER_A } from '../helpers/poller-harness.js';
import { startSim, type SimProcess } from '../helpers/sim-process.js';
import { removeDir, startPtyPair, type PtyPair } from '../helpers/socat.js';
import { until } from '../helpers/wait.js';
import { hasSocat } from '../helpers/peers.js';

if (!hasSocat) console.warn('observability test skipped: needs socat (scripts/install-test-deps)');


describe.skipIf(!hasSocat)('/healthz, /metrics and /status.json on a gateway polling a simulated meter', () => {
  let pair: PtyPair;
  let sim: SimProcess;
  let http: TestHttp;
  let poller: MeterPoller;
  let samples = 0;

  beforeAll(async () => {
    pair = await startPtyPair();
    sim = await startSim(['--serial', pair.b, '--unit', '1']);
    http = await startTestHttp({
      config: {
        // Generous timeout and misses: a loaded CI machine must not make the live meter look dead.
        poll: { interval_ms: 1000, offline_after_misses: 2, reprobe_initial_ms: 60_000 },
        buses: [{ name: 'rs485', type: 'rtu', port: pair.a, timeout_ms: 1000, retries: 1 }],
        meters: [{ resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630', extra_metrics: ['voltage_l1'] }],
        prices: { regions: [] },
      },
    });
    poller = new MeterPoller(http.ctx);
    http.ctx.events.on('sample.taken', () => samples++);
    http.ctx.probes.observe([poller]);
    registerOpsMetrics(http.ctx);
    await poller.start();
    await until(() => samples >= 2, 'two samples');
  });
  afterAll(async () => {
    await poller?.stop();
    await http?.close();
    await sim?.stop();
    await pair?.stop();
    if (pair) removeDir(pair.dir);
  });

  it('serves Prometheus metrics: per-meter polls, failures and latency, meter states, broker state, HTTP requests, process', async () => {
    await fetch(`${http.url}/healthz`);
    const res = await fetch(`${http.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(new RegExp(`^metergate_meter_polls_total\\{resource_id="${METER_A}",bus="rs485"\\} \\d+`, 'm'));
    expect(text).toContain('# TYPE metergate_meter_poll_failures_total counter');
    expect(text).toMatch(new RegExp(`^metergate_meter_poll_duration_seconds_bucket\\{le="0.5",resource_id="${METER_A}"\\} \\d+`, 'm'));
    expect(text).toMatch(/^metergate_meters\{state="online"\} 1$/m);
    expect(text).toMatch(/^metergate_broker_state\{state="disabled"\} 1$/m);
    expect(text).toMatch(/^metergate_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+$/m);
    expect(text).toMatch(/^metergate_process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^metergate_build_info\{version="\d+\.\d+\.\d+",node="[\d.]+"\} 1$/m);
  });

  it('/status.json shows the meter with its live values', async () => {
    const body = (await (await fetch(`${http.url}/status.json`)).json()) as { meters: Array<{ resource_id: string; state: string; metrics: Array<{ name: string; value: number }> }> };
    expect(body.meters).toHaveLength(1);
    expect(body.meters[0]).toMatchObject({ resource_id: METER_A, state: 'online' });
    expect(body.meters[0].metrics.map((m) => m.name).sort()).toEqual(['active_energy_import', 'total_active_power', 'voltage_l1']);
  });

  it('/healthz is 200 while the meter answers and 503 with the reason once it is gone', async () => {
    let res = await fetch(`${http.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', live: true, ready: true, components: { meters: { status: 'ok', reason: '1 meter(s) online' } } });
    await sim.kill();
    await until(async () => (await fetch(`${http.url}/healthz/ready`)).status === 503, 'not ready');
    res = await fetch(`${http.url}/healthz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'down', live: true, ready: false, reasons: ['meters: all 1 meter(s) offline'] });
    expect((await fetch(`${http.url}/healthz/live`)).status).toBe(200);
    expect(await (await fetch(`${http.url}/metrics`)).text()).toMatch(/^metergate_meters\{state="offline"\} 1$/m);
  });
});
