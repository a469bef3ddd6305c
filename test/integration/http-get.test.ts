// The price platform's HTTP client (src/prices/sources/http-get.ts) against a real HTTP
// server: what fetch() did for it before (redirects, compressed bodies, UTF-8 with a BOM,
// a body cut short as an error, the abort signal).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGet } from '../../src/prices/sources/http-get.js';

const XML = '<?xml version="1.0" encoding="UTF-8"?><Publication_MarketDocument>€ 12,34</Publication_MarketDocument>';
let server: Server;
let base: string;
const seen: Array<Record<string, string | string[] | undefined>> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/gzip') return res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(XML));
    if (path === '/deflate') return res.writeHead(200, { 'content-encoding': 'deflate' }).end(deflateSync(XML));
    if (path === '/br') return res.writeHead(200, { 'content-encoding': 'br' }).end(brotliCompressSync(XML));
    if (path === '/bom') return res.writeHead(200).end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(XML)]));
    if (path === '/moved') return res.writeHead(302, { location: '/gzip?again=1' }).end();
    if (path === '/loop') return res.writeHead(307, { location: '/loop' }).end();
    if (path === '/busy') return res.writeHead(429, { 'retry-after': '120' }).end('slow down');
    if (path === '/cut') {
      const body = Buffer.from(XML);
      res.writeHead(200, { 'content-length': String(body.length) });
      return res.write(body.subarray(0, 20), () => res.destroy());
    }
    if (path === '/cut-gzip') {
      const body = gzipSync(XML);
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(body.length) });
      return res.write(body.subarray(0, 20), () => res.destroy());
    }
    if (path === '/hold') return; // never answers
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const get = (path: string, signal = AbortSignal.timeout(10_000)) => httpGet(new URL(path, base), { signal, headers: { accept: 'application/xml' } });

describe('httpGet', () => {
  it('decodes gzip, deflate and brotli bodies as UTF-8 and asks for them', async () => {
    for (const path of ['/gzip', '/deflate', '/br']) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(XML);
    }
    expect(seen.at(-1)).toMatchObject({ accept: 'application/xml', 'accept-encoding': 'gzip, deflate, br' });
  });

  it('drops a byte order mark', async () => {
    expect(await (await get('/bom')).text()).toBe(XML);
  });

  it('follows redirects, and gives up on a loop', async () => {
    expect(await (await get('/moved')).text()).toBe(XML);
    await expect(get('/loop')).rejects.toThrow(/redirects/);
  });

  it('gives the status and headers of an error answer', async () => {
    const res = await get('/busy');
    expect(res.status).toBe(429);
    expect(res.header('Retry-After')).toBe('120');
    expect(res.header('x-none')).toBeNull();
    res.discard();
  });

  it('rejects a body cut short, plain or compressed', async () => {
    await expect((await get('/cut')).text()).rejects.toThrow(/truncated body/);
    await expect((await get('/cut-gzip')).text()).rejects.toThrow(/truncated body/);
  });

  it('ends a request when its signal aborts', async () => {
    const signal = AbortSignal.timeout(200);
    await expect(get('/hold', signal)).rejects.toMatchObject({ name: 'AbortError' });
  });
});
