// Starts the real HTTP module on a free port with a temp SQLite file, for integration tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import { createContext, type AppContext } from '../../src/daemon.js';
import type { RouteRegistrar } from '../../src/http/app.js';
import { HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log.js';
import { TokenStore, type TokenType } from '../../src/store/tokens.js';

export interface TestHttp {
  readonly ctx: AppContext;
  readonly server: HttpServer;
  readonly url: string;
  /** Creates a live token of this type and returns its secret. */
  token(type: TokenType, name?: string): string;
  close(): Promise<void>;
}

export async function startTestHttp(opts: { config?: Record<string, unknown>; routes?: readonly RouteRegistrar[]; ctx?: Partial<AppContext> } = {}): Promise<TestHttp> {
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
  const server = new HttpServer(ctx, opts.routes ? { routes: opts.routes } : {});
  await server.start();
  const tokens = new TokenStore(ctx.db);
  return {
    ctx,
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
