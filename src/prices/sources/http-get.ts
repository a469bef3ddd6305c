// One HTTP(S) GET with node:http/node:https, for the price platform's requests. Not fetch():
// on the bundled Node 24 the first fetch() loads undici and compiles its llhttp WebAssembly,
// 23 MB more resident memory than the same requests through node:https (+27.5 MB against
// +4.2 MB, measured: docs/architecture.md, Memory), for a daemon that sends a few requests a
// day. What fetch() did that the client relies on is kept: redirects followed, gzip/deflate/
// brotli bodies decoded, UTF-8 text (a BOM dropped), a body cut short is an error.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';

export interface HttpAnswer {
  readonly status: number;
  /** A response header (case-insensitive), or null. */
  header(name: string): string | null;
  /** The body as UTF-8 text; rejects when the connection drops before its end. */
  text(): Promise<string>;
  /** The body is not wanted: the connection is closed. */
  discard(): void;
}

export type HttpGet = (url: URL, init: { readonly signal: AbortSignal; readonly headers: Readonly<Record<string, string>> }) => Promise<HttpAnswer>;

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export const httpGet: HttpGet = (url, init) => get(url, init, 0);

async function get(url: URL, init: Parameters<HttpGet>[1], redirects: number): Promise<HttpAnswer> {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : url.protocol === 'http:' ? httpRequest : null;
    if (!send) return reject(new TypeError(`unsupported protocol ${url.protocol}`));
    const req = send(url, { method: 'GET', signal: init.signal, headers: { ...init.headers, 'accept-encoding': 'gzip, deflate, br' } }, resolve);
    req.once('error', reject);
    req.end();
  });
  const location = res.headers.location;
  if (REDIRECTS.has(res.statusCode ?? 0) && location) {
    res.destroy();
    if (redirects >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
    return get(new URL(location, url), init, redirects + 1);
  }
  return {
    status: res.statusCode ?? 0,
    header: (name) => {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
    text: () => readText(res),
    discard: () => res.destroy(),
  };
}

function decoded(res: IncomingMessage): Readable {
  const encoding = (res.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : null;
  if (!decoder) return res;
  res.once('error', (err) => decoder.destroy(err));
  res.once('close', () => {
    if (!res.complete) decoder.destroy(new Error('the connection closed before its end'));
  });
  return res.pipe(decoder);
}

function readText(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const body = decoded(res);
    const chunks: Buffer[] = [];
    let ended = false;
    body.on('data', (c: Buffer) => chunks.push(c));
    body.once('error', (err) => reject(new Error(`truncated body (${err.message})`)));
    body.once('end', () => {
      ended = true;
      if (!res.complete) return reject(new Error('truncated body (the connection closed before its end)'));
      const text = Buffer.concat(chunks).toString('utf8');
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    });
    res.once('close', () => {
      if (!ended && !res.complete) reject(new Error('truncated body (the connection closed before its end)'));
    });
  });
}
