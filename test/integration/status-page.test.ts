// The local status page in a real browser: Debian's chromium, driven by playwright-core,
// against a gateway composed of real parts: the meter poller reading the simulator over a
// pty, prices imported from a real recorded NL file, and a forecast computed by the
// forecaster from that history. A screenshot is kept under test-artifacts/.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForecastService } from '../../src/forecast/service.js';
import { MeterPoller } from '../../src/modbus/poller.js';
import { ClockGuard } from '../../src/ops/clock/clock-guard.js';
import { PriceViews } from '../../src/ops/observability/price-views.js';
import { importPriceFile } from '../../src/prices/import.js';
import { marketByCode, nativeResolutionS } from '../../src/prices/markets.js';
import { ForecastStore } from '../../src/store/forecasts.js';
import { PriceStore } from '../../src/store/prices.js';
import { startTestHttp, type TestHttp } from '../helpers/http.js';
import { METER_A, METER_B } from '../helpers/poller-harness.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';
import { validateConfig } from '../../src/config/load.js';
import { buildUplink } from '../../src/daemon.js';
import { hasMosquitto, startTlsBroker } from '../helpers/mosquitto.js';
import { ORG } from '../helpers/poller-harness.js';
import { startSim, type SimProcess } from '../helpers/sim-process.js';
import { removeDir, startPtyPair, type PtyPair } from '../helpers/socat.js';
import { chromiumPath, hasSocat } from '../helpers/peers.js';

const CHROMIUM = chromiumPath();
const skip = !CHROMIUM || !hasSocat || !hasSharedData;

// 10:30 in Amsterdam on a day of the real 2025 file: today's prices are published,
// tomorrow's are not yet (the auction result comes after noon), so tomorrow is forecast.
const NOW = Date.parse('2025-11-20T09:30:00Z');
const TOMORROW_LOCAL_START = Date.parse('2025-11-20T23:00:00Z');

