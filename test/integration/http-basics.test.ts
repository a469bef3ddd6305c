import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/http/app.js';
import type { RouteRegistrar } from '../../src/http/deps.js';
import { requireToken } from '../../src/http/auth.js';
import { HttpProblem, requireJsonBody } from '../../src/http/errors.js';
import { TokenStore } from '../../src/store/tokens.js';
import { startTestHttp, type TestHttp } from '../helpers/http.js';

/** Resolves when /test/slow has received its request (no guessing how long that takes on a loaded machine). */
let slowStarted: () => void = () => undefined;

// Test-only routes that exercise the shared middleware the real routes are built from.
const probeRoutes: RouteRegistrar = (router, deps) => {
  router.get('/test/token', requireToken(deps, { scheme: 'Token', type: 'cdrs' }), (req, res) => {
    res.json({ id: req.apiToken?.id });
  });
  router.get('/test/bearer', requireToken(deps, { scheme: 'Bearer', type: 'price_forecast' }), (_req, res) => {
    res.json({ ok: true });
  });
  router.post('/test/json', requireJsonBody, express.json({ limit: deps.config.http.body_limit_bytes }), (req, res) => {
    res.json({ got: req.body as unknown });
  });
  router.get('/test/boom', () => {
    throw new Error('secret internals');
  });
  router.get('/test/slow', (_req, res) => {
    slowStarted();
    setTimeout(() => res.json({ finished: true }), 300);
  });
  router.get('/test/problem', () => {
    throw new HttpProblem(409, 'not yet', { errors: [{ path: 'x', message: 'is busy' }] });
  });
};

async function expectProblem(res: Response, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ status, type: expect.any(String), title: expect.any(String), detail: expect.any(String) });
  expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
  return body;
}

describe('HTTP skeleton: health, problems, auth', () => {
  let http: TestHttp;
  beforeAll(async () => {
    http = await startTestHttp({ routes: [...ROUTES, probeRoutes], config: { http: { body_limit_bytes: 2048 } } });
  });
  afterAll(async () => {
    await http.close();
  });

  it('answers /healthz', async () => {
    const res = await fetch(`${http.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok' });
  });

  it('unknown routes are 404 problems', async () => {
    const body = await expectProblem(await fetch(`${http.url}/nope`), 404);
    expect(body.detail).toContain('/nope');
  });

  it('an unexpected error is a 500 problem without details', async () => {
    const body = await expectProblem(await fetch(`${http.url}/test/boom`), 500);
    expect(JSON.stringify(body)).not.toContain('secret internals');
  });

  it('renders HttpProblem with field errors', async () => {
    const body = await expectProblem(await fetch(`${http.url}/test/problem`), 409);
    expect(body.errors).toEqual([{ path: 'x', message: 'is busy' }]);
  });

  it('JSON body: broken 400, wrong type 415, none 400, too large 413', async () => {
    const post = (body: string, type?: string) =>
      fetch(`${http.url}/test/json`, { method: 'POST', body, headers: type ? { 'content-type': type } : {} });
    expect((await (await post('{"a":1}', 'application/json')).json())).toEqual({ got: { a: 1 } });
    await expectProblem(await post('{"a":', 'application/json'), 400);
    await expectProblem(await post('a=1', 'application/x-www-form-urlencoded'), 415);
    await expectProblem(await post('{"a":1}', 'text/plain'), 415);
    await expectProblem(await fetch(`${http.url}/test/json`, { method: 'POST' }), 400);
    await expectProblem(await post(JSON.stringify({ a: 'x'.repeat(5000) }), 'application/json'), 413);
  });

  it('auth: missing, unknown, wrong scheme -> 401 with WWW-Authenticate; wrong type -> 403', async () => {
    const cdrs = http.token('cdrs');
    const forecast = http.token('price_forecast');
    const get = (path: string, auth?: string) => fetch(`${http.url}${path}`, { headers: auth ? { authorization: auth } : {} });

    let res = await get('/test/token');
    await expectProblem(res, 401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Token realm="metergate"/);
    res = await get('/test/token', 'Token mg_aaaaaaaaaa_' + 'A'.repeat(43));
    await expectProblem(res, 401);
    res = await get('/test/token', `Bearer ${cdrs}`);
    await expectProblem(res, 401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Token /);
    res = await get('/test/bearer', `Token ${forecast}`);
    await expectProblem(res, 401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="metergate"/);
    await expectProblem(await get('/test/token', `Token ${forecast}`), 403);
    await expectProblem(await get('/test/bearer', `Bearer ${cdrs}`), 403);

    res = await get('/test/token', `Token ${cdrs}`);
    expect(res.status).toBe(200);
    expect((await get('/test/token', `token ${cdrs}`)).status).toBe(200);
    expect((await get('/test/bearer', `Bearer ${forecast}`)).status).toBe(200);

    const store = new TokenStore(http.ctx.db);
    const id = /^mg_([a-z0-9]{10})_/.exec(cdrs)![1];
    expect(store.revoke(id, Date.now())).toBe(1);
    await expectProblem(await get('/test/token', `Token ${cdrs}`), 401);
  });

  it('counts requests by route and status', async () => {
    const text = await http.ctx.metrics.getSingleMetricAsString('metergate_http_requests_total');
    expect(text).toMatch(/route="\/healthz",status="200"/);
    expect(text).toMatch(/route="unmatched",status="404"/);
  });
});

describe('graceful shutdown', () => {
  it('finishes in-flight requests, then refuses new connections', async () => {
    const http = await startTestHttp({ routes: [...ROUTES, probeRoutes] });
    const started = new Promise<void>((resolve) => (slowStarted = resolve));
    const inFlight = fetch(`${http.url}/test/slow`);
    await started; // the request is in the server's hands before it starts to stop
    const closing = http.server.stop();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ finished: true });
    await closing;
    await expect(fetch(`${http.url}/healthz`)).rejects.toThrow();
    await http.close();
  });
});
