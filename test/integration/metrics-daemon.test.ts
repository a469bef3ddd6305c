// /metrics of `metergate run` against real peers: every family issue 5 lists, with the
// labels an operator filters on. A simulated bus on a pty (one meter answers, one does
// not), mosquitto with TLS + ACL (paused to build an outbox backlog), two price regions
// (real recorded NL prices imported when ../shared/data is there), real HTTP requests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { freePort, hasMosquitto, startTlsBroker, type TlsBroker } from '../helpers/mosquitto.js';
import { METER_A, METER_B, ORG } from '../helpers/poller-harness.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { startSim, type SimProcess } from '../helpers/sim-process.js';
import { removeDir, startPtyPair, type PtyPair } from '../helpers/socat.js';
import { until } from '../helpers/wait.js';
import { hasSocat } from '../helpers/peers.js';
import { seriesValue } from '../helpers/prom-text.js';

describe.skipIf(!hasMosquitto || !hasSocat)('/metrics of a running daemon', () => {
  let dir: string;
  let pair: PtyPair;
  let sim: SimProcess;
  let broker: TlsBroker;
  let daemon: DaemonProcess;
  let base: string;
  const scrape = async () => (await fetch(`${base}/metrics`)).text();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-metrics-'));
    pair = await startPtyPair();
    sim = await startSim(['--serial', pair.b, '--unit', '1']); // METER_B's unit 9 never answers
    broker = await startTlsBroker([{ username: 'gw', password: 'gw-pw', acl: ['topic write svc/resources/#'] }]);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    if (hasSharedData) {
      // Real NL day-ahead prices, 2025 at 15 minutes, into the daemon's database before it starts.
      execFileSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'prices', 'import', sharedData('prices/nl-2025-quarterhour-local-utc.csv'), '--region', 'NL', '--db', join(dir, 'data', 'metergate.db')], { stdio: 'pipe' });
    }
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      `organization_id: ${ORG}
data_dir: ${dir}/data
poll: { interval_ms: 1000, offline_after_misses: 100 }
buses:
  - { name: rs485, type: rtu, port: ${pair.a}, timeout_ms: 500, retries: 0 }
meters:
  - { resource_id: ${METER_A}, bus: rs485, unit_id: 1, profile: sdm630 }
  - { resource_id: ${METER_B}, bus: rs485, unit_id: 9, profile: sdm630 }
mqtt: { url: '${broker.url}', username: gw, password: gw-pw, ca_file: '${broker.caFile}', reconnect_min_ms: 200, reconnect_max_ms: 1000 }
clock: { trust: system }
http: { host: 127.0.0.1, port: ${port} }
# ENTSO-E without a token: nothing is fetched, coverage is still reported per region.
prices: { source: entsoe, regions: [NL, DE-LU] }
forecast: { enabled: false }
`,
    );
    daemon = await startDaemon(config);
  }, 120_000);

  afterAll(async () => {
    await daemon?.stop();
    await sim?.stop();
    await pair?.stop();
    if (pair) removeDir(pair.dir);
    await broker?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
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
    await broker.pause();
    try {
      await until(async () => (seriesValue(await scrape(), 'metergate_broker_state', { state: 'connected' }) ?? 1) === 0, 'the daemon to notice the broker is gone');
      await until(async () => {
        const t = await scrape();
        return (seriesValue(t, 'metergate_outbox_depth') ?? 0) >= 2 && (seriesValue(t, 'metergate_outbox_oldest_age_seconds') ?? 0) > 0;
      }, 'a backlog with an age');
    } finally {
      await broker.resume();
    }
    const publishedBefore = seriesValue(await scrape(), 'metergate_uplink_published_total')!;
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