describe.skipIf(skip)('status page in headless Chromium', () => {
  let pair: PtyPair;
  let sim: SimProcess;
  let http: TestHttp;
  let poller: MeterPoller;
  let browser: Browser;
  let guard: ClockGuard;
  let priceViews: PriceViews;

  beforeAll(async () => {
    pair = await startPtyPair();
    sim = await startSim(['--serial', pair.b, '--unit', '1']);
    const offset = NOW - Date.now();
    const clock = { now: () => Date.now() + offset };
    http = await startTestHttp({
      ctx: { clock },
      config: {
        poll: { interval_ms: 1000, offline_after_misses: 2, reprobe_initial_ms: 60_000 },
        buses: [{ name: 'rs485', type: 'rtu', port: pair.a, timeout_ms: 500, retries: 1 }],
        meters: [
          { resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630', extra_metrics: ['voltage_l1', 'frequency'] },
          { resource_id: METER_B, bus: 'rs485', unit_id: 9, profile: 'sdm630' }, // nobody answers at 9
        ],
        prices: { regions: ['NL'], source: 'none' },
        forecast: { training_window_days: 28, horizon_days: 2 },
        clock: { trust: 'system' },
      },
    });
    const { ctx } = http;
    const prices = new PriceStore(ctx.db);
    importPriceFile(prices, sharedData('prices/nl-2025-quarterhour-local-utc.csv'), 'NL', NOW);
    ctx.db.prepare("DELETE FROM prices WHERE market_area = 'NL' AND start_ms >= ?").run(TOMORROW_LOCAL_START);
    const forecaster = new ForecastService({
      ...ctx,
      forecasts: new ForecastStore(ctx.db),
      prices,
      market: (code) => {
        const m = marketByCode(code);
        return m && { code: m.code, timeZone: m.timeZone, nativeResolutionS: (at: number) => nativeResolutionS(m, at) };
      },
    });
    expect(await forecaster.computeRegion('NL')).toBe(true);
    priceViews = new PriceViews(ctx);
    await priceViews.start();
    // The build date is after 2025; this composition judges the clock against the data's year.
    guard = new ClockGuard({ ...ctx, buildDateMs: Date.parse('2025-01-01T00:00:00Z') });
    await guard.start();
    ctx.events.on('sample.taken', (s) => guard.submit(s));
    poller = new MeterPoller(ctx);
    ctx.probes.observe([priceViews, guard, poller]);
    await poller.start();
    const until = Date.now() + 40_000;
    const settled = () => {
      const [a, b] = poller.statuses();
      return a.state === 'online' && a.lastSample !== null && b.state === 'offline';
    };
    while (!settled()) {
      if (Date.now() > until) throw new Error('meters never polled');
      await new Promise((r) => setTimeout(r, 50));
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await poller?.stop();
    await http?.close();
    await sim?.stop();
    await pair?.stop();
    if (pair) removeDir(pair.dir);
  });

  it('shows each meter live, the uplink, and today\'s prices with tomorrow\'s forecast band; loads nothing from elsewhere', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 }, timezoneId: 'Europe/Amsterdam' });
    const foreign: string[] = [];
    const consoleErrors: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(http.url)) foreign.push(req.url());
    });
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    await page.goto(`${http.url}/status`);
    await page.waitForSelector('body[data-rendered]');

    const rowA = page.locator(`tr[data-resource="${METER_A}"]`);
    await expect(rowA.locator('.badge').textContent()).resolves.toBe('online');
    expect(await rowA.locator('td.power').textContent()).toMatch(/^[\d,.]+ W$/);
    expect(await rowA.textContent()).toMatch(/voltage_l1 2\d\d\.\d\d V/);
    await expect(page.locator(`tr[data-resource="${METER_B}"] .badge`).textContent()).resolves.toBe('offline');
    expect(await page.locator('#uplink').textContent()).toContain('disabled');
    // The health box shows every component in /healthz's words and colours, each reason once.
    expect(await page.locator('#components [data-component="meters"]').textContent()).toContain('1 of 2 meter(s) offline');
    expect((await page.locator('body').innerText()).split('1 of 2 meter(s) offline')).toHaveLength(2);
    await expect(page.locator('#components [data-component="meters"] .badge').getAttribute('class')).resolves.toBe('badge degraded');
    await expect(page.locator('#components [data-component="broker"] .badge').textContent()).resolves.toBe('disabled');

    const chart = page.locator('.chart-box[data-region="NL"] svg.chart');
    expect(await chart.locator('path.actual').count()).toBe(1);
    expect(await chart.locator('path.forecast').count()).toBe(1);
    expect(await chart.locator('polygon.band').count()).toBe(1);
    expect(await chart.locator('line.now').count()).toBe(1);

    // The chart draws what /status.json says: today's real prices, then tomorrow's forecast with bounds.
    const report = (await (await fetch(`${http.url}/status.json`)).json()) as {
      prices: Array<{ region: string; periods: Array<{ period_start: string; price_per_mwh: number | null; forecast: number | null; forecast_lower: number | null; forecast_upper: number | null }> }>;
    };
    const periods = report.prices[0].periods;
    expect(Date.parse(periods[0].period_start)).toBe(Date.parse('2025-11-20T00:00:00+01:00'));
    const actual = periods.filter((p) => p.price_per_mwh !== null);
    const forecast = periods.filter((p) => p.forecast !== null);
    expect(actual).toHaveLength(96); // today at 15 minutes
    expect(forecast.length).toBeGreaterThan(0);
    for (const p of forecast) {
      expect(Date.parse(p.period_start)).toBeGreaterThanOrEqual(TOMORROW_LOCAL_START);
      expect(p.forecast_lower!).toBeLessThanOrEqual(p.forecast!);
      expect(p.forecast_upper!).toBeGreaterThanOrEqual(p.forecast!);
    }

    const dir = resolve('test-artifacts');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: resolve(dir, 'status-page.png'), fullPage: true });
    expect(foreign).toEqual([]);
    expect(consoleErrors, consoleErrors.join('\n')).toEqual([]);
    await page.close();
  });
  it('the first HTML already holds the data: plain HTTP, and Chromium with JavaScript off (issue 31 point 8)', async () => {
    // What curl or a text browser gets: the meters, their values, the health lines and the chart, no script run.
    const res = await fetch(`${http.url}/status`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const rowA = html.match(new RegExp(`<tr data-resource="${METER_A}">.*?</tr>`))?.[0] ?? '';
    expect(rowA).toContain('<span class="badge online">online</span>');
    expect(rowA).toMatch(/<td class="num power">[\d,.]+ W<\/td>/);
    expect(rowA).toMatch(/voltage_l1 2\d\d\.\d\d V/);
    expect(html).toMatch(new RegExp(`<tr data-resource="${METER_B}">.*?<span class="badge offline">offline</span>`));
    expect(html).toContain('<span data-component="meters" data-status="degraded"><span class="badge degraded">degraded</span><span class="muted"> 1 of 2 meter(s) offline');
    expect(html.split('1 of 2 meter(s) offline')).toHaveLength(2);
    expect(html).toMatch(/<div class="chart-box" data-region="NL">.*<path class="actual" d="M[^"]+".*<path class="forecast".*<line class="now"/s);
    expect(html).toMatch(/<polygon class="band" points="[\d., -]+"/);
    expect(html).toMatch(/<body data-rendered="2025-11-20T09:\d\d:\d\d\.\d{3}Z">/);
    // The same in a browser that runs no script (a screenshot taken before the first fetch).
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1200, height: 900 }, timezoneId: 'Europe/Amsterdam' });
    try {
      const page = await context.newPage();
      await page.goto(`${http.url}/status`);
      await expect(page.locator(`tr[data-resource="${METER_A}"] .badge`).textContent()).resolves.toBe('online');
      expect(await page.locator(`tr[data-resource="${METER_A}"] td.power`).textContent()).toMatch(/^[\d,.]+ W$/);
      expect(await page.locator('.chart-box[data-region="NL"] svg.chart path.actual').count()).toBe(1);
      expect(await page.locator('#charts svg polygon.band').count()).toBe(1);
      expect(await page.locator('#health').textContent()).toBe('degraded');
      mkdirSync(resolve('test-artifacts'), { recursive: true });
      await page.screenshot({ path: resolve('test-artifacts', 'status-page-no-script.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('keeps refreshing live from /status.json after the first HTML', { timeout: 60_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 }, timezoneId: 'Europe/Amsterdam' });
    try {
      await page.goto(`${http.url}/status`);
      const first = await page.locator('body').getAttribute('data-rendered');
      // The script's own refresh (every 5 s) replaces the report of the first HTML.
      const end = Date.now() + 30_000;
      while ((await page.locator('body').getAttribute('data-rendered')) === first) {
        if (Date.now() > end) throw new Error('the page never refreshed itself');
        await new Promise((r) => setTimeout(r, 200));
      }
      await expect(page.locator(`tr[data-resource="${METER_A}"] .badge`).textContent()).resolves.toBe('online');
      expect(await page.locator('#meters tbody tr').count()).toBe(2);
      expect(await page.locator('.chart-box[data-region="NL"] svg.chart path.actual').count()).toBe(1);
    } finally {
      await page.close();
    }
  });

  it.skipIf(!hasMosquitto)('shows the uplink connected, then its backlog growing while the broker is away', { timeout: 120_000 }, async () => {
    const broker = await startTlsBroker([{ username: 'gw', password: 'gw-pw', acl: ['topic write svc/resources/#'] }]);
    const { ctx } = http;
    const mqtt = validateConfig(
      { organization_id: ORG, mqtt: { url: broker.url, username: 'gw', password: 'gw-pw', ca_file: broker.caFile, reconnect_min_ms: 200, reconnect_max_ms: 1000 } },
      'uplink',
      {},
    ).mqtt;
    const uplink = buildUplink({ ...ctx, config: { ...ctx.config, mqtt } }, { clockGate: guard, buildDateMs: Date.parse('2025-01-01T00:00:00Z') });
    for (const m of uplink.modules) await m.start();
    ctx.events.on('sample.released', (sample) => uplink.recorder.record(sample));
    ctx.probes.observe([priceViews, guard, poller, uplink.publisher!]);
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 }, timezoneId: 'Europe/Amsterdam' });
    // Reloads until the uplink box shows what we wait for (the page itself refreshes every 5 s).
    const uplinkText = async (want: (text: string) => boolean, what: string) => {
      const end = Date.now() + 60_000;
      for (;;) {
        await page.goto(`${http.url}/status`);
        await page.waitForSelector('body[data-rendered]');
        const text = (await page.locator('#uplink').textContent()) ?? '';
        if (want(text)) return text;
        if (Date.now() > end) throw new Error(`status page never showed ${what}: ${text}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    try {
      // Polling goes on, so a reading may be waiting at any one look: wait for a page that
      // shows it all caught up rather than expecting the first one to.
      const connected = await uplinkText(
        (t) => t.includes('connected') && !t.includes('disconnected') && /Last published.*ago/.test(t) && /Backlog\s*0 message\(s\)/.test(t),
        'connected with a publish and nothing waiting',
      );
      expect(connected).toContain(broker.url);
      await broker.pause();
      const away = await uplinkText((t) => !/Broker\s*connected/.test(t) && /Backlog\s*[1-9]\d* message\(s\), oldest \d+ s/.test(t), 'a backlog while the broker is away');
      expect(away).toMatch(/Last error/);
      // Buffering through the outage is the designed mode: yellow "degraded", not red "down".
      expect(await page.locator('#uplink .badge').getAttribute('class')).toBe('badge degraded');
      expect(await page.locator('#health').textContent()).toBe('degraded');
      expect(await page.locator('#components [data-component="broker"] .badge').textContent()).toBe('degraded');
      expect(await page.locator('#components [data-component="broker"]').textContent()).toMatch(/buffering in the outbox/);
      expect((await page.locator('body').innerText()).match(/buffering in the outbox/g)).toHaveLength(1);
      mkdirSync(resolve('test-artifacts'), { recursive: true });
      await page.screenshot({ path: resolve('test-artifacts', 'status-page-backlog.png'), fullPage: true });
      await broker.resume();
      await uplinkText((t) => /Broker\s*connected/.test(t) && /Backlog\s*0 message\(s\)/.test(t), 'the backlog drained');
    } finally {
      await page.close();
      ctx.probes.observe([priceViews, guard, poller]);
      for (const m of [...uplink.modules].reverse()) await m.stop();
      await broker.stop();
    }
  });
});
