// Every route the app registers is in the OpenAPI document, and every documented path is served.
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { createContext } from '../../src/daemon.js';
import { buildChargingServices } from '../../src/planning/charging-services.js';
import { createApp } from '../../src/http/app.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { createLogger } from '../../src/log.js';
import { openDatabase } from '../../src/store/db.js';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

function routesOf(stack: Layer[], out: string[] = []): string[] {
  for (const layer of stack) {
    if (layer.route) {
      for (const [method, on] of Object.entries(layer.route.methods)) if (on && method !== '_all') out.push(`${method.toUpperCase()} ${layer.route.path}`);
    } else if (layer.handle?.stack) routesOf(layer.handle.stack, out);
  }
  return out;
}

describe('openapi.json covers the app', () => {
  it('documents every registered route (static assets aside) and nothing that is not served', () => {
    const config = validateConfig({ organization_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', data_dir: '/nonexistent' }, 'test', {});
    const db = openDatabase(':memory:');
    const ctx = createContext(config, { db, logger: createLogger('silent') });
    const app = createApp({ ...ctx, charging: buildChargingServices(ctx) });
    const served = routesOf((app as unknown as { router: { stack: Layer[] } }).router.stack)
      .filter((r) => !/\.(js|css|svg)$/.test(r))
      .map((r) => r.replace(/:(\w+)/g, '{$1}'));
    const documented = Object.entries(openApiDocument.paths).flatMap(([path, item]) =>
      Object.keys(item as object).filter((k) => ['get', 'put', 'post', 'delete', 'patch'].includes(k)).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const forecastServed = served.some((r) => r.includes('market_price_forecast'));
    expect(served.filter((r) => !documented.includes(r))).toEqual([]);
    expect(documented.filter((r) => !served.includes(r) && (forecastServed || !r.includes('market_price_forecast')))).toEqual([]);
    db.close();
  });
});
