import type { Router } from 'express';
import type { RouteDeps } from '../deps.js';

/** GET /metrics: every metric of the context's registry in Prometheus text format. */
export function registerMetricsRoutes(router: Router, deps: RouteDeps): void {
  router.get('/metrics', async (_req, res, next) => {
    try {
      const text = await deps.metrics.metrics();
      res.status(200).set('Content-Type', deps.metrics.contentType).set('Cache-Control', 'no-store').send(text);
    } catch (err) {
      next(err);
    }
  });
}
