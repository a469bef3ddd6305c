// /metrics of `metergate run` against real peers: every family issue 5 lists, with the
// labels an operator filters on. A simulated bus on a pty (one meter answers, one does
// not), mosquitto with TLS + ACL (paused to build an outbox backlog), two price regions
// (real recorded NL prices imported when ../shared/data is there), real HTTP requests.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_USER, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { METER_A, METER_B } from '../helpers/poller-harness.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';
import { hasSocat } from '../helpers/peers.js';
import { seriesValue } from '../helpers/prom-text.js';

describe.skipIf(!hasMosquitto || !hasSocat)('/metrics of a running daemon', () => {
  let rig: MeterRig;
  let base: string;
  const scrape = async () => (await fetch(`${base}/metrics`)).text();

  beforeAll(async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-metrics-',
      meters: [{ line: 'pty', args: ['--unit', '1'] }], // METER_B's unit 9 never answers
      broker: { users: [GATEWAY_USER] },
      http: true,
      config: ({ meters }) => ({
        poll: { interval_ms: 1000, offline_after_misses: 100 },
        buses: [{ name: 'rs485', type: 'rtu', port: meters[0].port, timeout_ms: 500, retries: 0 }],
        meters: [
          { resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630' },
          { resource_id: METER_B, bus: 'rs485', unit_id: 9, profile: 'sdm630' },
        ],
        mqtt: { reconnect_min_ms: 200, reconnect_max_ms: 1000 },
        // ENTSO-E without a token: nothing is fetched, coverage is still reported per region.
        prices: { source: 'entsoe', regions: ['NL', 'DE-LU'] },
      }),
      startDaemon: false,
    });
    base = rig.httpBase;
    if (hasSharedData) {
      // Real NL day-ahead prices, 2025 at 15 minutes, into the daemon's database before it starts.
      execFileSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'prices', 'import', sharedData('prices/nl-2025-quarterhour-local-utc.csv'), '--region', 'NL', '--db', join(rig.dataDir, 'metergate.db')], { stdio: 'pipe' });
    }
    await rig.startDaemon();
  }, 120_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it('polls, failures and latency per meter; broker state; publish count', { timeout: 120_000 }, async () => {
    await until(async () => {
      const t = await scrape();
      return (seriesValue(t, 'metergate_uplink_published_total') ?? 0) >= 2 && (seriesValue(t, 'metergate_meter_poll_duration_seconds_count', { resource_id: METER_A }) ?? 0) >= 1;
    }, 'published messages and a completed poll');
    const text = await scrape();
    expect(seriesValue(text, 'metergate_meter_polls_total', { resource_id: METER_A, bus: 'rs485' })).toBeGreaterThan(0);
    expect(seriesValue(text, 'metergate_meter_polls_total', { resource_id: METER_B, bus: 'rs485' })).toBeGreaterThan(0);
    await until(async () => (seriesValue(await scrape(), 'metergate_meter_poll_failures_total', { resource_id: METER_B }) ?? 0) >= 1, 'a failed poll of the silent meter');
    // Present from the start at 0 (not born at 1 with the first failure), so alerts see that first one.
    expect(seriesValue(await scrape(), 'metergate_meter_poll_failures_total', { resource_id: METER_A, bus: 'rs485' })).toBe(0);
    expect(seriesValue(text, 'metergate_meter_poll_duration_seconds_count', { resource_id: METER_A })).toBeGreaterThan(0);
    expect(seriesValue(text, 'metergate_broker_state', { state: 'connected' })).toBe(1);
  });

  it('outbox depth and age grow while the broker is away and drain after', { timeout: 180_000 }, async () => {
    await rig.broker.pause();
    // Read while the broker is away: after resume() the daemon may reconnect and drain before a scrape.
    let publishedBefore = Number.NaN;
    try {
      await until(async () => (seriesValue(await scrape(), 'metergate_broker_state', { state: 'connected' }) ?? 1) === 0, 'the daemon to notice the broker is gone');
      await until(async () => {
        const t = await scrape();
        return (seriesValue(t, 'metergate_outbox_depth') ?? 0) >= 2 && (seriesValue(t, 'metergate_outbox_oldest_age_seconds') ?? 0) > 0;
      }, 'a backlog with an age');
      publishedBefore = seriesValue(await scrape(), 'metergate_uplink_published_total')!;
    } finally {
      await rig.broker.resume();
    }
    await until(async () => (seriesValue(await scrape(), 'metergate_broker_state', { state: 'connected' }) ?? 0) === 1, 'the reconnect');
    await until(async () => {
      const t = await scrape();
      return seriesValue(t, 'metergate_outbox_oldest_age_seconds') === 0 || (seriesValue(t, 'metergate_outbox_depth') ?? 99) <= 1;
    }, 'the backlog to drain');
    expect(seriesValue(await scrape(), 'metergate_uplink_published_total')!).toBeGreaterThan(publishedBefore);
  });

  it('price coverage per configured region', async () => {
    const text = await scrape();
    for (const region of ['NL', 'DE-LU']) expect(seriesValue(text, 'metergate_price_ahead_seconds', { region }), region).toBeDefined();
    expect(seriesValue(text, 'metergate_price_ahead_seconds', { region: 'DE-LU' })).toBe(-1); // nothing stored
    if (hasSharedData) {
      // The recorded file ends with 2025: coverage ends 2026-01-01T00:00 Amsterdam = 2025-12-31T23:00Z.
      expect(seriesValue(text, 'metergate_price_coverage_end_timestamp_seconds', { region: 'NL' })).toBe(Date.parse('2025-12-31T23:00:00Z') / 1000);
      expect(seriesValue(text, 'metergate_price_ahead_seconds', { region: 'NL' })!).toBeLessThan(0);
    }
  });

  it('HTTP requests by route and status', async () => {
    await fetch(`${base}/healthz`);
    expect((await fetch(`${base}/api/v1/market_price_forecast?region=NL`)).status).toBe(401);
    expect((await fetch(`${base}/no/such/route`)).status).toBe(404);
    const text = await scrape();
    expect(seriesValue(text, 'metergate_http_requests_total', { method: 'GET', route: '/api/v1/market_price_forecast', status: '401' })).toBe(1);
    expect(seriesValue(text, 'metergate_http_requests_total', { method: 'GET', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(seriesValue(text, 'metergate_http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBeGreaterThan(0);
    // An unknown path is one label value, not one series per path a scanner tries.
    expect(text).not.toContain('/no/such/route');
  });
});
