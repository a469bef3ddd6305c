// Benchmark of session pricing over HTTP (not part of the test suite).
//   npx tsx scripts/bench/http-pricing.ts
// The servers run in a child process; this process is the client.
// 1. A one-week session of 10-s readings (60,480 readings, ~3.4 MB JSON) priced with
//    POST /api/v1/cdrs/meter_readings against real NL prices (quarter-hour periods):
//    latency median and p95 of sequential requests. Target: median < 100 ms.
// 2. Requests/s of a one-hour session (360 readings) against a bare express JSON echo
//    route measured in the same run with the same client; target ratio >= 0.5.
import express from 'express';
import { mkdtempSync, rmSync } from 'node:fs';
import { fork } from 'node:child_process';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateConfig } from '../../src/config/load.js';
import { createContext } from '../../src/daemon.js';
import { buildChargingServices } from '../../src/planning/charging-services.js';
import { HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log.js';
import { TokenStore } from '../../src/store/tokens.js';
import { loadNl2025Prices } from '../../test/helpers/real-prices.js';
import { hasSharedData, SKIP_REASON } from '../../test/helpers/shared-data.js';

if (!hasSharedData) {
  console.error(SKIP_REASON);
  process.exit(2);
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function post(url: string, body: string | Buffer, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function sessionBody(fromIso: string, count: number): string {
  const fromMs = Date.parse(fromIso);
  const readings = Array.from({ length: count }, (_, i) => ({ reading_kwh: Math.round((1234.5 + (i * 11) / 360) * 1000) / 1000, timestamp: new Date(fromMs + i * 10_000).toISOString() }));
  return JSON.stringify({ power_market: { market_area_code: 'NL', sub_modality: 'DayAhead' }, meter_readings: readings });
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

/** Requests/s with `concurrency` in flight for `durationMs`. */
async function throughput(url: string, body: string | Buffer, headers: Record<string, string>, durationMs: number, concurrency: number): Promise<number> {
  let done = 0;
  const until = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const res = await post(url, body, headers);
        if (res.status !== 200) throw new Error(`status ${res.status}: ${res.text.slice(0, 200)}`);
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

interface Served {
  url: string;
  echoUrl: string;
  token: string;
  periods: number;
}

/** The servers under test run in a child process, so the load generator does not share their event loop. */
async function serve(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'metergate-bench-'));
  const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: dataDir, http: { port: 0 } }, 'bench', {});
  const ctx = createContext(config, { logger: createLogger('warn') });
  const periods = loadNl2025Prices(ctx.db);
  const server = new HttpServer({ ...ctx, charging: buildChargingServices(ctx) });
  await server.start();
  const token = new TokenStore(ctx.db).create({ name: 'bench', type: 'cdrs', nowMs: Date.now() }).token;
  // Baseline: a bare express app, JSON body parser + echo, same body limit.
  const echoApp = express();
  echoApp.post('/echo', express.json({ limit: config.http.body_limit_bytes }), (req, res) => {
    res.json(req.body);
  });
  // Baseline for the week: receive and parse the same body, answer a few bytes.
  echoApp.post('/parse', express.json({ limit: config.http.body_limit_bytes }), (req, res) => {
    res.json({ readings: (req.body as { meter_readings: unknown[] }).meter_readings.length });
  });
  const echo = createServer(echoApp);
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const served: Served = { url: `${server.url()}/api/v1/cdrs/meter_readings`, echoUrl: `http://127.0.0.1:${(echo.address() as AddressInfo).port}/echo`, token, periods };
  process.on('message', (m) => {
    if (m === 'cpu?') process.send!({ cpu: process.cpuUsage() });
  });
  process.send!(served);
  process.once('disconnect', () => {
    void server.stop().then(() => {
      echo.close();
      ctx.db.close();
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

if (process.argv.includes('--serve')) {
  await serve();
} else {
const child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'] });
const { url, echoUrl, token, periods } = await new Promise<Served>((resolve, reject) => {
  child.once('message', (m) => resolve(m as Served));
  child.once('exit', (code) => reject(new Error(`server process exited ${code}`)));
});
const auth = { authorization: `Token ${token}` };

console.log(`node ${process.version}, ${periods} real NL 2025 price periods loaded; servers in child process ${child.pid}`);

// 1. One week at 10 s (quarter-hour prices: 672 periods in the window).
// Encoded once: the client should spend as little CPU as it can on a 2-core machine.
const week = Buffer.from(sessionBody('2025-11-10T00:00:00Z', 60_480));
const first = await post(url, week, auth);
console.log(`week: ${(week.length / 1e6).toFixed(2)} MB request -> ${first.status} ${first.text}`);
for (let i = 0; i < 3; i++) await post(url, week, auth); // warm-up
/** Server-side seconds and count so far for the meter_readings route, from /metrics. */
async function serverTime(): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(url.replace('/api/v1/cdrs/meter_readings', '/metrics'))).text();
  const pick = (name: string) => {
    const line = text.split('\n').find((l) => l.startsWith(name) && l.includes('route="/api/v1/cdrs/meter_readings"') && l.includes('method="POST"'));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  return { sum: pick('metergate_http_request_duration_seconds_sum'), count: pick('metergate_http_request_duration_seconds_count') };
}
const before = await serverTime();
const parseUrl = echoUrl.replace('/echo', '/parse');
const latencies: number[] = [];
const parseOnly: number[] = [];
// Interleaved with the baseline, so both see the same background load.
for (let i = 0; i < 30; i++) {
  let t0 = performance.now();
  const res = await post(url, week, auth);
  latencies.push(performance.now() - t0);
  if (res.status !== 200) throw new Error(res.text);
  t0 = performance.now();
  await post(parseUrl, week, {});
  parseOnly.push(performance.now() - t0);
}
const after = await serverTime();
const serverMeanMs = ((after.sum - before.sum) / Math.max(1, after.count - before.count)) * 1000;
const parseMedian = quantile(parseOnly, 0.5);
const median = quantile(latencies, 0.5);

/** CPU time the server process spends per request (user + system), less sensitive to other load than wall time. */
async function cpuPerRequestMs(target: string, body: Buffer, headers: Record<string, string>, n: number): Promise<number> {
  const cpu = () =>
    new Promise<NodeJS.CpuUsage>((resolve) => {
      child.once('message', (m) => resolve((m as { cpu: NodeJS.CpuUsage }).cpu));
      child.send('cpu?');
    });
  const c0 = await cpu();
  for (let i = 0; i < n; i++) await post(target, body, headers);
  const c1 = await cpu();
  return (c1.user - c0.user + c1.system - c0.system) / 1000 / n;
}
const cpuOurs = await cpuPerRequestMs(url, week, auth, 15);
const cpuBase = await cpuPerRequestMs(parseUrl, week, {}, 15);
console.log(`week server CPU per request: metergate ${cpuOurs.toFixed(1)} ms, bare express receive + parse ${cpuBase.toFixed(1)} ms`);
console.log(`week baseline (bare express: receive + JSON.parse the same body): median ${parseMedian.toFixed(1)} ms`);
console.log(`week (60,480 readings): median ${median.toFixed(1)} ms, p95 ${quantile(latencies, 0.95).toFixed(1)} ms over ${latencies.length} requests (server-side mean ${serverMeanMs.toFixed(1)} ms; ${(median / parseMedian).toFixed(2)} x the baseline) -> ${median < 100 ? 'PASS' : 'FAIL'} (< 100 ms)`);

// 2. One hour at 10 s, requests/s vs the echo baseline (alternating rounds, best of each).
const hour = Buffer.from(sessionBody('2025-06-02T10:00:00Z', 360));
console.log(`hour: ${(hour.length / 1e3).toFixed(1)} kB request -> ${(await post(url, hour, auth)).text}`);
await throughput(echoUrl, hour, {}, 500, 8);
await throughput(url, hour, auth, 500, 8);
const ours: number[] = [];
const base: number[] = [];
// Short alternating rounds, best of each: on a shared machine other load comes in bursts.
for (let round = 0; round < 8; round++) {
  base.push(await throughput(echoUrl, hour, {}, 750, 8));
  ours.push(await throughput(url, hour, auth, 750, 8));
}
const oursBest = Math.max(...ours);
const baseBest = Math.max(...base);
// Paired rounds: the median of per-round ratios is robust to bursts of other load.
const ratio = quantile(ours.map((o, i) => o / base[i]), 0.5);
console.log(`hour (360 readings): metergate ${oursBest.toFixed(0)} req/s, bare express echo ${baseBest.toFixed(0)} req/s (best of ${ours.length} alternating rounds); ratio ${ratio.toFixed(2)} (median of the paired rounds) -> ${ratio >= 0.5 ? 'PASS' : 'FAIL'} (>= 0.5)`);

agent.destroy();
child.disconnect();
await new Promise((resolve) => child.once('exit', resolve));
process.exit(median < 100 && ratio >= 0.5 ? 0 : 1);
}
