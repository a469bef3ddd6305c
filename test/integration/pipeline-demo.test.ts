// `metergate demo` on a machine with nothing set up shows the whole product, each part read
// here through its public door: schema-valid measurements from the embedded broker (the
// README promises within 30 s), each printed on one line with its readings, at the intervals
// the README states, the forecast with its band over HTTP with the price_forecast
// token the demo printed, the charging plan of the car that arrived with a target (sent to
// the simulated charger and accepted), the top-up's session priced through GET
// /api/v1/cdrs with the printed cdrs token, and the status page showing them in a real
// browser; and a subscriber of the test's own gets measurements from the embedded broker
// (the address and CA the demo printed). Ctrl-C ends it cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import mqtt from 'mqtt';
import { parse } from 'yaml';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageProblems } from '../../src/uplink/validate.js';
import { expectDocumented } from '../helpers/openapi.js';
import { chromiumPath } from '../helpers/peers.js';

const CHROMIUM = chromiumPath();
const MEASUREMENT_LINE = /^<- svc\/resources\/([0-9a-f-]{36})\/measurements {2}\[schema-valid\] {2}sampled (\S+Z): (.+)$/m;

describe('metergate demo', () => {
  let child: ChildProcess;
  let out = '';
  /** stdout alone (out also has stderr, where an error would be logged as JSON). */
  let stdout = '';
  let exited: Promise<number | null>;

  const waitFor = async (re: RegExp, what: string, timeoutMs = 120_000): Promise<RegExpExecArray> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const m = re.exec(out);
      if (m) return m;
      if (child.exitCode !== null || Date.now() > until) throw new Error(`no ${what} from the demo:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** The demo's one-line measurements: resource, sampling time and each reading (name -> value, unit). */
  const measurementLines = () =>
    [...out.matchAll(new RegExp(MEASUREMENT_LINE.source, 'gm'))].map(([, resourceId, sampled, readings]) => ({
      resourceId: resourceId!,
      sampled: sampled!,
      metrics: new Map(readings!.split(', ').map((r) => {
        const [name, value, unit] = r.split(' ');
        return [name!, { value: Number(value), unit: unit! }] as const;
      })),
    }));
  const printed = async () => {
    const http = (await waitFor(/HTTP {11}(http:\/\/127\.0\.0\.1:\d+)\/status/, 'HTTP address'))[1]!;
    const token = async (type: string) => (await waitFor(new RegExp(`^ {4}${type} +(mg_\\S+)$`, 'm'), `${type} token`))[1]!;
    return { http, cdrs: await token('cdrs'), priceForecast: await token('price_forecast'), cpo: await token('cpo') };
  };
  const get = async (url: string, authorization: string, template: string) => {
    const res = await fetch(url, { headers: { authorization } });
    const body = (await res.json()) as any;
    expectDocumented('GET', template, res, body);
    return { status: res.status, body };
  };

  beforeAll(() => {
    // A 20 s top-up instead of the default 60 s: the priced cdr comes sooner, the rest is the same.
    child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'demo', '--top-up', '20'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), (stdout += d.toString())));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    // 'close': the output read to its end (the stopping line comes just before the exit).
    exited = new Promise((resolve) => child.once('close', (code) => resolve(code)));
  });
  afterAll(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('prints each schema-valid message from the embedded broker on one line, with its main fields', { timeout: 90_000 }, async () => {
    await waitFor(MEASUREMENT_LINE, 'measurement', 60_000);
    expect(out).not.toMatch(/SCHEMA PROBLEMS/);
    const fields = measurementLines().flatMap((l) => [...l.metrics.keys()].map((name) => `${name}:${l.metrics.get(name)!.unit}`));
    expect(fields).toEqual(expect.arrayContaining(['total_active_power:W', 'active_energy_import:Wh']));
    expect(out).toMatch(/^<- svc\/resources\/[0-9a-f-]{36}\/boot_notifications {2}\[(retained, )?schema-valid\] {2}booted \S+Z: Eastron SDM630 unit [12] on bus sim/m);
    expect(out).toMatch(/\*\* first measurement on the broker: \d+\.\d s after start/);
    // One line per message: no JSON printed without --json (a pretty-printed measurement was ~23 lines).
    expect(stdout).not.toMatch(/^\s*[{}"[\]]/m);
    for (const line of stdout.split('\n').filter((l) => l.startsWith('<- '))) expect(line, line).toMatch(/^<- \S+ {2}\[(retained, )?schema-valid\] {2}(sampled|published|booted|scanned) \d\d:\d\d:\d\d\.\d+Z/);
  });

  it('says what the README says it shows: a measurement every 5 s per meter and a heartbeat every 15 s', async () => {
    const [, pollS, heartbeatS] = await waitFor(/daemon started; first measurements within (\d+) s, heartbeats every (\d+) s/, 'intervals');
    const readme = /one schema-checked `measurement` per meter\s+every (\d+) s and a `heartbeat` every (\d+) s/.exec(readFileSync('README.md', 'utf8'));
    expect(readme, 'the README\'s demo section names both intervals').not.toBeNull();
    expect([readme![1], readme![2]]).toEqual([pollS, heartbeatS]);
    const demo = parse(readFileSync('config/demo.yaml', 'utf8')) as { poll: { interval_ms: number }; mqtt: { heartbeat_interval_ms: number } };
    expect([demo.poll.interval_ms / 1000, demo.mqtt.heartbeat_interval_ms / 1000]).toEqual([Number(pollS), Number(heartbeatS)]);
  });

  it('publishes measurements a subscriber of its own gets from the embedded broker, as the line printed for each says', { timeout: 90_000 }, async () => {
    // The broker address and CA the demo printed, the credentials of config/demo.yaml: a cloud consumer's view, not the demo's own printout.
    const [, url, caFile] = await waitFor(/broker {9}(mqtts:\/\/localhost:\d+) \(TLS, CA generated just now: (\S+)\)/, 'broker address');
    const demo = parse(readFileSync('config/demo.yaml', 'utf8')) as { mqtt: { username: string; password: string; topic_prefix?: string } };
    const sub = await mqtt.connectAsync(url!, { ca: readFileSync(caFile!), username: demo.mqtt.username, password: demo.mqtt.password, protocolVersion: 4, reconnectPeriod: 0 });
    let measurement: any;
    try {
      const got = new Promise<unknown>((resolve) => sub.on('message', (_topic, payload) => resolve(JSON.parse(payload.toString()))));
      await sub.subscribeAsync(`${demo.mqtt.topic_prefix ?? 'svc'}/resources/+/measurements`, { qos: 1 });
      measurement = await got;
      expect(messageProblems('measurement', measurement)).toEqual([]);
    } finally {
      await sub.endAsync(true);
    }
    // The demo's line for the same message: each reading with its unit, rounded to at most 0.5 of a unit.
    const sampled = (measurement.data.sampled_at as string).slice(11);
    await waitFor(new RegExp(`/resources/${measurement.resource_id}/measurements .* sampled ${sampled.replace(/\./g, '\\.')}:`), 'the line for the subscriber\'s measurement');
    const line = measurementLines().find((l) => l.resourceId === measurement.resource_id && l.sampled === sampled)!;
    expect([...line.metrics.keys()]).toEqual(measurement.data.metrics.map((m: any) => m.name));
    for (const m of measurement.data.metrics) {
      expect(line.metrics.get(m.name)!.unit).toBe(m.unit);
      expect(Math.abs(line.metrics.get(m.name)!.value - m.value), `${m.name} ${m.value}`).toBeLessThanOrEqual(0.5);
    }
  });

  it('serves a forecast with its band on the recorded prices moved onto today, with the token it printed', { timeout: 120_000 }, async () => {
    const { http, priceForecast } = await printed();
    expect(out).toMatch(/prices {9}1344 real NL day-ahead prices of 2023-04-03\.\.2023-05-2\d moved onto/);
    await waitFor(/\*\* first forecast \(with its band\) over HTTP/, 'forecast');
    const { status, body } = await get(`${http}/api/v1/market_price_forecast?region=NL`, `Bearer ${priceForecast}`, '/api/v1/market_price_forecast');
    expect(status).toBe(200);
    const published = body.prices.filter((p: any) => p.price_per_mwh !== null);
    const forecast = body.prices.filter((p: any) => p.forecast !== null);
    // Today is priced (recorded), tomorrow on is forecast, each with a band around it.
    expect(published.length).toBeGreaterThanOrEqual(23);
    expect(forecast.length).toBeGreaterThanOrEqual(24 * 6);
    for (const p of forecast) expect(p.forecast_lower <= p.forecast && p.forecast <= p.forecast_upper, JSON.stringify(p)).toBe(true);
    expect(forecast.some((p: any) => p.forecast_upper - p.forecast_lower > 1)).toBe(true);
  });

  it('plans the car that arrived with a target, and its charger accepts the plan', { timeout: 120_000 }, async () => {
    const { http, cpo } = await printed();
    await waitFor(/\*\* first charging plan/, 'charging plan');
    const path = '/api/v1/chargers/CP-DEMO-1/connectors/1/plan';
    let plan: any;
    const until = Date.now() + 60_000;
    do {
      plan = (await get(`${http}${path}`, `Token ${cpo}`, '/api/v1/chargers/{charge_point_id}/connectors/{connector_id}/plan')).body;
      if (plan.charger_profile?.status === 'Accepted' || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 500));
    } while (true);
    expect(plan.energy_needed_wh).toBeGreaterThan(0);
    expect(plan.meets_target).toBe(true);
    expect(plan.planned.energy_wh).toBeCloseTo(plan.energy_needed_wh, -1);
    // A day ahead: the plan reads published prices and, past today, the forecast with its bounds.
    expect(Date.parse(plan.departure_time) - Date.now()).toBeGreaterThan(20 * 3_600_000);
    expect(plan.planned.periods.length).toBeGreaterThan(0);
    expect(plan.charger_profile).toMatchObject({ purpose: 'TxProfile', status: 'Accepted' });
  });

  it('prices the top-up session through GET /api/v1/cdrs with the token it printed', { timeout: 150_000 }, async () => {
    const { http, cdrs } = await printed();
    const [, cdrPath] = await waitFor(/priced session: GET (\/api\/v1\/cdrs\/ocpp:CP-DEMO-1:\d+) ->/, 'priced cdr', 140_000);
    const { status, body } = await get(`${http}${cdrPath}`, `Token ${cdrs}`, '/api/v1/cdrs/{cpo_transaction_id}');
    expect(status).toBe(200);
    // About 20 s at 11 kW: some 60 Wh at a recorded price (the cost rounds to 0 where that hour's price is near 0).
    expect(body.currency).toBe('EUR');
    expect(Number.isFinite(body.total_cost.excl_vat)).toBe(true);
    expect(Date.parse(body.end_date_time) - Date.parse(body.start_date_time)).toBeGreaterThanOrEqual(19_000);
    // The same session's outcome: the energy the car drew, the cost the cdr answers.
    const report = (await (await fetch(`${http}/status.json`)).json()) as any;
    const last = report.chargers[0].last_session;
    expect(last.session).toBe(cdrPath.split('/').pop());
    expect(last.energy_wh).toBeGreaterThan(50);
    expect(last.actual_cost).toBe(body.total_cost.excl_vat);
    expect(out).toMatch(/\*\* first priced cdr over HTTP: \d+\.\d s after start/);
  });

  it.skipIf(!CHROMIUM)('shows the measurements, the charger with its plan and priced session, and the forecast band on the status page', { timeout: 90_000 }, async () => {
    const { http } = await printed();
    await waitFor(/\*\* first priced cdr over HTTP/, 'priced cdr', 140_000);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1200 } });
      await page.goto(`${http}/status`);
      await page.waitForSelector('body[data-rendered]');
      expect(await page.locator('#meters tbody tr').count()).toBe(2);
      const charger = await page.locator('tr[data-charger="CP-DEMO-1"]').textContent();
      expect(charger).toContain('1: Charging');
      // The top-up's outcome: energy and cost.
      expect(charger).toMatch(/ocpp:CP-DEMO-1:\d+: 0[.,]\d+ kWh, -?\d+[.,]\d\d EUR/);
      await page.waitForSelector('tr[data-plan="CP-DEMO-1/1"]');
      const plan = await page.locator('tr[data-plan="CP-DEMO-1/1"]').textContent();
      expect(plan).toContain('30.0 kWh by');
      expect(plan).toContain('TxProfile Accepted');
      // The chart: tomorrow's forecast band is drawn.
      expect(await page.locator('#charts svg polygon.band').count()).toBeGreaterThan(0);
      const report = (await (await fetch(`${http}/status.json`)).json()) as any;
      expect(report.prices[0].periods.some((p: any) => p.forecast !== null && p.forecast_lower < p.forecast_upper)).toBe(true);
      expect(report.chargers[0].plans[0].charger_profile.status).toBe('Accepted');
    } finally {
      await browser.close();
    }
  });

  it('stops cleanly on SIGINT', { timeout: 30_000 }, async () => {
    child.kill('SIGINT');
    expect(await exited, out).toBe(0);
    expect(out).toMatch(/stopping; received \d+ measurement/);
  });
});
