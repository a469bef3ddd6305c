// Requests Node's HTTP layer would answer itself (bad framing, huge headers, timeouts,
// CONNECT, Expect, no Host), sent as raw bytes over TCP to the real server: every answer
// is application/problem+json. And the body edges: valid JSON of the wrong type, charsets.
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { rawRequest, startTestHttp, type TestHttp } from '../helpers/http.js';
import { expectDocumented } from '../helpers/openapi.js';

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Everything the server sent on the connection. */
  readonly raw: string;
}

/**
 * Writes `chunks` on a fresh TCP connection, each after the server has answered the one
 * before (keep-alive, not pipelined), and reads until the server closes it. `holdOpen`
 * keeps our side open after the last write (for timeouts).
 */
function exchange(port: number, chunks: ReadonlyArray<string | Buffer>, opts: { holdOpen?: boolean } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let next = 0;
    const writeNext = () => {
      socket.write(chunks[next++]);
      if (next === chunks.length && !opts.holdOpen) socket.end();
    };
    socket.on('data', (d: Buffer) => {
      received.push(d);
      if (next < chunks.length) writeNext();
    });
    socket.on('error', reject);
    socket.on('connect', writeNext);
    socket.on('close', () => {
      const raw = Buffer.concat(received).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      if (split < 0) {
        resolve({ status: 0, headers: {}, body: '', raw });
        return;
      }
      const [statusLine, ...headerLines] = raw.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: raw.slice(split + 4), raw });
    });
  });
}

