// Prometheus hook for every HTTP request: counts by route and status, latency by route.
// Route labels are the registered route pattern (never the raw path) so cardinality stays bounded.
import type { Request, RequestHandler } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Logger } from '../log.js';

function getOrCreate<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

/** The route pattern that handled the request, e.g. `/api/v1/cdrs/:cpo_transaction_id`, or `unmatched`. */
export function routeLabel(req: Request): string {
  const route = (req as Request & { route?: { path?: unknown } }).route;
  return route && typeof route.path === 'string' ? `${req.baseUrl}${route.path}` : 'unmatched';
}

/** metergate_http_requests_total: every answer, including those written before express (route "unparsed"). */
export function httpRequestsCounter(registry: Registry): Counter<'method' | 'route' | 'status'> {
  return getOrCreate(registry, 'metergate_http_requests_total', () =>
    new Counter({ name: 'metergate_http_requests_total', help: 'HTTP requests answered, by method, route and status', labelNames: ['method', 'route', 'status'] as const, registers: [registry] }),
  );
}

/** Counts and times every request; with a logger, also a debug access line (never headers). */
export function httpMetrics(registry: Registry, logger?: Logger): RequestHandler {
  const requests = httpRequestsCounter(registry);
  const duration = getOrCreate(registry, 'metergate_http_request_duration_seconds', () =>
    new Histogram({
      name: 'metergate_http_request_duration_seconds',
      help: 'HTTP request duration until the response was sent, by method and route',
      labelNames: ['method', 'route'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  );
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const route = routeLabel(req);
      const method = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'].includes(req.method) ? req.method : 'OTHER';
      requests.inc({ method, route, status: String(res.statusCode) });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      duration.observe({ method, route }, seconds);
      logger?.debug({ method, route, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10 }, 'http request');
    });
    next();
  };
}
