// Starts the real HTTP module on a free port with a temp SQLite file, for integration tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import type { AppContext } from '../../src/context.js';
import { createContext } from '../../src/daemon.js';
import { buildChargingServices, type ChargingServices } from '../../src/planning/charging-services.js';
import type { HttpDeps, RouteRegistrar } from '../../src/http/deps.js';
import { HttpServer, type HttpServerOptions } from '../../src/http/server.js';
import { createLogger } from '../../src/log.js';
import { TokenStore, type TokenType } from '../../src/store/tokens.js';

export interface TestHttp {
  readonly ctx: AppContext;
  /** The charging planner and stores the server was given (pass them to a CentralSystem started beside it). */
  readonly charging: ChargingServices;
  readonly server: HttpServer;
  readonly url: string;
  /** Creates a live token of this type and returns its secret. */
  token(type: TokenType, name?: string): string;
  close(): Promise<void>;
}

export async function startTestHttp(opts: { config?: Record<string, unknown>; routes?: readonly RouteRegistrar[]; ctx?: Partial<AppContext>; server?: HttpServerOptions; centralSystem?: HttpDeps['centralSystem'] } = {}): Promise<TestHttp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'metergate-http-'));
  const config = validateConfig(
    {
      organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      data_dir: dataDir,
      log_level: 'fatal',
      ...opts.config,
      http: { port: 0, ...((opts.config?.http as object | undefined) ?? {}) },
    },
    'test',
    {},
  );
  const ctx = createContext(config, { logger: createLogger('silent'), ...opts.ctx });
  const charging = buildChargingServices(ctx);
  const server = new HttpServer({ ...ctx, charging, ...(opts.centralSystem ? { centralSystem: opts.centralSystem } : {}) }, { ...opts.server, ...(opts.routes ? { routes: opts.routes } : {}) });
  await server.start();
  const tokens = new TokenStore(ctx.db);
  return {
    ctx,
    charging,
    server,
    url: server.url(),
    token: (type, name = `test-${type}`) => tokens.create({ name, type, nowMs: Date.now() }).token,
    async close() {
      await server.stop();
      ctx.db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * One request with node:http, which (unlike fetch) can send a body with GET, as the
 * contract's GET /cdrs/meter_readings needs. Returns a fetch Response for convenience.
 */
export async function rawRequest(url: string, init: { method: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<Response> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    // A fresh connection per request (agent: false): the global agent keeps sockets alive, and
    // a test that blocks the event loop past the server's keepAliveTimeout (loading a year of
    // prices in-process) would reuse a socket the server has already closed (ECONNRESET).
    const req = request(url, { agent: false, method: init.method, headers: { ...init.headers, ...(init.body !== undefined ? { 'content-length': String(Buffer.byteLength(init.body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
        const status = res.statusCode ?? 0;
        const empty = status === 204 || status === 304 || init.method === 'HEAD';
        resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers }));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (init.body !== undefined) req.write(init.body);
    req.end();
  });
}