/** The answer is one complete problem+json response whose status is `status`. */
function expectRawProblem(answer: RawAnswer, status: number): Record<string, unknown> {
  expect(answer.status, answer.raw.slice(0, 300)).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  const problem = JSON.parse(answer.body) as Record<string, unknown>;
  expect(problem).toMatchObject({ status, type: expect.stringMatching(/^https:\/\//), title: expect.any(String), detail: expect.any(String) });
  return problem;
}

describe('requests the HTTP parser refuses get problem+json', () => {
  let http: TestHttp;
  let port: number;
  let auth: string;
  const logLines: string[] = [];
  const SECRET = 'mg_abcdefghij_' + 'S'.repeat(43);

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    http = await startTestHttp({
      ctx: { logger: createLogger('debug', sink) },
      // Short limits so a 408 comes quickly; Node checks them every 100 ms here.
      server: { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, timeoutCheckIntervalMs: 100 },
    });
    port = http.server.address().port;
    auth = `Authorization: Token ${http.token('cdrs')}\r\n`;
  });
  afterAll(async () => {
    await http?.close();
  });

  it('headers over 16 KB: 431, and the refused bytes (with a token) are not logged', async () => {
    const answer = await exchange(port, [`GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Token ${SECRET}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    const problem = expectRawProblem(answer, 431);
    expect(problem.detail).toMatch(/16 KB/);
    expect(answer.headers.connection).toBe('close');
    expect(logLines.some((l) => l.includes('refused by the parser'))).toBe(true);
    expect(logLines.join('')).not.toContain(SECRET);
  });

  it('bad framing: Content-Length with Transfer-Encoding, a broken chunk size, a bad method, a bad version: 400', async () => {
    const both = await exchange(port, ['POST /api/v1/cdrs/meter_readings HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n']);
    expect(expectRawProblem(both, 400).detail).toMatch(/not valid HTTP\/1\.1: Transfer-Encoding can't be present with Content-Length/);
    const chunk = await exchange(port, [`POST /api/v1/cdrs/meter_readings HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`]);
    expectRawProblem(chunk, 400);
    expectRawProblem(await exchange(port, ['G@T /healthz HTTP/1.1\r\nHost: x\r\n\r\n']), 400);
    expectRawProblem(await exchange(port, ['GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n']), 400);
    const h2 = await exchange(port, ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n']);
    expect(expectRawProblem(h2, 400).detail).toMatch(/HTTP\/2 is not supported/);
  });

  it('a parser error after a good request on the same connection: the first answer, then a problem', async () => {
    const answer = await exchange(port, ['GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX: ' + 'b'.repeat(20_000) + '\r\n\r\n']);
    expect(answer.status).toBe(200);
    const second = answer.raw.slice(answer.raw.indexOf('HTTP/1.1 431'));
    expect(second).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(second).toContain('Content-Type: application/problem+json');
  });

  it('headers that do not arrive in time: 408 naming the limit', async () => {
    const started = Date.now();
    const answer = await exchange(port, ['GET /healthz HTTP/1.1\r\nHost: x\r\n'], { holdOpen: true });
    const problem = expectRawProblem(answer, 408);
    expect(problem.detail).toContain('headers within 1 s');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it('a body that does not arrive in time (after auth): 408', async () => {
    const answer = await exchange(port, [`POST /api/v1/cdrs/meter_readings HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`], { holdOpen: true });
    expectRawProblem(answer, 408);
  });

  it('CONNECT: 405 with Allow, not a closed socket', async () => {
    const answer = await exchange(port, ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'], { holdOpen: true });
    const problem = expectRawProblem(answer, 405);
    expect(problem.detail).toMatch(/not a proxy/);
    expect(answer.headers.allow).toBe('GET, HEAD, POST, PUT');
  });

  it('an Expect other than 100-continue: 417', async () => {
    const answer = await exchange(port, ['GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: tea\r\n\r\n']);
    expectRawProblem(answer, 417);
  });

  it('HTTP/1.1 without Host: 400 problem; HTTP/1.0 without Host is fine', async () => {
    const problem = expectRawProblem(await exchange(port, ['GET /healthz HTTP/1.1\r\n\r\n']), 400);
    expect(problem.errors).toEqual([{ path: 'Host', message: 'is required' }]);
    const old = await exchange(port, ['GET /healthz HTTP/1.0\r\n\r\n']);
    expect(old.status).toBe(200);
  });

  it('every such answer is counted (route "unparsed")', async () => {
    const text = await http.ctx.metrics.getSingleMetricAsString('metergate_http_requests_total');
    for (const status of [400, 405, 408, 417, 431]) expect(text).toMatch(new RegExp(`method="OTHER",route="unparsed",status="${status}"`));
  });
});

describe('JSON body edges on the real routes', () => {
  let http: TestHttp;
  let token: string;
  const MR = '/api/v1/cdrs/meter_readings';
  beforeAll(async () => {
    http = await startTestHttp();
    token = http.token('cdrs');
  });
  afterAll(async () => {
    await http?.close();
  });
  const post = (body: string | Buffer, contentType = 'application/json') =>
    rawRequest(`${http.url}${MR}`, { method: 'POST', headers: { authorization: `Token ${token}`, 'content-type': contentType }, body });

  it('valid JSON of the wrong type (null, a number, a string, true) is 422 naming its type, not "not valid JSON"', async () => {
    for (const [body, name] of [['null', 'null'], [' 42 ', 'a number'], ['"x"', 'a string'], ['true', 'a boolean']]) {
      const res = await post(body);
      const problem = (await res.json()) as { detail: string; errors: unknown };
      expect(res.status, body).toBe(422);
      expect(problem.detail).toBe(`the request body is valid JSON but ${name}; it must be a JSON object`);
      expect(problem.errors).toEqual([{ path: '(body)', message: 'must be object' }]);
      expectDocumented('POST', MR, res, problem);
    }
  });

  it('broken JSON stays 400 "not valid JSON"', async () => {
    for (const body of ['nul', '{"a":', '   ', '42 43']) {
      const res = await post(body);
      const problem = (await res.json()) as { detail: string };
      expect(res.status, body).toBe(400);
      expect(problem.detail).toMatch(/^request body is not valid JSON/);
      expectDocumented('POST', MR, res, problem);
    }
  });

  it('charset other than UTF-8 is 415 (UTF-16 is not decoded); utf-8 is accepted', async () => {
    const json = JSON.stringify({ power_market: { market_area_code: 'NL', sub_modality: 'DayAhead' }, meter_readings: [] });
    for (const [charset, body] of [['utf-16', Buffer.from('\ufeff' + json, 'utf16le')], ['UTF-16LE', Buffer.from(json, 'utf16le')], ['iso-8859-1', json], ['utf8', json], ['""', json]] as const) {
      const res = await post(body, `application/json; charset=${charset}`);
      const problem = (await res.json()) as { detail: string; errors: unknown };
      expect(res.status, charset).toBe(415);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(problem.detail).toMatch(/is not supported; send UTF-8 JSON/);
      expect(problem.errors).toEqual([{ path: 'Content-Type', message: 'charset must be utf-8' }]);
      expectDocumented('POST', MR, res, problem);
    }
    // UTF-8 passes the media-type checks and reaches validation (422: too few readings).
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"']) {
      const res = await post(json, type);
      expect(res.status, type).toBe(422);
    }
  });
});
